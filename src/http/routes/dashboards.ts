// /api/v1/dashboards: list, show, create, update, remove (SPEC 6). Order of answers on a change:
// auth -> 400 (body not an object) -> 404 -> 409 (locked) -> 422.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import {
  type DashboardsContext,
  createDashboard,
  findChangeable,
  listDashboards,
  removeDashboard,
  showDashboard,
  updateDashboard,
} from '../../domain/dashboards/dashboards';
import { ErrorBag } from '../../domain/dashboards/issues';
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
  };
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
      return { input: parseDashboardFields(fields, bag), bag, unlocking: fields.locked === false };
    },
  }),
};

const idOf = (ctx: Context): string => String(ctx.params.id ?? '');

export function dashboardRoutes(deps: Deps) {
  const domain = dashboardsContext(deps);
  return {
    async list(ctx: Context): Promise<void> {
      const { limit, offset } = dashboardInput.page.query(ctx);
      const page = listDashboards(domain, authOf(ctx), limit, offset);
      ctx.body = { data: page.dashboards.map(presentDashboard), meta: { total: page.total, limit, offset } };
    },

    async show(ctx: Context): Promise<void> {
      ctx.body = { data: presentDashboard(showDashboard(domain, authOf(ctx), idOf(ctx))) };
    },

    async create(ctx: Context): Promise<void> {
      const { input, bag } = dashboardInput.fields.body(ctx);
      const dashboard = createDashboard(domain, authOf(ctx), input, bag);
      ctx.status = 201;
      ctx.body = { data: presentDashboard(dashboard) };
    },

    async update(ctx: Context): Promise<void> {
      const { input, bag, unlocking } = dashboardInput.fields.body(ctx);
      const current = findChangeable(domain, authOf(ctx), idOf(ctx), unlocking);
      ctx.body = { data: presentDashboard(updateDashboard(domain, current, input, bag)) };
    },

    async remove(ctx: Context): Promise<void> {
      const current = findChangeable(domain, authOf(ctx), idOf(ctx), false);
      ctx.body = { data: presentDashboard(removeDashboard(domain, current)) };
    },
  };
}
