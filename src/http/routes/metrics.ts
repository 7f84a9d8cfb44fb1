// /api/v1/metrics: the auth middleware has checked the source token, its permission and the
// X-Service-Source-Id header, and put the token's source on ctx.state.source.
import type { Context } from 'koa';
import { badRequest } from '../../errors';
import type { Deps } from '../../deps';
import type { Source } from '../../domain/types';
import { answerQuery, parseMode } from '../../domain/metrics/query';
import { bodyObject, takeBody, takeRawBody } from '../middleware/body';
import { presentCreated, presentQueryJson, presentSeriesJson } from '../present/metrics';

const sourceOf = (ctx: Context): Source => ctx.state.source as Source;

/** `mode` (alias `format`) and `value_path` of a query body: missing or malformed -> 400. */
function queryFields(body: Record<string, unknown>) {
  const rawMode = body.mode ?? body.format;
  const mode = parseMode(rawMode);
  if (!mode) {
    throw badRequest(
      rawMode === undefined || rawMode === null
        ? 'mode is required (aggregate, timeline or category)'
        : 'mode must be aggregate, timeline or category',
    );
  }
  const valuePath = body.value_path;
  if (valuePath === undefined || valuePath === null) throw badRequest('value_path is required');
  if (typeof valuePath !== 'string' || valuePath.trim() === '') throw badRequest('value_path must be a non-empty string');
  return { mode, valuePath };
}

export function metricsRoutes(deps: Deps) {
  return {
    async series(ctx: Context): Promise<void> {
      const series = await deps.metrics.series(sourceOf(ctx), ctx.query);
      ctx.type = 'application/json';
      ctx.body = presentSeriesJson(series);
    },

    async ingest(ctx: Context): Promise<void> {
      await deps.metrics.ingest(sourceOf(ctx), takeBody(ctx));
      ctx.status = 201;
      ctx.body = presentCreated('ok');
    },

    async ingestBatch(ctx: Context): Promise<void> {
      const created = await deps.metrics.ingestBatchBytes(sourceOf(ctx), takeRawBody(ctx));
      ctx.status = 201;
      ctx.body = presentCreated(created);
    },

    async query(ctx: Context): Promise<void> {
      const body = bodyObject(ctx);
      const { mode, valuePath } = queryFields(body);
      const { params, series } = await deps.metrics.seriesData(sourceOf(ctx), body);
      const answer = answerQuery(
        {
          key: params.key,
          fromMs: params.fromMs,
          toMs: params.toMs,
          granularity: params.granularity.text,
          mode,
          valuePath,
          aggregator: body.aggregator,
          slices: body.slices,
        },
        series,
      );
      ctx.type = 'application/json';
      ctx.body = presentQueryJson(answer, series.transponderErrors);
    },
  };
}
