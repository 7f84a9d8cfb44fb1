// The event loop's side of the metric writer (embedded/metric-writer.ts): one thread of its own per server,
// or (tests, the backup command) the writer in this thread.
//
// With a thread, the event loop appends each group commit to the write log itself (one writev)
// and acknowledges it at once; the logged points are then handed to the thread, which merges them
// in order. A commit costs no round trip to the thread. Reads ask on a port of their own, which the
// thread answers ahead of the merges queued before them, saying how far it had merged; the event
// loop keeps what it handed on until the thread says it merged it, and a read merges the rest of
// its own series itself (embedded/store.ts). The thread says how far it has merged, and the points
// handed on and not yet merged are bounded (past MAX_UNMERGED_POINTS appends wait for room, and answer 503 if none
// comes within MAX_ROOM_WAIT_MS), so a thread that falls behind is back pressure, not memory. If
// the thread dies, what it held fails with 503, the log is closed, and the next request starts a
// new thread, which replays the log first (nothing acknowledged is lost) and says where the event
// loop's appends go on.
import path from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { unavailable } from '../../errors';
import type { Logger } from '../../lib/log';
import type { Db } from '../../storage/db';
import { LogAppender } from './log';
import type { EmbeddedWriter } from './store';
import type { LoggedPoints } from '../../model/wire';
import { type PackedPart, type PendingSeries, type UnmergedAppend, unpackPart } from '../../model/row-delta';
import { MetricWriter, type MetricWriterOptions, logHead } from './metric-writer';
import { wirePointCount, wireToParts } from '../../model/point-wire';
import {
  KeyNumbers,
  type WireError,
  type WriterRequest,
  type WriterThreadData,
  errorFromWire,
} from './writer-protocol';
import { writerThreadCode } from './writer-thread-code';
import { SYSTEM_KEY } from '../../model/write-set';
import { hash53 } from '../../lib/key-hash';

const KEY_SLOTS = 4096;
/** keys of one source whose change marks are followed one by one (changeMark) */
const MAX_MARKED_KEYS = 1024;

/** A key's slot, from its hash53 (the line-protocol reader's, when a wire carries them). */
const slotOfHash = (hash: number) => (hash >>> 0) & (KEY_SLOTS - 1);
const keySlot = (key: string) => slotOfHash(hash53(key));

/** Whether the writer runs: what `GET /api/v1/health` tells a supervisor. */
export interface WriterStatus {
  /** `starting` (replaying the log), `running`, `restarting` (it stopped or did not start: retried with back-off) */
  state: 'starting' | 'running' | 'restarting' | 'closed';
  /** why it is not running (the last failure) */
  error?: string;
  /** the failure's code (SQLITE_FULL, ENOSPC, ...) */
  code?: string;
}

/** What the embedded store asks of the writer (its interface lives with the store, below the domain), and its state. */
export interface WriterPort extends EmbeddedWriter {
  pendingMany: NonNullable<EmbeddedWriter['pendingMany']>;
  status(): WriterStatus;
  /** Resolves once the writer has replayed the log; rejects with the reason when that failed. */
  whenStarted(): Promise<void>;
}

/** A writer that stopped, or could not start, is started again after this long, doubled per failure up to MAX_RESTART_MS. */
const FIRST_RESTART_MS = 500;
const MAX_RESTART_MS = 30_000;
/**
 * How long a stop waits for the writer to fold what is acknowledged. Past it (e.g. a fold that
 * keeps failing on a full disk) the thread is ended: every acknowledged point is in the write log,
 * which the next start replays.
 */
const CLOSE_FOLD_MS = 1_000;

/** Points logged and handed to the thread but not merged yet, beyond which appends wait. */
const MAX_UNMERGED_POINTS = 500_000;
/**
 * How long an append waits for the thread to merge enough to make room before it answers 503: a
 * short stall of the thread (a large fold, a checkpoint) slows clients down instead of failing them.
 */
const MAX_ROOM_WAIT_MS = 2_000;

/** The writer running in this thread, on the given connection. */
export function inProcessWriter(options: MetricWriterOptions): WriterPort {
  const writer = new MetricWriter(options);
  /** per source, commits made visible: this writer's change mark moves for every key of the source */
  const appended = new Map<string, number>();
  let applied = 0;
  return {
    status: () => ({ state: 'running' }),
    whenStarted: () => Promise.resolve(),
    async append(entries) {
      const sources = entries.map((e) => e.settings.id);
      await writer.append(entries);
      for (const id of sources) appended.set(id, (appended.get(id) ?? 0) + 1);
    },
    pending: async (...args) => writer.pending(...args),
    pendingMany: async (...args) => writer.pendingMany(...args),
    settle: () => writer.settle(),
    async apply(writes) {
      await writer.applyWriteSet(writes);
      applied++;
    },
    changeMark: (sourceId) => `${appended.get(sourceId) ?? 0}:${applied}`,
    close: () => writer.close(),
  };
}

type Reply =
  | { ready: true; lastSeq: number }
  | { log: ['debug' | 'info' | 'warn' | 'error', string, Record<string, unknown> | undefined] }
  | { failed: true; error: WireError }
  | { merged: number }
  | { folded: number }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: WireError };

interface Job {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Request = WriterRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/**
 * The log head of a source's settings: one text per settings object (the engine hands one object
 * per frozen source, never changed), not one JSON.stringify per append.
 */
const heads = new WeakMap<LoggedPoints['settings'], string>();
function headOf(settings: LoggedPoints['settings']): string {
  let head = heads.get(settings);
  if (head === undefined) heads.set(settings, (head = logHead(settings)));
  return head;
}

const pointsOf = (entries: readonly LoggedPoints[]) =>
  entries.reduce((n, e) => n + wirePointCount(e.wire), 0);

// Young generations sized for what the threads allocate, whatever the runtime's default (Node 24
// on a large machine picks several times more): the writer's windows and cache are columns that
// live long, what it allocates per request dies young (and frees the wires' buffers with it); the
// checkpointer allocates almost nothing.
const WRITER_LIMITS = { maxYoungGenerationSizeMb: 4 };
const CHECKPOINTER_LIMITS = { maxYoungGenerationSizeMb: 2 };

export interface WriterThreadOptions extends WriterThreadData {
  log?: Logger;
  /** points handed on and not merged yet beyond which appends wait for room (default MAX_UNMERGED_POINTS) */
  maxUnmergedPoints?: number;
}

/**
 * The writer on a thread of its own, opening `dbFile` itself, with the database's checkpointer on
 * another (embedded/writer-thread.ts): the writer's commits only append to the WAL.
 */
export function startWriterThread(options: WriterThreadOptions): WriterPort {
  const { log, maxUnmergedPoints = MAX_UNMERGED_POINTS, ...data } = options;
  const logDir = path.dirname(data.dbFile);
  const checkpointer = new Worker(writerThreadCode(), {
    eval: true,
    name: 'db-checkpointer',
    workerData: { ...data, role: 'checkpointer' },
    resourceLimits: CHECKPOINTER_LIMITS,
  });
  checkpointer.on('error', (err) => log?.error('database checkpointer failed', { error: err.message }));
  const checkpointerStopped = new Promise((resolve) => checkpointer.once('exit', resolve));
  checkpointer.unref();

  const jobs = new Map<number, Job>();
  let worker: Worker | null = null;
  /** this thread's appender to the log, once the writer has replayed it */
  let appender: LogAppender | null = null;
  let ready: Promise<LogAppender> = Promise.resolve(null as never);
  /**
   * Handed on, not merged yet, in order: the appends' last record numbers, points, and the points
   * themselves (copied to the thread, not moved), which a read merges itself (pending).
   */
  const unmerged: Array<UnmergedAppend & { points: number }> = [];
  /** appends logged in this turn of the event loop, not yet handed to their thread (handOn) */
  let handOff: { w: Worker; upTo: number; entries: LoggedPoints[] } | null = null;
  let unmergedPoints = 0;
  /** the running thread's key numbers (merges name keys by them) */
  let keyNumbers = new KeyNumbers();
  /** appends waiting for the thread to merge: woken by each merge report and when it stops */
  let waitingForRoom: Array<() => void> = [];
  let nextId = 1;
  /** the running thread's read port */
  let reads: MessagePort | null = null;
  /** the log is folded (committed) up to this record, as the thread last said; -1 before it started */
  let foldedUpTo = -1;
  /**
   * Per source: the last record of an append of its points. A series of a source whose last append
   * is folded is read without asking the thread. (Per key it would spare the round trip to more
   * reads, but a map of every key of every append cost the event loop about as much as the log's
   * writev under the live workload.)
   */
  const lastAppended = new Map<string, number>();
  /**
   * Per source: KEY_SLOTS slots, each the last append record of the keys that hash to it. A series
   * whose slot is folded is read without asking the thread even while other keys of its source are
   * written (a live workload on one source). Keys that share a slot only cost a round trip; the
   * system key changes with every append and is never skipped this way. A typed array and one
   * FNV-1a hash per distinct key of an append: a map of keys cost the event loop as much as the log.
   */
  const lastAppendedByKey = new Map<string, Float64Array>();
  /**
   * Per source: the keys whose change mark was asked for (kept answers, domain/metrics/answers.ts)
   * and their last append record, with a flag per slot holding one. Slots alone would do, but a
   * source written with more keys than slots (the live workload's 5,000) moves every slot all the
   * time, and a kept answer would never be current. An append looks the map up only for keys in a
   * flagged slot; at most MAX_MARKED_KEYS per source.
   */
  const markedKeys = new Map<string, { slots: Uint8Array; last: Map<string, number> }>();
  /** write sets applied outside the log (the store contract suite): each moves every change mark */
  let applied = 0;
  let closed = false;
  let status: WriterStatus = { state: 'starting' };
  /** the writer's failure to start or its exit, for whenStarted */
  let startFailure: Error | null = null;
  let restartMs = 0;
  /** a thread is not started again before this (performance.now()) */
  let restartAt = 0;
  let restartTimer: NodeJS.Timeout | null = null;

  /** After a failure: the next start after a back-off, also without requests (the log's points get folded). */
  function restartLater(error: string, code: string | undefined): void {
    restartMs = Math.min(restartMs === 0 ? FIRST_RESTART_MS : restartMs * 2, MAX_RESTART_MS);
    restartAt = performance.now() + restartMs;
    status = { state: 'restarting', error, ...(code ? { code } : {}) };
    if (restartTimer || closed) return;
    restartTimer = setTimeout(() => {
      restartTimer = null;
      if (!closed && !worker) worker = start();
    }, restartMs);
    restartTimer.unref();
  }

  /** The running thread, or a new one; 503 while a failed one waits for its back-off. */
  function current(): Worker {
    if (worker) return worker;
    if (performance.now() < restartAt) {
      throw unavailable(
        `The metric writer is not running (${status.error ?? 'stopped'}); retry`,
        Math.max(1, Math.ceil((restartAt - performance.now()) / 1000)),
      );
    }
    return (worker = start());
  }

  function failAll(reason: string): void {
    for (const [id, job] of jobs) {
      jobs.delete(id);
      job.reject(unavailable(`The metric writer stopped (${reason}); retry`, 1));
    }
  }

  function wakeWaiting(): void {
    if (waitingForRoom.length === 0) return;
    const waiting = waitingForRoom;
    waitingForRoom = [];
    for (const wake of waiting) wake();
  }

  const full = (points: number) => unmergedPoints > 0 && unmergedPoints + points > maxUnmergedPoints;

  /** Waits until `points` more fit in what the thread has not merged; 503 if it does not catch up in time. */
  async function roomFor(points: number): Promise<void> {
    const deadline = performance.now() + MAX_ROOM_WAIT_MS;
    while (full(points)) {
      const left = deadline - performance.now();
      if (left <= 0 || closed) throw unavailable('The metric writer is behind, retry later', 1);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waitingForRoom.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  function updateRef(w: Worker): void {
    if (jobs.size > 0 || unmerged.length > 0) w.ref();
    else w.unref(); // an idle writer does not keep the process alive
  }

  function start(): Worker {
    handOn(); // numbered for the thread they were logged for
    keyNumbers = new KeyNumbers(); // a new thread knows no key yet
    // Reads ask on a port of their own: the thread answers them ahead of the merges queued on its own.
    const channel = new MessageChannel();
    const w = new Worker(writerThreadCode(), {
      eval: true,
      name: 'metric-writer',
      workerData: { ...data, readPort: channel.port2 },
      transferList: [channel.port2],
      resourceLimits: WRITER_LIMITS,
    });
    reads = channel.port1;
    reads.on('message', (reply: Reply) => answered(w, reply));
    reads.unref(); // the thread's reference keeps the process alive while a read waits (send)
    let becomeReady!: (a: LogAppender) => void;
    let failStart!: (err: unknown) => void;
    ready = new Promise<LogAppender>((resolve, reject) => {
      becomeReady = resolve;
      failStart = reject;
    });
    ready.catch(() => undefined);
    let failedToStart = false;
    w.on('message', (reply: Reply) => {
      if ('log' in reply) {
        const [level, msg, fields] = reply.log;
        return log?.[level](msg, fields);
      }
      if ('ready' in reply) {
        try {
          appender = new LogAppender(logDir, reply.lastSeq);
        } catch (err) {
          // e.g. no room for the new segment: this thread's log is replayed again by the next one
          failedToStart = true;
          startFailure = err as Error;
          log?.error('metric writer did not start', {
            error: String((err as Error)?.message ?? err),
            code: (err as { code?: unknown }).code,
          });
          failStart(unavailable('The metric writer did not start; retry', 1));
          void w.terminate();
          return;
        }
        foldedUpTo = Math.max(foldedUpTo, reply.lastSeq); // the thread folded the log it replayed
        restartMs = 0;
        restartAt = 0;
        startFailure = null;
        status = { state: 'running' };
        return becomeReady(appender);
      }
      if ('failed' in reply) {
        failedToStart = true;
        startFailure = errorFromWire(reply.error);
        log?.error('metric writer did not start', {
          error: reply.error.message,
          ...(reply.error.app ? {} : { code: reply.error.code }),
        });
        return failStart(unavailable('The metric writer did not start; retry', 1));
      }
      if ('folded' in reply) {
        foldedUpTo = Math.max(foldedUpTo, reply.folded);
        return;
      }
      if ('merged' in reply) {
        let merged = 0;
        while (merged < unmerged.length && unmerged[merged]!.upTo <= reply.merged)
          unmergedPoints -= unmerged[merged++]!.points;
        unmerged.splice(0, merged);
        wakeWaiting();
        return updateRef(w);
      }
      answered(w, reply);
    });
    w.on('error', (err) => log?.error('metric writer failed', { error: err.message }));
    w.on('exit', (code) => {
      if (worker === w) worker = null;
      channel.port1.close();
      if (reads === channel.port1) reads = null;
      if (!closed) {
        log?.error('metric writer stopped', { code });
        const cause = failedToStart ? startFailure : null;
        startFailure ??= new Error(`the metric writer stopped (exit code ${code})`);
        restartLater(
          cause ? cause.message : `stopped (exit code ${code})`,
          (cause as { code?: string } | null)?.code,
        );
      }
      appender?.close(); // the next thread replays the log: nothing may append meanwhile
      appender = null;
      if (handOff?.w === w) handOff = null; // in the log, which the next thread replays
      unmerged.length = 0;
      unmergedPoints = 0;
      wakeWaiting();
      failStart(unavailable(`The metric writer stopped (exit code ${code}); retry`, 1));
      failAll(`exit code ${code}`);
    });
    w.unref();
    return w;
  }

  /** A request's answer (on the thread's port or the read port). */
  function answered(w: Worker, reply: Reply): void {
    if (!('id' in reply)) return;
    const job = jobs.get(reply.id);
    if (!job) return;
    jobs.delete(reply.id);
    updateRef(w);
    if (reply.ok) job.resolve(reply.value);
    else job.reject(errorFromWire(reply.error));
  }

  function send<T>(request: Request, transfer: ArrayBuffer[] = [], onReadPort = false): Promise<T> {
    if (closed) return Promise.reject(unavailable('The server is shutting down, retry later', 1));
    let w: Worker;
    try {
      w = current();
    } catch (err) {
      return Promise.reject(err);
    }
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      jobs.set(id, { resolve: resolve as (value: unknown) => void, reject });
      w.ref();
      if (onReadPort && reads) reads.postMessage({ ...request, id });
      else {
        handOn(); // the thread takes the appends logged before this request first
        w.postMessage({ ...request, id }, transfer);
      }
    });
  }

  /** Logs a commit (the acknowledgement) and hands its points to the thread to merge. */
  function appendNow(a: LogAppender, w: Worker, entries: LoggedPoints[], points: number): void {
    if (full(points)) throw unavailable('The metric writer is behind, retry later', 1);
    const upTo = a.append(entries.map((e) => ({ head: headOf(e.settings), body: wireToParts(e.wire) })));
    unmerged.push({ upTo, points, entries });
    for (const { settings, wire } of entries) {
      lastAppended.set(settings.id, upTo);
      let slots = lastAppendedByKey.get(settings.id);
      if (!slots) lastAppendedByKey.set(settings.id, (slots = new Float64Array(KEY_SLOTS)));
      const marked = markedKeys.get(settings.id);
      const hashes = wire.keyHashes;
      const keys = wire.keys;
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i]!;
        const slot = hashes !== undefined ? slotOfHash(hashes[i]!) : keySlot(key);
        slots[slot] = upTo;
        if (marked !== undefined && marked.slots[slot] === 1 && marked.last.has(key))
          marked.last.set(key, upTo);
      }
    }
    unmergedPoints += points;
    w.ref();
    // One hand-off per turn of the event loop: the appends logged meanwhile go to the thread in one
    // message (a message costs tens of µs whatever it holds); they are acknowledged once logged.
    if (handOff !== null && handOff.w !== w) handOn();
    if (handOff === null) {
      handOff = { w, upTo, entries: [...entries] };
      setImmediate(handOn);
    } else {
      handOff.upTo = upTo;
      for (const e of entries) handOff.entries.push(e);
    }
  }

  /** Hands the appends logged since the last hand-off to their thread (before any other message to it). */
  function handOn(): void {
    if (handOff === null) return;
    const { w, upTo, entries } = handOff;
    handOff = null;
    w.postMessage({ op: 'merge', id: 0, upTo, ...keyNumbers.number(entries) });
  }

  /** The close's fold, for CLOSE_FOLD_MS at most: its points are in the log either way. */
  function foldOrGiveUp(closing: Promise<unknown>): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        log?.warn('metric writer stopped before folding; the write log keeps the points for the next start', {
          waited_ms: CLOSE_FOLD_MS,
        });
        resolve();
      }, CLOSE_FOLD_MS);
    });
    return Promise.race([closing, late]).finally(() => clearTimeout(timer));
  }

  // The thread starts now, so that the log is replayed before the first request needs it.
  worker = start();

  return {
    status: () => status,
    async whenStarted() {
      // Referenced meanwhile: a process with nothing else to do yet would exit before the answer.
      const w = worker;
      w?.ref();
      try {
        await ready;
      } catch {
        throw startFailure ?? new Error('the metric writer did not start');
      } finally {
        if (w) updateRef(w);
      }
    },
    async append(entries) {
      if (closed) throw unavailable('The server is shutting down, retry later', 1);
      const points = pointsOf(entries);
      await roomFor(points);
      const w = current();
      let a = appender;
      if (!a) {
        // Waiting for the thread to replay the log: a reference, or a process with nothing else
        // to do (a script, a test) would exit before the thread says it is ready.
        w.ref();
        try {
          a = await ready;
        } finally {
          updateRef(w);
        }
      }
      appendNow(a, w, entries, points);
    },
    // What the thread's windows hold, and the appends handed on that it had not merged when it
    // answered: the read merges those itself (embedded/store.ts), instead of waiting for the
    // thread to merge every append queued before the read.
    async pending(sourceId, key, granularity, startsMs) {
      // Nothing appended since the last fold the thread told of: the stored rows hold it all.
      const last = lastAppended.get(sourceId) ?? 0;
      if (foldedUpTo >= 0 && last <= foldedUpTo) return { parts: [] };
      // Nothing appended to this key (or a key sharing its slot) since the last fold.
      const slots = lastAppendedByKey.get(sourceId);
      if (foldedUpTo >= 0 && key !== SYSTEM_KEY && (slots?.[keySlot(key)] ?? 0) <= foldedUpTo)
        return { parts: [] };
      const handedOn = unmerged.slice();
      const series = await send<PendingSeries & { packed?: PackedPart[] }>(
        { op: 'pending', sourceId, key, granularity, startsMs },
        [],
        true,
      );
      if (series.packed) series.parts = series.packed.map(unpackPart);
      delete series.packed;
      const mergedUpTo = series.mergedUpTo ?? Infinity;
      series.unmerged = handedOn.filter((a) => a.upTo > mergedUpTo);
      return series;
    },
    // `pending` of many keys in one request, answered at one moment of the thread: the keys with
    // nothing appended since the last fold are answered here, as `pending` answers them.
    async pendingMany(sourceId, keys, granularity, startsMs) {
      const out: PendingSeries[] = keys.map(() => ({ parts: [] }));
      const last = lastAppended.get(sourceId) ?? 0;
      if (foldedUpTo >= 0 && last <= foldedUpTo) return out;
      const slots = lastAppendedByKey.get(sourceId);
      const asked: number[] = [];
      keys.forEach((key, i) => {
        if (foldedUpTo >= 0 && key !== SYSTEM_KEY && (slots?.[keySlot(key)] ?? 0) <= foldedUpTo) return;
        asked.push(i);
      });
      if (asked.length === 0) return out;
      const handedOn = unmerged.slice();
      const answers = await send<Array<PendingSeries & { packed?: PackedPart[] }>>(
        { op: 'pendingMany', sourceId, keys: asked.map((i) => keys[i]!), granularity, startsMs },
        [],
        true,
      );
      answers.forEach((series, n) => {
        if (series.packed) series.parts = series.packed.map(unpackPart);
        delete series.packed;
        const mergedUpTo = series.mergedUpTo ?? Infinity;
        series.unmerged = handedOn.filter((a) => a.upTo > mergedUpTo);
        out[asked[n]!] = series;
      });
      return out;
    },
    settle: () => send({ op: 'settle' }),
    async apply(writes) {
      await send({ op: 'apply', writes });
      applied++;
    },
    // The key's last append record (the source's, for the system key): appendNow sets it once the
    // append is logged and handed on (reads see it) and before the append resolves. A key asked
    // for is followed exactly from then on (markedKeys), starting from its slot's record.
    changeMark(sourceId, key) {
      if (key === SYSTEM_KEY) return `${lastAppended.get(sourceId) ?? 0}:${applied}`;
      let marked = markedKeys.get(sourceId);
      if (!marked) markedKeys.set(sourceId, (marked = { slots: new Uint8Array(KEY_SLOTS), last: new Map() }));
      let last = marked.last.get(key);
      if (last === undefined) {
        if (marked.last.size >= MAX_MARKED_KEYS) {
          // Started afresh: each key's mark is its slot's record again, never below its own.
          marked.last.clear();
          marked.slots.fill(0);
        }
        const slot = keySlot(key);
        last = lastAppendedByKey.get(sourceId)?.[slot] ?? 0;
        marked.last.set(key, last);
        marked.slots[slot] = 1;
      }
      return `${last}:${applied}`;
    },
    async close() {
      if (closed) return;
      if (restartTimer) clearTimeout(restartTimer);
      restartTimer = null;
      try {
        if (worker) await foldOrGiveUp(send({ op: 'close' }));
      } finally {
        closed = true;
        status = { state: 'closed' };
        wakeWaiting(); // appends waiting for room answer 503
        const w = worker;
        worker = null;
        w?.ref(); // terminate() of an unreferenced thread may not keep the process alive until it is done
        if (w) await w.terminate();
        appender?.close();
        appender = null;
        checkpointer.ref(); // keeps the process alive until it has closed its connection
        checkpointer.postMessage('stop');
        await checkpointerStopped;
      }
    },
  };
}

export type { Db };
