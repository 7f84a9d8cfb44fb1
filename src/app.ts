// The Koa application: middleware in one visible order.
import Koa from 'koa';
import type { Deps } from './deps';
import { compressJson } from './http/middleware/compress';
import { errorHandler } from './http/middleware/errors';
import { requestLog } from './http/middleware/request-log';
import { stoppingGuard } from './http/middleware/stopping';
import { selfMetricsRoute } from './http/routes/self-metrics';
import { createRoutes, unmatchedRoute } from './http/router';
import { dashboardPageData } from './http/web/page-data';
import { defaultWebDir } from './http/web/assets';
import { webInterface } from './http/web/serve';

export function createApp(deps: Deps): Koa {
  // Behind a reverse proxy, ctx.ip is the last X-Forwarded-For entry: the one that proxy added.
  const app = new Koa({ proxy: deps.config.server.trustProxy, maxIpsCount: 1 });
  app.use(requestLog(deps.log, deps.ops.stats));
  app.use(errorHandler(deps.log));
  app.use(stoppingGuard(() => deps.ops.stopping));
  app.use(compressJson());
  app.use(selfMetricsRoute(deps));
  app.use(createRoutes(deps));
  // The web interface takes the GETs no API route answered (its pages and assets); /api/* stays JSON.
  // A dashboard's page carries the dashboard and its source for a signed-in browser.
  app.use(webInterface(defaultWebDir(), dashboardPageData(deps)));
  app.use(unmatchedRoute);
  // Errors are rendered by errorHandler; Koa's own handler would only print them again.
  app.silent = true;
  return app;
}
