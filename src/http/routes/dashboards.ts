// /api/v1/dashboards: list, show, create, update, remove (SPEC 6). Order of answers on a change:
// auth -> 400 (body not an object) -> 404 -> 409 (locked) -> 422.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import type { Auth } from '../../domain/types';
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
import { bodyObject } from '../middleware/body';
import { parseDashboardFields, parsePage, unwrap } from '../schemas/dashboards';
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

const authOf = (ctx: Context): Auth => ctx.state.auth as Auth;
const idOf = (ctx: Context): string => String(ctx.params.id ?? '');

export function dashboardRoutes(deps: Deps) {
  const domain = dashboardsContext(deps);
  return {
    async list(ctx: Context): Promise<void> {
      const { limit, offset } = parsePage(ctx.query);
      const page = listDashboards(domain, authOf(ctx), limit, offset);
      ctx.body = { data: page.dashboards.map(presentDashboard), meta: { total: page.total, limit, offset } };
    },

    async show(ctx: Context): Promise<void> {
      ctx.body = { data: presentDashboard(showDashboard(domain, authOf(ctx), idOf(ctx))) };
    },

    async create(ctx: Context): Promise<void> {
      const fields = unwrap(bodyObject(ctx), 'dashboard');
      const bag = new ErrorBag();
      const input = parseDashboardFields(fields, bag);
      const dashboard = createDashboard(domain, authOf(ctx), input, bag);
      ctx.status = 201;
      ctx.body = { data: presentDashboard(dashboard) };
    },

    async update(ctx: Context): Promise<void> {
      const fields = unwrap(bodyObject(ctx), 'dashboard');
      const current = findChangeable(domain, authOf(ctx), idOf(ctx), fields.locked === false);
      const bag = new ErrorBag();
      const input = parseDashboardFields(fields, bag);
      ctx.body = { data: presentDashboard(updateDashboard(domain, current, input, bag)) };
    },

    async remove(ctx: Context): Promise<void> {
      const current = findChangeable(domain, authOf(ctx), idOf(ctx), false);
      ctx.body = { data: presentDashboard(removeDashboard(domain, current)) };
    },
  };
}
