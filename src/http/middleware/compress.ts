// Compresses JSON answers of the API when the client accepts it (SPEC 10: a read of 83 days at 1h is
// about 400 KB of JSON, about 40 KB compressed). Small answers (ingest acknowledgements, errors) stay
// as they are: compressing them costs more CPU than the bytes it saves. The work runs on libuv's thread
// pool, so a large answer does not hold the event loop.
import { promisify } from 'node:util';
import { brotliCompress, gzip, constants } from 'node:zlib';
import type { Middleware } from 'koa';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);

/** Bodies below this size go out as they are. */
export const COMPRESS_MIN_BYTES = 2048;

export function compressJson(): Middleware {
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
    if (Buffer.byteLength(payload) < COMPRESS_MIN_BYTES) return;
    const type = ctx.response.get('Content-Type') || 'application/json; charset=utf-8';
    const compressed =
      encoding === 'br'
        ? await brotli(payload, {
            params: {
              // Quality 4 keeps most of the gain at a small share of the CPU of the default 11.
              [constants.BROTLI_PARAM_QUALITY]: 4,
              [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              [constants.BROTLI_PARAM_SIZE_HINT]: payload.length,
            },
          })
        : await gz(payload, { level: 5 });
    ctx.body = compressed;
    ctx.set('Content-Type', type);
    ctx.set('Content-Encoding', encoding);
  };
}
