// JSON request bodies as bytes -> value. Shared by the body middleware and the batch parser's
// worker thread (which must not load the HTTP stack).
import { badRequest } from '../errors';

/** The parsed body; undefined for an empty one; 400 when it is not JSON. */
export function parseJsonText(raw: Buffer | Uint8Array): unknown {
  if (raw.length === 0) return undefined;
  const text = Buffer.isBuffer(raw)
    ? raw.toString('utf8')
    : Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('Malformed JSON body');
  }
}
