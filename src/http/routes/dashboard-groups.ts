// /api/v1/dashboard-groups: list, show, create, update, remove (SPEC 6 extension). The body may
// sit at the top level or under `dashboard_group`.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import type { Auth } from '../../domain/types';
import { createGroup, findGroup, listGroups, removeGroup, updateGroup } from '../../domain/dashboards/groups';
import { ErrorBag } from '../../domain/dashboards/issues';
import { bodyObject } from '../middleware/body';
import { parseGroupFields, parsePage, unwrap } from '../schemas/dashboards';
import { presentGroup } from '../present/dashboards';
import { dashboardsContext } from './dashboards';

const authOf = (ctx: Context): Auth => ctx.state.auth as Auth;
const idOf = (ctx: Context): string => String(ctx.params.id ?? '');

export function dashboardGroupRoutes(deps: Deps) {
  const domain = dashboardsContext(deps);
  return {
    async list(ctx: Context): Promise<void> {
      const { limit, offset } = parsePage(ctx.query);
      const page = listGroups(domain, authOf(ctx), limit, offset);
      ctx.body = { data: page.groups.map(presentGroup), meta: { total: page.total, limit, offset } };
    },

    async show(ctx: Context): Promise<void> {
      ctx.body = { data: presentGroup(findGroup(domain, authOf(ctx), idOf(ctx))) };
    },

    async create(ctx: Context): Promise<void> {
      const fields = unwrap(bodyObject(ctx), 'dashboard_group');
      const bag = new ErrorBag();
      const group = createGroup(domain, authOf(ctx), parseGroupFields(fields, bag), bag);
      ctx.status = 201;
      ctx.body = { data: presentGroup(group) };
    },

    async update(ctx: Context): Promise<void> {
      const fields = unwrap(bodyObject(ctx), 'dashboard_group');
      const current = findGroup(domain, authOf(ctx), idOf(ctx));
      const bag = new ErrorBag();
      ctx.body = { data: presentGroup(updateGroup(domain, current, parseGroupFields(fields, bag), bag)) };
    },

    async remove(ctx: Context): Promise<void> {
      const current = findGroup(domain, authOf(ctx), idOf(ctx));
      ctx.body = { data: presentGroup(removeGroup(domain, current)) };
    },
  };
}
