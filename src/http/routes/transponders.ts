// SPEC 15: GET /api/v1/source (the token's source and its settings) and /api/v1/transponders, the
// source's derived values. The metrics routes' auth middleware has checked the source token, its
// permission (read for GET, write for changes) and the X-Service-Source-Id header, and left the
// token's source for sourceOf (state.ts); a body is parsed at the edge (input below, validate.ts).
import type { Context, Next } from 'koa';
import { AppError, forbidden, notFound, unauthorized } from '../../errors';
import type { Deps } from '../../deps';
import { normalizeId, newId } from '../../lib/ids';
import { formatTimestamp } from '../../shared/time';
import { SERVER_VERSION } from '../../version';
import { orderGiven, transponderFields } from '../../domain/transponders/rules';
import { SYSTEM_KEY } from '../../domain/metrics/merge';
import type { Transponder } from '../../storage/transponders';
import { authenticate, checkSourceHeader, requireSource } from '../middleware/auth';
import { objectBody } from '../middleware/body';
import { validate } from '../middleware/validate';
import { sourceOf, stateOf, userAuthOf } from '../state';

export function presentTransponder(t: Transponder) {
  return {
    id: t.id,
    name: t.name,
    key: t.key,
    config: { paths: t.paths, expression: t.expression, response: t.response },
    enabled: t.enabled,
    order: t.order,
    source_type: t.sourceType,
    source_id: t.sourceId,
    inserted_at: formatTimestamp(t.insertedAt),
    updated_at: formatTimestamp(t.updatedAt),
  };
}

/** GET /source: a source token with either flag (the header rules of SPEC 3 first). */
export function requireAnySourceFlag(deps: Deps) {
  const userPath = requireSource(deps, 'read'); // a user token: the header checks, then 403
  return async function anyFlag(ctx: Context, next: Next): Promise<void> {
    const auth = await authenticate(ctx, deps);
    if (auth.kind !== 'source') return userPath(ctx, next);
    checkSourceHeader(ctx, auth, true, true);
    if (!auth.read && !auth.write) throw forbidden();
    const source = await deps.sources.cachedById(auth.sourceId);
    if (!source) throw unauthorized();
    const state = stateOf(ctx);
    state.auth = auth;
    state.source = source;
    await next();
  };
}

/**
 * The web interface's way to a source's transponders (/sources/:sourceId/transponders, after
 * requireUser): a source of the user's organization, any other id 404, as the source series route.
 */
export function userSource(deps: Deps) {
  return async function organizationSource(ctx: Context, next: Next): Promise<void> {
    const id = normalizeId(ctx.params.sourceId);
    const org = userAuthOf(ctx).organizationId;
    const source = id && org ? await deps.sources.inOrganization(id, org) : undefined;
    if (!source) throw notFound();
    stateOf(ctx).source = source;
    await next();
  };
}

export function transponderRoutes(deps: Deps) {
  const repo = deps.transponders;

  async function find(ctx: Context): Promise<Transponder> {
    const id = normalizeId(ctx.params.id);
    const found = id ? await repo.get(sourceOf(ctx).id, id) : null;
    if (!found) throw notFound(); // another source's transponder is as unknown as a missing one
    return found;
  }

  /**
   * The bodies, parsed at the edge by the transponder rules. An update's body is read by the
   * rules in the handler, once its transponder is found (another source's is 404 before its body
   * is read), as the rules need the current one.
   */
  const input = {
    /** POST /transponders: the fields (order 0 stands for "last", placed by the repository) and whether it goes last */
    create: validate({
      body: (body: unknown) => {
        const raw = objectBody(body);
        return { fields: transponderFields(raw, null, 0), atEnd: !orderGiven(raw) };
      },
    }),
    /** PUT/PATCH /transponders/:id: the body as sent, read by the rules over the found transponder */
    update: validate({ body: (body: unknown) => body }),
  };

  return {
    input,

    async source(ctx: Context): Promise<void> {
      const source = sourceOf(ctx);
      if (source.type === 'database') {
        // One bucket of the system key: a database that cannot be reached answers 503, not 500.
        const at = new Date(deps.now()).toISOString();
        try {
          await deps.metrics.series(source, {
            key: SYSTEM_KEY,
            from: at,
            to: at,
            granularity: source.defaultGranularity,
          });
        } catch (err) {
          if (err instanceof AppError && err.status === 503) throw err;
          deps.log.warn('source unreachable', { source: source.id, error: (err as Error).message });
          throw new AppError('unavailable', 'The database source cannot be reached', { retryAfter: 5 });
        }
      }
      ctx.body = {
        data: {
          api_version: 'v1',
          server_version: SERVER_VERSION,
          id: source.id,
          type: source.type,
          display_name: source.displayName,
          default_timeframe: source.defaultTimeframe,
          default_granularity: source.defaultGranularity,
          available_granularities: source.granularities,
          time_zone: source.timeZone,
        },
      };
    },

    async list(ctx: Context): Promise<void> {
      ctx.body = { data: (await repo.list(sourceOf(ctx).id)).map(presentTransponder) };
    },

    async show(ctx: Context): Promise<void> {
      ctx.body = { data: presentTransponder(await find(ctx)) };
    },

    async create(ctx: Context): Promise<void> {
      const source = sourceOf(ctx);
      const { fields, atEnd } = input.create.takeBody(ctx);
      const now = deps.now();
      const t: Transponder = {
        ...fields,
        id: newId(),
        organizationId: source.organizationId,
        sourceType: source.type,
        sourceId: source.id,
        insertedAt: now,
        updatedAt: now,
      };
      const stored = await repo.insert(t, atEnd);
      if (!stored) throw notFound(); // the source was deleted meanwhile
      ctx.status = 201;
      ctx.body = { data: presentTransponder(stored) };
    },

    async update(ctx: Context): Promise<void> {
      const current = await find(ctx);
      const body = objectBody(input.update.takeBody(ctx));
      // The body is read over the transponder as read in the repository's atomic unit, so a change
      // made since `current` was read keeps the fields this one leaves out.
      const t = await repo.update(current.sourceId, current.id, (read) => ({
        ...read,
        ...transponderFields(body, read, read.order),
        updatedAt: deps.now(),
      }));
      if (!t) throw notFound(); // deleted since it was read
      ctx.body = { data: presentTransponder(t) };
    },

    async remove(ctx: Context): Promise<void> {
      const t = await find(ctx);
      if (!(await repo.remove(t.sourceId, t.id))) throw notFound(); // deleted meanwhile
      ctx.body = { data: presentTransponder(t) };
    },
  };
}
