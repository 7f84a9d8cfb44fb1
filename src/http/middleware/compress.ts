// Compresses JSON answers of the API when the client accepts it (SPEC 10: a read of 83 days at 1h is
// about 400 KB of JSON, about 80 KB compressed). The fastest settings of each encoding: the time spent
// compressing adds to every read's latency, and JSON of numbers compresses well even at level 1. Small answers (ingest acknowledgements, errors) stay
// as they are: compressing them costs more CPU than the bytes it saves. The work runs on libuv's thread
// pool, so a large answer does not hold the event loop.
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants } from 'node:zlib';
import type { Middleware } from 'koa';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** Bodies below this size go out as they are. */
export const COMPRESS_MIN_BYTES = 2048;

/** Answers at least this large are kept compressed, by content, for the next identical answer. */
const CACHE_MIN_BYTES = 64 * 1024;
const CACHE_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The compressed bytes of recent large answers, by encoding and the SHA-256 of the answer: a
 * dashboard's refresh or a second viewer of the same range gets the same bytes for 0.7 ms of hashing
 * per MB instead of 2-3.5 ms of compressing. Least recently used first out, 16 MB of compressed
 * bytes at most.
 */
class CompressedCache {
  private readonly entries = new Map<string, Buffer>();
  private bytes = 0;
  get(id: string): Buffer | undefined {
    const hit = this.entries.get(id);
    if (hit) {
      this.entries.delete(id);
      this.entries.set(id, hit);
    }
    return hit;
  }
  set(id: string, value: Buffer): void {
    if (value.length > CACHE_MAX_BYTES / 4) return;
    this.entries.set(id, value);
    this.bytes += value.length;
    for (const [oldest, old] of this.entries) {
      if (this.bytes <= CACHE_MAX_BYTES) break;
      this.entries.delete(oldest);
      this.bytes -= old.length;
    }
  }
}

const oneShotHash = typeof crypto.hash === 'function' ? crypto.hash : null;
const sha256 = (data: string | Buffer): string =>
  oneShotHash
    ? oneShotHash('sha256', data, 'base64')
    : crypto.createHash('sha256').update(data).digest('base64');

/**
 * Compressed forms of answers that are sent again as the same Buffer (kept series answers,
 * domain/metrics/answers.ts): they live as long as the answer does, and spare the hash too.
 */
const attached = new WeakMap<Buffer, { br?: Buffer; gzip?: Buffer }>();

/** Marks a body that may be sent again as it is: its compressed forms are kept with it. */
export function keepCompressedForms(body: Buffer): Buffer {
  if (!attached.has(body)) attached.set(body, {});
  return body;
}

export function compressJson(): Middleware {
  const cache = new CompressedCache();
  return async (ctx, next) => {
    await next();
    const body: unknown = ctx.body;
    if (body === undefined || body === null || ctx.status === 204 || ctx.method === 'HEAD') return;
    if (ctx.response.get('Content-Encoding')) return;
    if (typeof (body as { pipe?: unknown }).pipe === 'function') return;
    // br where the client takes it (smaller at the same CPU), else gzip; a client's own order between
    // equally weighted encodings is not a preference worth following here. A client that takes
    // neither (most senders of metrics) costs one header look-up.
    if (ctx.get('accept-encoding') === '') return;
    const encoding =
      ctx.acceptsEncodings('br') === 'br' ? 'br' : ctx.acceptsEncodings('gzip') === 'gzip' ? 'gzip' : null;
    if (encoding === null) return;
    let payload: string | Buffer;
    if (Buffer.isBuffer(body)) {
      // Pre-serialized JSON (series reads); other bytes (files, exports) are left alone.
      if (!ctx.response.is('json')) return;
      payload = body;
    } else if (typeof body === 'string') {
      if (!ctx.response.is('json')) return;
      payload = body;
    } else if (typeof body === 'object') {
      // Serialized once here; Koa sends the string as it is rather than serializing the object again.
      payload = JSON.stringify(body);
      ctx.body = payload;
      ctx.type = 'application/json';
    } else {
      return;
    }
    ctx.vary('Accept-Encoding');
    const size = Buffer.byteLength(payload);
    if (size < COMPRESS_MIN_BYTES) return;
    const type = ctx.response.get('Content-Type') || 'application/json; charset=utf-8';
    const forms = Buffer.isBuffer(body) ? attached.get(body) : undefined;
    let compressed = forms?.[encoding];
    const id = !compressed && size >= CACHE_MIN_BYTES ? `${encoding}:${sha256(payload)}` : null;
    if (id) compressed = cache.get(id);
    if (!compressed) {
      compressed =
        encoding === 'br'
          ? await brotli(payload, {
              params: {
                // Quality 1: a year of 1h (1 MB of JSON) in about 2 ms, to a fifth of its size;
                // quality 4 took 5.5 ms for 8% less, on the read's own latency (measured 2026-11-27).
                [constants.BROTLI_PARAM_QUALITY]: 1,
                [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
                [constants.BROTLI_PARAM_SIZE_HINT]: size,
              },
            })
          : await gz(payload, { level: 1 }); // 3.5 ms per MB; level 5 took 6.5 ms for 8% less
      if (id) cache.set(id, compressed);
    }
    if (forms) forms[encoding] = compressed;
    ctx.body = compressed;
    ctx.set('Content-Type', type);
    ctx.set('Content-Encoding', encoding);
  };
}
