// The Koa application: middleware in one visible order.
import Koa from 'koa';
import type { Deps } from './deps';
import { errorHandler } from './http/middleware/errors';
import { requestLog } from './http/middleware/request-log';
import { createRoutes, unmatchedRoute } from './http/router';

export function createApp(deps: Deps): Koa {
  // Behind a reverse proxy, ctx.ip is the last X-Forwarded-For entry: the one that proxy added.
  const app = new Koa({ proxy: deps.config.server.trustProxy, maxIpsCount: 1 });
  app.use(requestLog(deps.log));
  app.use(errorHandler(deps.log));
  app.use(createRoutes(deps));
  app.use(unmatchedRoute);
  // Errors are rendered by errorHandler; Koa's own handler would only print them again.
  app.silent = true;
  return app;
}
