// Dashboard share links (docs/interface.md): the organization's users create, list and revoke
// them; anyone holding a link reads that dashboard and its key's series, nothing else.
import type { Context, Next } from 'koa';
import type { Deps } from '../../deps';
import { createShare, listShares, resolveShare, revokeShare, sharedKey } from '../../domain/shares';
import type { Source } from '../../domain/types';
import { parseSeriesParams } from '../../domain/metrics/query/series';
import type { Dashboard } from '../../model/dashboard';
import { formatTimestamp } from '../../shared/time';
import type { ShareRow } from '../../storage/shares';
import { presentSeriesAnswer } from '../present/metrics';
import { validate } from '../middleware/validate';
import { sharedOf, stateOf, userAuthOf } from '../state';

const userAuth = userAuthOf; // requireUser ran (router.ts)

const presentShare = (row: ShareRow) => ({
  id: row.id,
  dashboard_id: row.dashboard_id,
  last5: row.last5,
  inserted_at: formatTimestamp(row.created_at),
});

/** What a link shows: the dashboard's layout and the source's time settings, no ids of the organization. */
const presentShared = (dashboard: Dashboard, source: Source) => ({
  dashboard: {
    id: dashboard.id,
    name: dashboard.name,
    key: dashboard.key,
    locked: true,
    default_timeframe: dashboard.defaultTimeframe,
    default_granularity: dashboard.defaultGranularity,
    payload: dashboard.payload,
    segments: dashboard.segments,
  },
  source: {
    type: source.type,
    time_zone: source.timeZone,
    granularities: source.granularities,
    default_timeframe: source.defaultTimeframe,
    default_granularity: source.defaultGranularity,
  },
});

export function shareRoutes(deps: Deps) {
  /** The inputs of these routes, parsed at the edge (validate.ts). */
  const input = {
    /**
     * GET /shared/:token/metrics: the link's dashboard and source (404 first), the key its
     * `s.<segment>` values make, then GET /metrics' range parameters against that source.
     */
    series: validate({
      query: (query, ctx) => {
        const { dashboard, source } = sharedOf(ctx);
        const key = sharedKey(dashboard, query);
        const { from, to, granularity } = query;
        return {
          source,
          params: parseSeriesParams(source, { key, from, to, granularity }, { keyRequired: false }),
        };
      },
    }),
  };
  return {
    input,

    /** The link's dashboard and source, looked up before the query is parsed against them (404 first). */
    async resolve(ctx: Context, next: Next): Promise<void> {
      stateOf(ctx).shared = await resolveShare(deps, String(ctx.params.token));
      await next();
    },

    async create(ctx: Context): Promise<void> {
      const { row, value } = await createShare(deps, userAuth(ctx), String(ctx.params.id));
      ctx.status = 201;
      ctx.body = { data: { ...presentShare(row), token: value, path: `/s/${value}` } };
    },

    async list(ctx: Context): Promise<void> {
      ctx.body = { data: (await listShares(deps, userAuth(ctx), String(ctx.params.id))).map(presentShare) };
    },

    async remove(ctx: Context): Promise<void> {
      await revokeShare(deps, userAuth(ctx), String(ctx.params.id), String(ctx.params.shareId));
      ctx.body = { data: { revoked: true } };
    },

    async show(ctx: Context): Promise<void> {
      const { dashboard, source } = await resolveShare(deps, String(ctx.params.token));
      ctx.body = { data: presentShared(dashboard, source) };
    },

    /** GET /metrics' range parameters; the key is the dashboard's, with `s.<segment>` values. */
    async series(ctx: Context): Promise<void> {
      const { source, params } = input.series.query(ctx);
      ctx.type = 'application/json';
      ctx.body = await deps.metrics.readSeriesAnswer(source, params, presentSeriesAnswer);
    },
  };
}
