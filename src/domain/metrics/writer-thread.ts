// The metric writer's thread (writer-client.ts starts it): its own connection to the service
// database and one MetricWriter. Messages in: { id, op, ...arguments } (writer-client.ts
// WriterRequest). Messages out: { ready } once the write log is replayed, or { failed, error };
// then { id, ok, value } or { id, ok: false, error } per request, in the order of the work done.
import { parentPort, workerData } from 'node:worker_threads';
import { openDatabase } from '../../storage/db';
import { createSourcesRepo } from '../../storage/sources';
import { MetricWriter } from './metric-writer';
import { errorToWire, type WriterRequest, type WriterThreadData } from './writer-protocol';

const port = parentPort;
if (!port) throw new Error('writer-thread runs as a worker thread');
const data = workerData as WriterThreadData;

/** In the single executable the addon is loaded from the file the main thread extracted. */
function nativeBinding(): unknown {
  if (!data.nativeBindingPath) return undefined;
  const mod = { exports: {} as unknown };
  process.dlopen(mod, data.nativeBindingPath);
  return mod.exports;
}

let writer: MetricWriter;
let db: ReturnType<typeof openDatabase>;
try {
  db = openDatabase(data.dbFile, { nativeBinding: nativeBinding() });
  const sources = createSourcesRepo(db);
  writer = new MetricWriter({ ...data.options, db, sourceSettings: (id) => sources.byId(id) });
  port.postMessage({ ready: true });
} catch (err) {
  port.postMessage({ failed: true, error: errorToWire(err) });
  throw err;
}

function answer(id: number, work: Promise<unknown>): void {
  work.then(
    (value) => port!.postMessage({ id, ok: true, value }),
    (err: unknown) => port!.postMessage({ id, ok: false, error: errorToWire(err) }),
  );
}

port.on('message', (req: WriterRequest) => {
  switch (req.op) {
    case 'append':
      return answer(req.id, writer.append(req.entries));
    case 'pending':
      return answer(req.id, Promise.resolve(writer.pending(req.sourceId, req.key, req.granularity, req.firstMs, req.lastMs)));
    case 'settle':
      return answer(req.id, writer.settle());
    case 'apply':
      return answer(req.id, writer.applyWriteSet(req.writes));
    case 'close':
      return answer(req.id, writer.close().then(() => db.close()));
  }
});
