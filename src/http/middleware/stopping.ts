// Graceful stop (SPEC section 1): once the server is stopping, a request that arrives is answered
// 503 + Retry-After, and every answer, including those of requests received before the signal,
// carries `Connection: close`, so keep-alive connections end as soon as their last answer is out.
import type { Context, Next } from 'koa';
import { unavailable } from '../../errors';

export function stoppingGuard(isStopping: () => boolean) {
  return async function guardStopping(ctx: Context, next: Next): Promise<void> {
    if (isStopping()) {
      ctx.set('Connection', 'close');
      throw unavailable('The server is shutting down, retry later', 1);
    }
    try {
      await next();
    } finally {
      if (isStopping()) ctx.set('Connection', 'close');
    }
  };
}
