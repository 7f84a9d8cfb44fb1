// Assigns a request id (echoed as X-Request-Id) and logs one line per request at debug level.
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import type { Logger } from '../../lib/log';

export function requestLog(log: Logger) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    ctx.state.requestId = randomUUID();
    ctx.set('X-Request-Id', ctx.state.requestId);
    try {
      await next();
    } finally {
      log.debug('request', {
        request_id: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      });
    }
  };
}
