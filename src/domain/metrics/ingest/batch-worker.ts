// The batch parser's worker thread (domain/metrics/ingest/batch-parser.ts): body bytes in, validated points out.
// Messages in: { id, bytes } (an ArrayBuffer, transferred). Messages out: { id, points } with the
// WirePoints buffers transferred, or { id, error } with the error that parsing on the main thread
// would have thrown. Only pure modules are imported here: no HTTP stack, no database.
import { parentPort } from 'node:worker_threads';
import { parseJsonText } from '../../../lib/json';
import { scanBatch } from './batch-scan';
import { parseBatch } from './points';
import { encodeError, encodePoints } from '../../../model/point-wire';

interface Job {
  id: number;
  bytes: ArrayBuffer;
}

const port = parentPort;
if (!port) throw new Error('batch-worker runs as a worker thread');

port.on('message', (job: Job) => {
  try {
    const bytes = new Uint8Array(job.bytes);
    // plain bodies straight from their bytes; any other (and every error) the generic way
    const points = scanBatch(bytes) ?? encodePoints(parseBatch(parseJsonText(bytes)));
    port.postMessage({ id: job.id, points }, [
      points.meta.buffer as ArrayBuffer,
      points.values.buffer as ArrayBuffer,
    ]);
  } catch (err) {
    port.postMessage({ id: job.id, error: encodeError(err) });
  }
});
