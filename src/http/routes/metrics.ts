// /api/v1/metrics: the auth middleware has checked the source token, its permission and the
// X-Service-Source-Id header and found the token's source; the route's validator (input below)
// has parsed the query or body against that source.
import type { Context, Next } from 'koa';
import { badRequest, forbidden } from '../../errors';
import type { Deps } from '../../deps';
import type { Source } from '../../domain/types';
import { INGEST_DISABLED } from '../../domain/metrics/engine';
import { parsePoint } from '../../domain/metrics/ingest/points';
import { answerQuery, parseMode } from '../../domain/metrics/query/query';
import { parseSeriesParams } from '../../domain/metrics/query/series';
import { objectBody, takeRawBody } from '../middleware/body';
import { validate } from '../middleware/validate';
import { sourceOf } from '../state';
import { presentCreated, presentQueryJson, presentSeriesAnswer } from '../present/metrics';

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
  if (typeof valuePath !== 'string' || valuePath.trim() === '')
    throw badRequest('value_path must be a non-empty string');
  return { mode, valuePath };
}

/** POST /metrics/query: the body object, its mode and value path, then the series it names. */
function parseQueryBody(input: unknown, source: Source) {
  const body = objectBody(input);
  const { mode, valuePath } = queryFields(body);
  const params = parseSeriesParams(source, body, { keyRequired: true });
  return { params, mode, valuePath, aggregator: body.aggregator, slices: body.slices };
}

/** The inputs of the metrics routes, parsed at the edge (validate.ts). */
export const metricsInput = {
  /** GET /metrics: key (optional), from, to, granularity against the source's settings */
  series: validate({
    query: (query, ctx) => parseSeriesParams(sourceOf(ctx), query, { keyRequired: false }),
  }),
  /** POST /metrics: one point */
  ingest: validate({ body: parsePoint }),
  /** POST /metrics/query */
  query: validate({ body: (body: unknown, ctx) => parseQueryBody(body, sourceOf(ctx)) }),
};

export function metricsRoutes(deps: Deps) {
  return {
    /** Ingestion refused before its body is checked when projects are disabled (SPEC 7). */
    ingestEnabled(_ctx: Context, next: Next): Promise<void> {
      if (!deps.config.features.projectsEnabled) return Promise.reject(forbidden(INGEST_DISABLED));
      return next();
    },

    async series(ctx: Context): Promise<void> {
      const params = metricsInput.series.query(ctx);
      ctx.type = 'application/json';
      ctx.body = await deps.metrics.readSeriesAnswer(sourceOf(ctx), params, presentSeriesAnswer);
    },

    async ingest(ctx: Context): Promise<void> {
      await deps.metrics.ingestPoint(sourceOf(ctx), metricsInput.ingest.takeBody(ctx));
      ctx.status = 201;
      ctx.body = presentCreated('ok');
    },

    // The body's validator is the batch scanner itself (validate.ts, top).
    async ingestBatch(ctx: Context): Promise<void> {
      const created = await deps.metrics.ingestBatchBytes(sourceOf(ctx), takeRawBody(ctx));
      ctx.status = 201;
      ctx.body = presentCreated(created);
    },

    async query(ctx: Context): Promise<void> {
      const { params, mode, valuePath, aggregator, slices } = metricsInput.query.takeBody(ctx);
      const series = await deps.metrics.readSeriesData(sourceOf(ctx), params);
      const answer = answerQuery(
        {
          key: params.key,
          fromMs: params.fromMs,
          toMs: params.toMs,
          granularity: params.granularity.text,
          mode,
          valuePath,
          aggregator,
          slices,
        },
        series,
      );
      ctx.type = 'application/json';
      ctx.body = presentQueryJson(answer, series.transponderErrors);
    },
  };
}
