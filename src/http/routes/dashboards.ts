// /api/v1/dashboards: list, show, create, update, remove (SPEC 6). Order of answers on a change:
// auth -> 400 (body not an object) -> 404 -> 409 (locked) -> 422.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import {
  type DashboardsContext,
  createDashboard,
  listDashboards,
  removeDashboard,
  showDashboard,
  saveDashboard,
} from '../../domain/dashboards/dashboards';
import { ErrorBag } from '../../domain/dashboards/issues';
import { type ExpectedVersion, etagOf } from '../../domain/dashboards/versions';
import { parseTimestamp } from '../../shared/time';
import { objectBody } from '../middleware/body';
import { validate } from '../middleware/validate';
import { parseDashboardFields, parsePage, unwrap } from '../schemas/dashboards';
import { authOf } from '../state';
import { presentDashboard } from '../present/dashboards';

/** The domain's view of deps; `now` is read per call so tests can replace deps.now. */
export function dashboardsContext(deps: Deps): DashboardsContext {
  return {
    dashboards: deps.dashboards,
    sources: deps.sources,
    projectsEnabled: deps.config.features.projectsEnabled,
    now: () => deps.now(),
    nameOf: async (userId) => {
      const user = await deps.accounts.userById(userId);
      return user ? user.name || user.email : undefined;
    },
  };
}

/**
 * The version a PUT was edited from: the body's `updated_at` (a timestamp, else a field error in
 * the bag) and the If-Match header. Neither sent: no check, the PUT overwrites.
 */
export function expectedVersion(
  ctx: Context,
  fields: Record<string, unknown>,
  bag: ErrorBag,
): ExpectedVersion {
  const expected: ExpectedVersion = {};
  const sent = fields.updated_at;
  if (sent !== undefined) {
    if (parseTimestamp(sent) === null)
      bag.add('updated_at', 'must be the updated_at timestamp the record was read with');
    else expected.updatedAt = sent as string;
  }
  const ifMatch = ctx.get('If-Match');
  if (ifMatch !== '') expected.ifMatch = ifMatch;
  return expected;
}

/**
 * The inputs of the dashboard routes, parsed at the edge (validate.ts). A body's field issues go to
 * its bag rather than being thrown, so that the domain's checks add theirs and one 422 names all.
 */
export const dashboardInput = {
  page: validate({ query: parsePage }),
  fields: validate({
    body: (body: unknown) => {
      const fields = unwrap(objectBody(body), 'dashboard');
      const bag = new ErrorBag();
      return { input: parseDashboardFields(fields, bag), bag, unlocking: fields.locked === false, fields };
    },
  }),
};

const idOf = (ctx: Context): string => String(ctx.params.id ?? '');

export function dashboardRoutes(deps: Deps) {
  const domain = dashboardsContext(deps);
  return {
    async list(ctx: Context): Promise<void> {
      const { limit, offset } = dashboardInput.page.query(ctx);
      const page = await listDashboards(domain, authOf(ctx), limit, offset);
      ctx.body = { data: page.dashboards.map(presentDashboard), meta: { total: page.total, limit, offset } };
    },

    async show(ctx: Context): Promise<void> {
      const dashboard = await showDashboard(domain, authOf(ctx), idOf(ctx));
      ctx.set('ETag', etagOf(dashboard));
      ctx.body = { data: presentDashboard(dashboard) };
    },

    async create(ctx: Context): Promise<void> {
      const { input, bag } = dashboardInput.fields.body(ctx);
      const dashboard = await createDashboard(domain, authOf(ctx), input, bag);
      ctx.status = 201;
      ctx.body = { data: presentDashboard(dashboard) };
    },

    async update(ctx: Context): Promise<void> {
      const { input, bag, unlocking, fields } = dashboardInput.fields.body(ctx);
      const auth = authOf(ctx);
      const expected = expectedVersion(ctx, fields, bag);
      const updated = await saveDashboard(
        domain,
        auth,
        idOf(ctx),
        unlocking,
        input,
        bag,
        auth.kind === 'user' ? auth.userId : null,
        expected,
      );
      ctx.set('ETag', etagOf(updated));
      ctx.body = { data: presentDashboard(updated) };
    },

    async remove(ctx: Context): Promise<void> {
      ctx.body = { data: presentDashboard(await removeDashboard(domain, authOf(ctx), idOf(ctx))) };
    },
  };
}
