// The event loop's side of the metric writer (metric-writer.ts): one thread of its own per server,
// or (tests, the backup command) the writer in this thread. Requests are answered in the order the
// writer does the work. If the thread dies, the requests it held fail with 503 and the next
// request starts a new thread, which replays the write log first: nothing acknowledged is lost.
import { Worker } from 'node:worker_threads';
import { unavailable } from '../../errors';
import type { Logger } from '../../lib/log';
import type { Db } from '../../storage/db';
import type { EmbeddedWriter } from '../../drivers/embedded';
import { MetricWriter, type MetricWriterOptions } from './metric-writer';
import { type WireError, type WriterRequest, type WriterThreadData, errorFromWire } from './writer-protocol';
import { writerThreadCode } from './writer-thread-code';

/** What the embedded store asks of the writer (its interface lives with the store, below the domain). */
export type WriterPort = EmbeddedWriter;

/** The writer running in this thread, on the given connection. */
export function inProcessWriter(options: MetricWriterOptions): WriterPort {
  const writer = new MetricWriter(options);
  return {
    append: (entries) => writer.append(entries),
    pending: async (...args) => writer.pending(...args),
    settle: () => writer.settle(),
    apply: (writes) => writer.applyWriteSet(writes),
    close: () => writer.close(),
  };
}

type Reply = { ready: true } | { failed: true; error: WireError } | { id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError };

interface Job {
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

type Request = WriterRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

/** The buffers a request can move instead of copy (each once: a transfer list takes no duplicates). */
function transfers(request: Request): ArrayBuffer[] {
  if (request.op !== 'append') return [];
  const buffers = new Set<ArrayBuffer>();
  for (const { wire } of request.entries) {
    for (const array of [wire.meta, wire.values]) if (array.buffer instanceof ArrayBuffer) buffers.add(array.buffer);
  }
  return [...buffers];
}

// Young generations sized for what the threads allocate, whatever the runtime's default (Node 24
// on a large machine picks several times more): the writer's windows and cache are columns that
// live long, what it allocates per request dies young (and frees the wires' buffers with it); the
// checkpointer allocates almost nothing.
const WRITER_LIMITS = { maxYoungGenerationSizeMb: 4 };
const CHECKPOINTER_LIMITS = { maxYoungGenerationSizeMb: 2 };

export interface WriterThreadOptions extends WriterThreadData {
  log?: Logger;
}

/**
 * The writer on a thread of its own, opening `dbFile` itself, with the database's checkpointer on
 * another (writer-thread.ts): the writer's commits only append to the WAL.
 */
export function startWriterThread(options: WriterThreadOptions): WriterPort {
  const { log, ...data } = options;
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
  let nextId = 1;
  let closed = false;

  function failAll(reason: string): void {
    for (const [id, job] of jobs) {
      jobs.delete(id);
      job.reject(unavailable(`The metric writer stopped (${reason}); retry`, 1));
    }
  }

  function start(): Worker {
    const w = new Worker(writerThreadCode(), { eval: true, name: 'metric-writer', workerData: data, resourceLimits: WRITER_LIMITS });
    w.on('message', (reply: Reply) => {
      if ('ready' in reply) return;
      if ('failed' in reply) {
        log?.error('metric writer did not start', { error: reply.error.message });
        return;
      }
      const job = jobs.get(reply.id);
      if (!job) return;
      jobs.delete(reply.id);
      if (jobs.size === 0) w.unref(); // an idle writer does not keep the process alive
      if (reply.ok) job.resolve(reply.value);
      else job.reject(errorFromWire(reply.error));
    });
    w.on('error', (err) => log?.error('metric writer failed', { error: err.message }));
    w.on('exit', (code) => {
      if (worker === w) worker = null;
      if (!closed) log?.error('metric writer stopped', { code });
      failAll(`exit code ${code}`);
    });
    w.unref();
    return w;
  }

  function send<T>(request: Request): Promise<T> {
    if (closed) return Promise.reject(unavailable('The server is shutting down, retry later', 1));
    const w = (worker ??= start());
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      jobs.set(id, { resolve: resolve as (value: unknown) => void, reject });
      if (jobs.size === 1) w.ref();
      w.postMessage({ ...request, id }, transfers(request));
    });
  }

  // The thread starts now, so that the log is replayed before the first request needs it.
  worker = start();

  return {
    append: (entries) => send({ op: 'append', entries }),
    pending: (sourceId, key, granularity, firstMs, lastMs) => send({ op: 'pending', sourceId, key, granularity, firstMs, lastMs }),
    settle: () => send({ op: 'settle' }),
    apply: (writes) => send({ op: 'apply', writes }),
    async close() {
      if (closed) return;
      try {
        if (worker) await send({ op: 'close' });
      } finally {
        closed = true;
        const w = worker;
        worker = null;
        w?.ref(); // terminate() of an unreferenced thread may not keep the process alive until it is done
        if (w) await w.terminate();
        checkpointer.ref(); // keeps the process alive until it has closed its connection
        checkpointer.postMessage('stop');
        await checkpointerStopped;
      }
    },
  };
}

export type { Db };
