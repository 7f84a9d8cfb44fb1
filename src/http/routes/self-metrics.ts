// GET /metrics: the server's own series for a Prometheus scraper (SPEC section 11). Off when
// metrics.enabled is false (404 like any unknown path); with metrics.token set, the scraper must
// send `Authorization: Bearer <token>` (docs/operations.md explains the default).
import { timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { Context, Next } from 'koa';
import type { Deps } from '../../deps';
import { AppError } from '../../errors';
import { renderMetrics } from '../../ops/prometheus';
import { SERVER_VERSION } from '../../version';
import { intakeCountersOf, renderIntakeMetrics } from '../../intake/stats';

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function selfMetricsRoute(deps: Deps) {
  const { enabled, token } = deps.config.metrics;
  const databaseFile = path.join(deps.config.storage.dataDir, 'service.db');
  return async function selfMetrics(ctx: Context, next: Next): Promise<void> {
    if (!enabled || ctx.path !== '/metrics') return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new AppError('method_not_allowed', 'Method not allowed', { headers: { Allow: 'GET, HEAD' } });
    }
    if (token !== null) {
      const given = /^Bearer (.+)$/i.exec(ctx.get('authorization'))?.[1]?.trim() ?? '';
      if (!sameText(given, token)) throw new AppError('unauthorized', 'Bad token');
    }
    ctx.type = 'text/plain; version=0.0.4; charset=utf-8';
    ctx.body =
      renderMetrics({
        stats: deps.ops.stats,
        sweep: deps.ops.sweeper.stats,
        queueDepth: deps.metrics.pendingPoints,
        jobsHeld: deps.ops.jobs?.held,
        answers: deps.metrics.answerStats(),
        databaseFile,
        version: SERVER_VERSION,
        nodeId: deps.ops.nodeId,
      }) + renderIntakeMetrics(intakeCountersOf(deps));
  };
}
