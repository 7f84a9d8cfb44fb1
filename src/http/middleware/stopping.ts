// Graceful stop (SPEC section 1): once the server is stopping, a request that arrives is answered
// 503 + Retry-After, and every answer, including those of requests received before the signal,
// carries `Connection: close`, so keep-alive connections end as soon as their last answer is out.
// The body of a request refused this way is read and dropped first (for a short while at most):
// closing a connection with unread bytes would reset it, and the client could lose the answer.
import type { Context, Next } from 'koa';
import type { IncomingMessage } from 'node:http';
import { unavailable } from '../../errors';

/** How long a refused request's body may take to arrive before the connection is closed anyway. */
const DRAIN_MS = 1_000;

function drained(req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      req.off('end', done);
      req.off('close', done);
      req.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, DRAIN_MS);
    req.on('end', done);
    req.on('close', done);
    req.on('error', done);
    req.resume();
  });
}

export function stoppingGuard(isStopping: () => boolean) {
  return async function guardStopping(ctx: Context, next: Next): Promise<void> {
    if (isStopping()) {
      ctx.set('Connection', 'close');
      await drained(ctx.req);
      throw unavailable('The server is shutting down, retry later', 1);
    }
    try {
      await next();
    } finally {
      if (isStopping()) ctx.set('Connection', 'close');
    }
  };
}
