// The sqlite worker thread (sqlite/pool.ts): holds the handles of the source files assigned to it
// and runs their operations, so that a slow statement on an untrusted file never holds the event
// loop; past its deadline the pool terminates this thread. Messages in: { id, op } (a FileOp) or
// { sweep: idleMs }. Messages out: { ready }, { id, result } (an OpResult), { open } after a sweep.
import { parentPort, workerData } from 'node:worker_threads';
import { createFileRunner, type FileOp } from './runner';

const port = parentPort;
if (!port) throw new Error('sqlite-worker runs as a worker thread');

/** In the single executable the addon is loaded from the file the main thread extracted. */
function nativeBinding(): unknown {
  const file = (workerData as { nativeBindingPath?: string } | null)?.nativeBindingPath;
  if (!file) return undefined;
  const mod = { exports: {} as unknown };
  process.dlopen(mod, file);
  return mod.exports;
}

const runner = createFileRunner(nativeBinding());

port.on('message', (msg: { id: number; op: FileOp } | { sweep: number }) => {
  if ('sweep' in msg) {
    port.postMessage({ open: runner.sweep(msg.sweep) });
    return;
  }
  port.postMessage({ id: msg.id, result: runner.run(msg.op) });
});
port.postMessage({ ready: true });
