// Where work on sqlite source files runs: in worker threads, never on the event loop, because a
// source file is untrusted and better-sqlite3 can neither interrupt a statement nor run it
// asynchronously (a huge row or millions of matching rows would freeze every request). Each file is
// pinned to one worker (its handle lives there); an operation not answered within `timeoutMs` is
// answered 503 + Retry-After and its worker is terminated, failing the operations queued behind it
// (none of them ran); the slow file itself is answered 503 at once for the next 30 s. Handles
// unused for `idleMs` are closed, so thousands of sources never hold thousands of descriptors. If
// workers cannot start (twice), files are handled inline.
// Figures behind the choice: docs/sqlite-sources.md.
import { Worker } from 'node:worker_threads';
import { unavailable } from '../../errors';
import type { Logger } from '../../lib/log';
import { createFileRunner, fromWireError, type FileOp, type FileRunner, type OpResult } from './runner';
import { sqliteWorkerCode } from './worker-code';

export interface SqlitePoolOptions {
  /** ms an operation may take before 503 (default 5000) */
  timeoutMs?: number;
  /** ms after which an unused handle is closed (default 60 s) */
  idleMs?: number;
  /** worker threads at most (default 2); 0 runs every file inline (tests of the store itself) */
  workers?: number;
  nativeBinding?: unknown;
  /** the file the binding was loaded from (the executable), for the worker threads */
  nativeBindingPath?: string;
  log?: Logger;
}

export interface SqlitePool {
  run(op: FileOp): Promise<unknown>;
  close(): Promise<void>;
}

interface Job {
  op: FileOp;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  timer: NodeJS.Timeout | null;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  jobs: Map<number, Job>;
  files: Set<string>;
}

/** ms a file whose operation timed out is answered 503 at once */
const REST_MS = 30_000;
/** workers that failed to start before source files are handled inline for good */
const MAX_START_FAILURES = 2;
// The row and read caps (sqlite/layout.ts) keep a worker's heap far below this; the limit is a
// backstop only: V8 may abort the whole process when one allocation cannot fit, so the caps matter.
const WORKER_LIMITS = { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 16 };

const fileKey = (op: FileOp) => `${op.mode}\u0000${op.file}`;

export function createSqlitePool(options: SqlitePoolOptions = {}): SqlitePool {
  const timeoutMs = options.timeoutMs ?? 5000;
  const idleMs = options.idleMs ?? 60_000;
  const maxWorkers = options.workers ?? 2;
  const slots: Slot[] = [];
  const pinned = new Map<string, Slot>();
  let inline: FileRunner | null = maxWorkers === 0 ? createFileRunner(options.nativeBinding) : null;
  let startFailures = 0;
  let nextId = 1;
  let closed = false;
  /** files whose operation timed out, until when they are answered 503 at once */
  const resting = new Map<string, number>();

  const sweeper = setInterval(
    () => {
      inline?.sweep(idleMs);
      for (const slot of slots) if (slot.ready) slot.worker.postMessage({ sweep: idleMs });
    },
    Math.max(50, Math.min(idleMs / 2, 10_000)),
  );
  sweeper.unref();

  function tooSlow(retryAfterMs = REST_MS): Error {
    return unavailable(
      'The database source took too long to answer, retry later',
      Math.max(1, Math.ceil(retryAfterMs / 1000)),
    );
  }

  function startTimer(slot: Slot, job: Job): void {
    job.timer = setTimeout(() => {
      // A terminated worker stops only at its next JavaScript step: retrying the same file at once
      // could pile up threads still busy in SQLite, so the file rests for a while.
      resting.set(fileKey(job.op), Date.now() + REST_MS);
      kill(slot, tooSlow());
    }, timeoutMs);
  }

  /** Ends a worker: every job it holds fails with `reason`, its files are pinned afresh next time. */
  function kill(slot: Slot, reason: Error): void {
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    for (const key of slot.files) if (pinned.get(key) === slot) pinned.delete(key);
    for (const job of slot.jobs.values()) {
      if (job.timer) clearTimeout(job.timer);
      job.reject(reason);
    }
    slot.jobs.clear();
    void slot.worker.terminate().catch(() => undefined);
    options.log?.warn('sqlite source worker stopped', { reason: reason.message });
  }

  function settle(slot: Slot, id: number, result: OpResult): void {
    const job = slot.jobs.get(id);
    if (!job) return;
    slot.jobs.delete(id);
    if (job.timer) clearTimeout(job.timer);
    if (slot.jobs.size === 0) slot.worker.unref();
    if (result.ok) job.resolve(result.value);
    else job.reject(fromWireError(result.error));
  }

  function spawn(): Slot | null {
    try {
      const nativeBindingPath = options.nativeBinding ? options.nativeBindingPath : undefined;
      const worker = new Worker(sqliteWorkerCode(), {
        eval: true,
        name: 'sqlite-sources',
        workerData: { nativeBindingPath },
        resourceLimits: WORKER_LIMITS,
      });
      const slot: Slot = { worker, ready: false, jobs: new Map(), files: new Set() };
      worker.on('message', (msg: { ready?: true; id?: number; result?: OpResult }) => {
        if (msg.ready) {
          slot.ready = true;
          startFailures = 0;
          for (const job of slot.jobs.values()) startTimer(slot, job);
        } else if (msg.id !== undefined && msg.result) settle(slot, msg.id, msg.result);
      });
      worker.on('error', (err) => {
        if (!slot.ready) return failedStart(slot, err);
        kill(slot, unavailable('The database source failed, retry later', 1));
      });
      worker.on('exit', () => {
        if (slots.includes(slot)) kill(slot, unavailable('The database source failed, retry later', 1));
      });
      worker.unref();
      slots.push(slot);
      return slot;
    } catch (err) {
      useInline(err as Error);
      return null;
    }
  }

  /** A worker that never became ready: its jobs never ran; after repeated failures they run inline. */
  function failedStart(slot: Slot, err: Error): void {
    if (++startFailures < MAX_START_FAILURES)
      return kill(slot, unavailable('The database source failed, retry later', 1));
    useInline(err);
    const jobs = [...slot.jobs.values()];
    slot.jobs.clear();
    kill(slot, unavailable('The database source failed, retry later', 1));
    for (const job of jobs) {
      if (job.timer) clearTimeout(job.timer);
      runInline(inline!, job.op).then(job.resolve, job.reject);
    }
  }

  function useInline(err: Error): void {
    if (inline) return;
    options.log?.error('sqlite source workers cannot run; handling source files inline', {
      error: err.message,
    });
    inline = createFileRunner(options.nativeBinding);
  }

  /** The file's worker: the one it is pinned to, a new one while below the cap, else the least busy. */
  function slotFor(op: FileOp): Slot | null {
    const key = fileKey(op);
    const current = pinned.get(key);
    if (current) return current;
    const slot =
      slots.length < maxWorkers
        ? spawn()
        : slots.reduce((a, b) => (b.files.size < a.files.size ? b : a), slots[0]!);
    if (!slot) return null;
    pinned.set(key, slot);
    slot.files.add(key);
    return slot;
  }

  /** Asks a worker to close its files (a sweep with no idle time), waiting a second at most. */
  function closeFiles(worker: Worker): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        resolve();
      };
      const onMessage = (msg: { open?: number }) => {
        if (msg.open !== undefined) done();
      };
      const timer = setTimeout(done, 1000);
      worker.on('message', onMessage);
      worker.postMessage({ sweep: 0 });
    });
  }

  function runInline(runner: FileRunner, op: FileOp): Promise<unknown> {
    const result = runner.run(op);
    return result.ok ? Promise.resolve(result.value) : Promise.reject(fromWireError(result.error));
  }

  return {
    run(op) {
      if (closed) return Promise.reject(unavailable('The service is stopping', 1));
      const restUntil = op.op === 'close' ? undefined : resting.get(fileKey(op));
      if (restUntil !== undefined) {
        if (Date.now() < restUntil) return Promise.reject(tooSlow(restUntil - Date.now()));
        resting.delete(fileKey(op));
      }
      const slot = inline ? null : slotFor(op);
      if (!slot) return runInline(inline!, op);
      const id = nextId++;
      return new Promise((resolve, reject) => {
        const job: Job = { op, resolve, reject, timer: null };
        slot.jobs.set(id, job);
        if (slot.ready) startTimer(slot, job);
        if (slot.jobs.size === 1) slot.worker.ref();
        // Only the plain write set crosses: merge state stays on this thread.
        slot.worker.postMessage({ id, op });
      });
    },

    async close() {
      closed = true;
      clearInterval(sweeper);
      inline?.closeAll();
      const stopping = slots.map(async (slot) => {
        for (const job of slot.jobs.values()) {
          if (job.timer) clearTimeout(job.timer);
          job.reject(unavailable('The service is stopping', 1));
        }
        slot.jobs.clear();
        if (slot.ready) await closeFiles(slot.worker);
        await slot.worker.terminate().catch(() => undefined);
      });
      slots.length = 0;
      pinned.clear();
      await Promise.all(stopping);
    },
  };
}
