// Bootstrap endpoints (SPEC section 4): thin handlers, each validated input -> one domain call ->
// present. Authentication and body parsing run before them (see router.ts).
import { rm } from 'node:fs/promises';
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import type { Source } from '../../domain/types';
import { accountContext, assertRegistrationOpen, login, signup } from '../../domain/accounts';
import { assertNoOrganization, createOrganization } from '../../domain/organizations';
import {
  assertProjectsEnabled,
  createProject,
  databaseInOrganization,
  listSources,
  projectInOrganization,
  removeSource,
  requireOrganization,
  sourceDependents,
  sourceInOrganization,
  updateDatabase,
  updateProject,
  type SourceDependents,
} from '../../domain/sources';
import { createDatabase, setupDatabase } from '../../domain/databases';
import { createSourceToken } from '../../domain/source-tokens';
import { objectBody, optionalObjectBody } from '../middleware/body';
import { validate } from '../middleware/validate';
import {
  parseDatabaseUpdate,
  parseLogin,
  parseOrganization,
  parseProject,
  parseProjectUpdate,
  parseSignup,
  parseSourceToken,
} from '../schemas/bootstrap';
import { parseDatabase } from '../schemas/databases';
import { stagedFiles, uploadedFile, userAuthOf } from '../state';
import { presentAccount, presentMembership, presentOrganization, presentSession } from '../present/accounts';
import { presentSource, presentSourceList, presentSourceToken } from '../present/sources';

/** What went (or would go) with a source, as the API names it. */
function presentDependents(d: SourceDependents) {
  return {
    dashboards: d.dashboards,
    source_tokens: d.tokens,
    transponders: d.transponders,
    metric_keys: d.keys,
    monitors: d.monitors,
  };
}

function created(ctx: Context, data: unknown): void {
  ctx.status = 201;
  ctx.body = { data };
}

/**
 * The bodies of the bootstrap routes, parsed at the edge (validate.ts). The checks that come before
 * a body's fields in SPEC 4's order (registration open, no organization yet, projects enabled, the
 * project named by the path) run inside the parser, in that order, so the answers stay the same.
 */
function bootstrapInput(deps: Deps) {
  return {
    signup: validate({
      body: (body: unknown) => {
        assertRegistrationOpen(deps);
        return parseSignup(objectBody(body));
      },
    }),
    login: validate({ body: (body: unknown) => parseLogin(objectBody(body)) }),
    organization: validate({
      body: (body: unknown, ctx) => {
        const fields = objectBody(body);
        assertNoOrganization(userAuthOf(ctx));
        return parseOrganization(fields);
      },
    }),
    database: validate({
      body: (body: unknown, ctx) => {
        const fields = objectBody(body);
        requireOrganization(userAuthOf(ctx));
        return parseDatabase(fields);
      },
    }),
    setup: validate({ body: optionalObjectBody }), // no fields, but junk is still a 400
    project: validate({
      body: (body: unknown, ctx) => {
        assertProjectsEnabled(deps);
        const fields = objectBody(body);
        requireOrganization(userAuthOf(ctx));
        return parseProject(fields, deps.config.clusters);
      },
    }),
    // The fields are parsed against the stored source, which the handler looks up first (404 before 422).
    projectUpdate: validate({ body: objectBody }),
    databaseUpdate: validate({ body: objectBody }),
    sourceToken: validate({ body: (body: unknown) => parseSourceToken(objectBody(body)) }),
  };
}

export function bootstrapRoutes(deps: Deps) {
  const input = bootstrapInput(deps);
  const removal = { ...deps, removeStoredData: (id: string) => deps.ops.sweeper.removeSource(id) };
  async function remove(ctx: Context, source: Source): Promise<void> {
    const gone = await removeSource(removal, source);
    ctx.body = { data: { source: presentSource(source), removed: presentDependents(gone) } };
  }
  return {
    input,

    async signup(ctx: Context): Promise<void> {
      created(ctx, presentSession(await signup(deps, input.signup.body(ctx))));
    },

    async login(ctx: Context): Promise<void> {
      created(ctx, presentSession(await login(deps, input.login.body(ctx), ctx.ip)));
    },

    async me(ctx: Context): Promise<void> {
      ctx.body = { data: presentAccount(await accountContext(deps, userAuthOf(ctx).userId)) };
    },

    async createOrganization(ctx: Context): Promise<void> {
      const { userId } = userAuthOf(ctx);
      const { organization, membership } = await createOrganization(
        deps,
        userId,
        input.organization.body(ctx).name,
      );
      created(ctx, {
        organization: presentOrganization(organization),
        membership: presentMembership(membership),
      });
    },

    async listSources(ctx: Context): Promise<void> {
      ctx.body = { data: presentSourceList(await listSources(deps, userAuthOf(ctx))) };
    },

    async createDatabase(ctx: Context): Promise<void> {
      try {
        const source = await createDatabase(
          deps,
          userAuthOf(ctx),
          input.database.body(ctx),
          uploadedFile(ctx, 'sqlite_file'),
        );
        created(ctx, { source: presentSource(source) });
      } finally {
        await Promise.all(stagedFiles(ctx).map((f) => rm(f.filepath, { force: true })));
      }
    },

    async setupDatabase(ctx: Context): Promise<void> {
      const result = await setupDatabase(deps, userAuthOf(ctx), String(ctx.params.id));
      ctx.body = { data: { source: presentSource(result.source), setup: result.setup } };
    },

    async createProject(ctx: Context): Promise<void> {
      const project = await createProject(deps, userAuthOf(ctx), input.project.body(ctx));
      created(ctx, { source: presentSource(project) });
    },

    async updateProject(ctx: Context): Promise<void> {
      const fields = input.projectUpdate.body(ctx);
      const project = await projectInOrganization(deps, userAuthOf(ctx), String(ctx.params.id));
      // The body is read against the project as stored: as read here, and again in the edit's unit.
      const update = (current: Source) => parseProjectUpdate(fields, current);
      ctx.body = { data: { source: presentSource(await updateProject(deps, project, update)) } };
    },

    async updateDatabase(ctx: Context): Promise<void> {
      const fields = input.databaseUpdate.body(ctx);
      const database = await databaseInOrganization(deps, userAuthOf(ctx), String(ctx.params.id));
      const update = (current: Source) => parseDatabaseUpdate(fields, current.granularities);
      ctx.body = { data: { source: presentSource(await updateDatabase(deps, database, update)) } };
    },

    /** GET /bootstrap/sources/:id/dependents: what removing the source would take with it. */
    async dependents(ctx: Context): Promise<void> {
      const source = await sourceInOrganization(deps, userAuthOf(ctx), String(ctx.params.id));
      ctx.body = { data: presentDependents(await sourceDependents(deps, source)) };
    },

    async removeProject(ctx: Context): Promise<void> {
      await remove(ctx, await projectInOrganization(deps, userAuthOf(ctx), String(ctx.params.id)));
    },

    async removeDatabase(ctx: Context): Promise<void> {
      await remove(ctx, await databaseInOrganization(deps, userAuthOf(ctx), String(ctx.params.id)));
    },

    async createSourceToken(ctx: Context): Promise<void> {
      created(
        ctx,
        presentSourceToken(await createSourceToken(deps, userAuthOf(ctx), input.sourceToken.body(ctx))),
      );
    },
  };
}
