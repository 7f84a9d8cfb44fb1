// /api/v1/dashboard-groups: list, show, create, update, remove (SPEC 6 extension). The body may
// sit at the top level or under `dashboard_group`.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import { createGroup, findGroup, listGroups, removeGroup, saveGroup } from '../../domain/dashboards/groups';
import { ErrorBag } from '../../domain/dashboards/issues';
import { objectBody } from '../middleware/body';
import { validate } from '../middleware/validate';
import { parseGroupFields, unwrap } from '../schemas/dashboards';
import { authOf } from '../state';
import { presentGroup } from '../present/dashboards';
import { dashboardInput, dashboardsContext, expectedVersion } from './dashboards';
import { etagOf } from '../../domain/dashboards/versions';

/** The inputs of the group routes, parsed at the edge (validate.ts); field issues go to the bag. */
export const groupInput = {
  page: dashboardInput.page,
  fields: validate({
    body: (body: unknown) => {
      const bag = new ErrorBag();
      const fields = unwrap(objectBody(body), 'dashboard_group');
      return { input: parseGroupFields(fields, bag), bag, fields };
    },
  }),
};

const idOf = (ctx: Context): string => String(ctx.params.id ?? '');

export function dashboardGroupRoutes(deps: Deps) {
  const domain = dashboardsContext(deps);
  return {
    async list(ctx: Context): Promise<void> {
      const { limit, offset } = groupInput.page.query(ctx);
      const page = await listGroups(domain, authOf(ctx), limit, offset);
      ctx.body = { data: page.groups.map(presentGroup), meta: { total: page.total, limit, offset } };
    },

    async show(ctx: Context): Promise<void> {
      const group = await findGroup(domain, authOf(ctx), idOf(ctx));
      ctx.set('ETag', etagOf(group));
      ctx.body = { data: presentGroup(group) };
    },

    async create(ctx: Context): Promise<void> {
      const { input, bag } = groupInput.fields.body(ctx);
      const group = await createGroup(domain, authOf(ctx), input, bag);
      ctx.status = 201;
      ctx.body = { data: presentGroup(group) };
    },

    async update(ctx: Context): Promise<void> {
      const { input, bag, fields } = groupInput.fields.body(ctx);
      const auth = authOf(ctx);
      const expected = expectedVersion(ctx, fields, bag);
      const updated = await saveGroup(
        domain,
        auth,
        idOf(ctx),
        input,
        bag,
        auth.kind === 'user' ? auth.userId : null,
        expected,
      );
      ctx.set('ETag', etagOf(updated));
      ctx.body = { data: presentGroup(updated) };
    },

    async remove(ctx: Context): Promise<void> {
      const current = await findGroup(domain, authOf(ctx), idOf(ctx));
      ctx.body = { data: presentGroup(await removeGroup(domain, current)) };
    },
  };
}
