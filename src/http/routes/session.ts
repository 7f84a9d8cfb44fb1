// The web interface's extensions of /api/v1 (docs/interface.md): a cookie session made through the
// API's own login, the first-run state, listing and revoking source tokens, and an
// organization-scoped series read for the signed-in user. Thin handlers, as everywhere.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import { forbidden, notFound, unauthorized } from '../../errors';
import { normalizeId } from '../../lib/ids';
import { tokenKind } from '../../lib/tokens';
import { accountContext, login } from '../../domain/accounts';
import { listSourceTokens, revokeSourceToken } from '../../domain/source-tokens';
import type { UserAuth } from '../../domain/types';
import { authenticate, CSRF_HEADER, SESSION_COOKIE } from '../middleware/auth';
import { presentAccount } from '../present/accounts';
import { presentSourceTokenRow } from '../present/sources';
import { presentSeriesJson } from '../present/metrics';
import { parseSessionLogin, parseSourceTokenFilter } from '../schemas/interface';
import { objectBody } from '../middleware/body';
import { stateOf, userAuthOf } from '../state';

const SESSION_MAX_AGE_MS = 30 * 24 * 3600 * 1000;
const userAuth = userAuthOf; // requireUser ran (router.ts)

function setSessionCookie(ctx: Context, token: string | null): void {
  ctx.cookies.set(SESSION_COOKIE, token ?? '', {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: ctx.secure,
    overwrite: true,
    maxAge: token ? SESSION_MAX_AGE_MS : 0,
  });
}

/** Session changes come from the interface's own script: a form of another site cannot send this header. */
function requireCsrfHeader(ctx: Context): void {
  if (ctx.get(CSRF_HEADER) === '') throw forbidden('Missing X-Service-CSRF header');
}

/** The bearer user token of a request that adopts it as its session (the first-run signup's token). */
function adoptedToken(ctx: Context, deps: Deps): { value: string; auth: UserAuth } {
  const auth = authenticate(ctx, deps);
  if (auth.kind !== 'user') throw forbidden(); // a source token on a bootstrap-like endpoint (SPEC 3)
  const value = /^Bearer[ ]+(\S+)/i.exec(ctx.get('authorization'))?.[1] ?? '';
  if (auth.viaCookie || tokenKind(value) !== 'user') throw unauthorized();
  return { value, auth };
}

export function sessionRoutes(deps: Deps) {
  return {
    /** POST /session: credentials (the login's checks and throttle), or a bearer user token with no body. */
    async create(ctx: Context): Promise<void> {
      requireCsrfHeader(ctx);
      const { body } = stateOf(ctx);
      if (body === undefined) {
        const { value, auth } = adoptedToken(ctx, deps);
        setSessionCookie(ctx, value);
        ctx.status = 201;
        ctx.body = { data: presentAccount(accountContext(deps, auth.userId)) };
        return;
      }
      const session = await login(deps, parseSessionLogin(objectBody(body)), ctx.ip);
      setSessionCookie(ctx, session.token.value);
      ctx.status = 201;
      ctx.body = { data: presentAccount(session) };
    },

    /** DELETE /session: revokes the token (cookie or bearer) and clears the cookie. */
    async remove(ctx: Context): Promise<void> {
      const auth = userAuth(ctx);
      deps.accounts.deleteUserToken(auth.tokenId);
      setSessionCookie(ctx, null);
      ctx.body = { data: { signed_out: true } };
    },

    async show(ctx: Context): Promise<void> {
      ctx.body = { data: presentAccount(accountContext(deps, userAuth(ctx).userId)) };
    },

    /** GET /bootstrap/setup-state: no auth; whether the interface should offer the first-run form. */
    async setupState(ctx: Context): Promise<void> {
      const open = deps.config.features.registrationEnabled;
      ctx.body = {
        data: {
          needs_setup: open && !deps.accounts.hasAnyUser(),
          registration_enabled: open,
          projects_enabled: deps.config.features.projectsEnabled,
        },
      };
    },

    async listSourceTokens(ctx: Context): Promise<void> {
      const sourceId = parseSourceTokenFilter(ctx.query);
      ctx.body = { data: listSourceTokens(deps, userAuth(ctx), sourceId).map(presentSourceTokenRow) };
    },

    async revokeSourceToken(ctx: Context): Promise<void> {
      const id = normalizeId(ctx.params.id);
      if (!id) throw notFound();
      ctx.body = { data: presentSourceTokenRow(revokeSourceToken(deps, userAuth(ctx), id)) };
    },

    /** GET /sources/:id/metrics: GET /metrics' parameters and rules, for a source of the user's organization. */
    async sourceSeries(ctx: Context): Promise<void> {
      const id = normalizeId(ctx.params.id);
      const org = userAuth(ctx).organizationId;
      const source = id && org ? deps.sources.inOrganization(id, org) : undefined;
      if (!source) throw notFound();
      const series = await deps.metrics.series(source, ctx.query);
      ctx.type = 'application/json';
      ctx.body = presentSeriesJson(series);
    },
  };
}
