// Assigns a request id (echoed as X-Request-Id), counts every answer by route template and status
// for GET /metrics, and logs (SPEC section 11): every request at debug, requests slower than 1 s at
// info. The 60 s summary line is written by server.ts from the same counters. A share link's token
// in the path (`/s/<token>`, `/api/v1/shared/<token>/...`) is logged as `<redacted>`.
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { redactPath, type Logger } from '../../lib/log';
import type { OpsStats } from '../../ops/stats';
import { stateOf } from '../state';

export const SLOW_REQUEST_MS = 1000;

/** Paths answered outside the router (the ingest fast path, /metrics) keep their own label. */
const OWN_LABEL = new Set(['/api/v1/metrics', '/api/v1/metrics/batch', '/metrics']);

/** The label of a request: its route template, never the raw path (ids would explode the series). */
function routeLabel(ctx: Context): string {
  const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
  if (typeof matched === 'string') return matched;
  if (OWN_LABEL.has(ctx.path)) return ctx.path;
  if (ctx.status === 404) return 'unmatched';
  // Pages and assets of the web interface (every non-API path): one label, whatever the path.
  return ctx.path.startsWith('/api/') ? 'other' : 'interface';
}

export function requestLog(log: Logger, stats?: OpsStats) {
  return async function logRequest(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    const requestId = randomUUID();
    stateOf(ctx).requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const route = routeLabel(ctx);
      stats?.request(ctx.method, route, ctx.status);
      const fields = {
        request_id: requestId,
        method: ctx.method,
        path: redactPath(ctx.path),
        route,
        status: ctx.status,
        ms,
      };
      if (ms >= SLOW_REQUEST_MS) log.info('slow request', fields);
      else log.debug('request', fields);
    }
  };
}
