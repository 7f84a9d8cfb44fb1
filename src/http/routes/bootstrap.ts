// Bootstrap endpoints (SPEC section 4): thin handlers, each validated input -> one domain call ->
// present. Authentication and body parsing run before them (see router.ts).
import { rm } from 'node:fs/promises';
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import type { UserAuth } from '../../domain/types';
import { accountContext, assertRegistrationOpen, login, signup } from '../../domain/accounts';
import { assertNoOrganization, createOrganization } from '../../domain/organizations';
import {
  assertProjectsEnabled,
  createProject,
  listSources,
  projectInOrganization,
  requireOrganization,
  updateProject,
} from '../../domain/sources';
import { createDatabase, setupDatabase } from '../../domain/databases';
import { createSourceToken } from '../../domain/source-tokens';
import type { UploadedFile } from '../../domain/sqlite-paths';
import { bodyObject } from '../middleware/body';
import {
  parseLogin,
  parseOrganization,
  parseProject,
  parseProjectUpdate,
  parseSignup,
  parseSourceToken,
} from '../schemas/bootstrap';
import { parseDatabase } from '../schemas/databases';
import { presentAccount, presentMembership, presentOrganization, presentSession } from '../present/accounts';
import { presentSource, presentSourceList, presentSourceToken } from '../present/sources';

const userAuth = (ctx: Context): UserAuth => ctx.state.auth as UserAuth;

function created(ctx: Context, data: unknown): void {
  ctx.status = 201;
  ctx.body = { data };
}

/** Every file the multipart reader staged, whatever its field name. */
function stagedFiles(ctx: Context): UploadedFile[] {
  const files = (ctx.state.files ?? {}) as Record<string, UploadedFile | UploadedFile[]>;
  return Object.values(files).flat();
}

/** The `sqlite_file` upload, if one was sent. */
function sqliteUpload(ctx: Context): UploadedFile | null {
  const files = (ctx.state.files ?? {}) as Record<string, UploadedFile | UploadedFile[] | undefined>;
  const file = files.sqlite_file;
  return (Array.isArray(file) ? file[0] : file) ?? null;
}

export function bootstrapRoutes(deps: Deps) {
  return {
    async signup(ctx: Context): Promise<void> {
      assertRegistrationOpen(deps);
      const input = parseSignup(bodyObject(ctx));
      created(ctx, presentSession(await signup(deps, input)));
    },

    async login(ctx: Context): Promise<void> {
      const input = parseLogin(bodyObject(ctx));
      created(ctx, presentSession(await login(deps, input, ctx.ip)));
    },

    async me(ctx: Context): Promise<void> {
      ctx.body = { data: presentAccount(accountContext(deps, userAuth(ctx).userId)) };
    },

    async createOrganization(ctx: Context): Promise<void> {
      const body = bodyObject(ctx);
      const { userId } = userAuth(ctx);
      assertNoOrganization(deps, userId);
      const { organization, membership } = createOrganization(deps, userId, parseOrganization(body).name);
      created(ctx, { organization: presentOrganization(organization), membership: presentMembership(membership) });
    },

    async listSources(ctx: Context): Promise<void> {
      ctx.body = { data: presentSourceList(listSources(deps, userAuth(ctx))) };
    },

    async createDatabase(ctx: Context): Promise<void> {
      try {
        const body = bodyObject(ctx);
        requireOrganization(userAuth(ctx));
        const input = parseDatabase(body);
        const source = await createDatabase(deps, userAuth(ctx), input, sqliteUpload(ctx));
        created(ctx, { source: presentSource(source) });
      } finally {
        // A used upload was moved away already; anything still staged is removed.
        await Promise.all(stagedFiles(ctx).map((f) => rm(f.filepath, { force: true })));
      }
    },

    async setupDatabase(ctx: Context): Promise<void> {
      if (ctx.state.body !== undefined) bodyObject(ctx); // no fields, but junk is still a 400
      const result = await setupDatabase(deps, userAuth(ctx), String(ctx.params.id));
      ctx.body = { data: { source: presentSource(result.source), setup: result.setup } };
    },

    async createProject(ctx: Context): Promise<void> {
      assertProjectsEnabled(deps);
      const body = bodyObject(ctx);
      requireOrganization(userAuth(ctx));
      created(ctx, { source: presentSource(createProject(deps, userAuth(ctx), parseProject(body))) });
    },

    async updateProject(ctx: Context): Promise<void> {
      const body = bodyObject(ctx);
      const project = projectInOrganization(deps, userAuth(ctx), String(ctx.params.id));
      const next = updateProject(deps, project, parseProjectUpdate(body, project.granularities));
      ctx.body = { data: { source: presentSource(next) } };
    },

    async createSourceToken(ctx: Context): Promise<void> {
      const input = parseSourceToken(bodyObject(ctx));
      created(ctx, presentSourceToken(createSourceToken(deps, userAuth(ctx), input)));
    },
  };
}
