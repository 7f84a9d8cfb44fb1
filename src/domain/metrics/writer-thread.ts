// The metric writer's thread (writer-client.ts starts it): its own connection to the service
// database and one MetricWriter. Messages in: { id, op, ...arguments } (writer-client.ts
// WriterRequest). Messages out: { ready } once the write log is replayed, or { failed, error };
// then { id, ok, value } or { id, ok: false, error } per request, in the order of the work done.
//
// The same script runs the database's checkpointer (workerData.role 'checkpointer'): a connection
// that copies the WAL back into the database file every CHECKPOINT_MS, on a thread of its own, so
// that neither the writer's commits nor the event loop's stop for a checkpoint and its fsync.
// Any message stops it.
import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../storage/db';
import { createSourcesRepo } from '../../storage/sources';
import { MetricWriter } from './metric-writer';
import { errorToWire, type WriterRequest, type WriterThreadData } from './writer-protocol';

const port = parentPort;
if (!port) throw new Error('writer-thread runs as a worker thread');
const data = workerData as WriterThreadData;

/** How often the checkpointer copies the WAL back (a passive checkpoint never blocks a writer). */
const CHECKPOINT_MS = 250;

/** In the single executable the addon is loaded from the file the main thread extracted. */
function nativeBinding(): unknown {
  if (!data.nativeBindingPath) return undefined;
  const mod = { exports: {} as unknown };
  process.dlopen(mod, data.nativeBindingPath);
  return mod.exports;
}

function checkpointer(): void {
  const db = openDatabase(data.dbFile, { nativeBinding: nativeBinding() });
  db.pragma('cache_size = 64'); // it reads nothing: pages only pass through
  const timer = setInterval(() => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // e.g. a full disk or a busy lock: the next tick tries again
    }
  }, CHECKPOINT_MS);
  port!.once('message', () => {
    clearInterval(timer);
    db.close();
    port!.close();
  });
}

function writer(): void {
  let db: ReturnType<typeof openDatabase>;
  let metrics: MetricWriter;
  // Requests that arrive while a fold's transaction runs are taken from inside it (MetricWriter's poll).
  const poll = () => {
    for (let m = receiveMessageOnPort(port!); m; m = receiveMessageOnPort(port!)) handle(m.message as WriterRequest);
  };
  try {
    db = openDatabase(data.dbFile, { nativeBinding: nativeBinding(), checkpointPages: data.checkpointPages });
    const sources = createSourcesRepo(db);
    metrics = new MetricWriter({ ...data.options, db, sourceSettings: (id) => sources.byId(id), poll });
    port!.postMessage({ ready: true });
  } catch (err) {
    port!.postMessage({ failed: true, error: errorToWire(err) });
    throw err;
  }
  const reply = (id: number, err: unknown, value?: unknown) =>
    port!.postMessage(err === undefined ? { id, ok: true, value } : { id, ok: false, error: errorToWire(err) });
  const answer = (id: number, work: Promise<unknown>) => work.then((value) => reply(id, undefined, value), (err: unknown) => reply(id, err ?? new Error('failed')));
  port!.on('message', handle);

  function handle(req: WriterRequest): void {
    switch (req.op) {
      // Appends and reads answer at once, also from inside a fold's transaction (no microtask wait).
      case 'append':
        return metrics.appendThen(req.entries, (err) => reply(req.id, err));
      case 'pending':
        return reply(req.id, undefined, metrics.pending(req.sourceId, req.key, req.granularity, req.firstMs, req.lastMs));
      case 'settle':
        return void answer(req.id, metrics.settle());
      case 'apply':
        return void answer(req.id, metrics.applyWriteSet(req.writes));
      case 'close':
        return void answer(req.id, metrics.close().then(() => db.close()));
    }
  }
}

if (data.role === 'checkpointer') checkpointer();
else writer();
