// The Koa application: middleware in one visible order.
import Koa from 'koa';
import type { Deps } from './deps';
import { errorHandler } from './http/middleware/errors';
import { requestLog } from './http/middleware/request-log';
import { stoppingGuard } from './http/middleware/stopping';
import { selfMetricsRoute } from './http/routes/self-metrics';
import { createRoutes, unmatchedRoute } from './http/router';
import { webInterface } from './http/web/serve';

export function createApp(deps: Deps): Koa {
  const app = new Koa({ proxy: false });
  app.use(requestLog(deps.log, deps.ops.stats));
  app.use(errorHandler(deps.log));
  app.use(stoppingGuard(() => deps.ops.stopping));
  app.use(selfMetricsRoute(deps));
  app.use(createRoutes(deps));
  // The web interface takes the GETs no API route answered (its pages and assets); /api/* stays JSON.
  app.use(webInterface());
  app.use(unmatchedRoute);
  // Errors are rendered by errorHandler; Koa's own handler would only print them again.
  app.silent = true;
  return app;
}
