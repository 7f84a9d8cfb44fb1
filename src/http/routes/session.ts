// The web interface's extensions of /api/v1 (docs/interface.md): a cookie session made through the
// API's own login checks (a session credential of its own, src/domain/sessions.ts; the user lists
// and revokes their sessions), the first-run state, listing and revoking source tokens, and an
// organization-scoped series read for the signed-in user. Thin handlers, as everywhere.
import type { Context } from 'koa';
import type { Deps } from '../../deps';
import { forbidden, notFound, unauthorized } from '../../errors';
import { normalizeId } from '../../lib/ids';
import { tokenKind } from '../../lib/tokens';
import { accountContext, verifyCredentials, type LoginInput } from '../../domain/accounts';
import {
  listSessions,
  openSession,
  revokeSession,
  endSession,
  sessionCookieMaxAgeMs,
  sessionEnds,
} from '../../domain/sessions';
import { formatTimestamp } from '../../shared/time';
import type { SessionRow } from '../../storage/sessions';
import { listSourceTokens, revokeSourceToken } from '../../domain/source-tokens';
import type { Source, UserAuth } from '../../domain/types';
import { parseSeriesParams, type SeriesParams } from '../../domain/metrics/query/series';
import { authenticate, CSRF_HEADER, SESSION_COOKIE } from '../middleware/auth';
import { presentAccount } from '../present/accounts';
import { presentSourceTokenRow } from '../present/sources';
import { presentSeriesAnswer } from '../present/metrics';
import { parseSessionLogin, parseSourceTokenFilter } from '../schemas/interface';
import { objectBody } from '../middleware/body';
import { validate } from '../middleware/validate';
import { userAuthOf } from '../state';

const userAuth = userAuthOf; // requireUser ran (router.ts)

function setSessionCookie(ctx: Context, value: string | null, maxAgeMs = 0): void {
  ctx.cookies.set(SESSION_COOKIE, value ?? '', {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure: ctx.secure,
    overwrite: true,
    maxAge: value ? maxAgeMs : 0,
  });
}

/** Session changes come from the interface's own script: a form of another site cannot send this header. */
function requireCsrfHeader(ctx: Context): void {
  if (ctx.get(CSRF_HEADER) === '') throw forbidden('Missing X-Service-CSRF header');
}

/** The user of a bearer user token that opens a session (the first-run signup's token). */
async function bearerUser(ctx: Context, deps: Deps): Promise<UserAuth> {
  const auth = await authenticate(ctx, deps);
  if (auth.kind !== 'user') throw forbidden(); // a source token on a bootstrap-like endpoint (SPEC 3)
  const value = /^Bearer[ ]+(\S+)/i.exec(ctx.get('authorization'))?.[1] ?? '';
  if (auth.viaCookie || tokenKind(value) !== 'user') throw unauthorized();
  return auth;
}

/** A session of the account page's list: when it began and was last used, from where, whether it is this one. */
const presentSessionRow = (deps: Deps, row: SessionRow, current: string | undefined) => {
  const ends = sessionEnds(deps, row);
  return {
    id: row.id,
    current: row.id === current,
    user_agent: row.user_agent,
    address: row.address,
    inserted_at: formatTimestamp(row.created_at),
    last_seen_at: formatTimestamp(row.last_seen_at),
    expires_at: formatTimestamp(Math.min(ends.idle, ends.absolute)),
  };
};

/** The organization's source of GET /sources/:id/metrics (404 for any other), then its series parameters. */
async function sourceSeriesParams(
  deps: Deps,
  ctx: Context,
  query: Record<string, unknown>,
): Promise<{ source: Source; params: SeriesParams }> {
  const id = normalizeId(ctx.params.id);
  const org = userAuthOf(ctx).organizationId;
  const source = id && org ? await deps.sources.inOrganization(id, org) : undefined;
  if (!source) throw notFound();
  return { source, params: parseSeriesParams(source, query, { keyRequired: false }) };
}

/**
 * The inputs of these routes, parsed at the edge (validate.ts), with the checks that come first in
 * each route's order run inside the parser: the CSRF header before a session body, the source's
 * lookup before its series parameters.
 */
function sessionInput(deps: Deps) {
  return {
    /** POST /session: the credentials, or null for a bearer user token sent with no body */
    create: validate({
      body: (body: unknown, ctx): LoginInput | null => {
        requireCsrfHeader(ctx);
        return body === undefined ? null : parseSessionLogin(objectBody(body));
      },
    }),
    /** GET /bootstrap/source-tokens: `?source_id=` (optional) */
    sourceTokens: validate({ query: (query) => parseSourceTokenFilter(query) }),
    /** GET /sources/:id/metrics: GET /metrics' parameters against the organization's source */
    sourceSeries: validate({ query: (query, ctx) => sourceSeriesParams(deps, ctx, query) }),
  };
}

export function sessionRoutes(deps: Deps) {
  const input = sessionInput(deps);
  return {
    input,

    /**
     * POST /session: credentials (the login's checks and throttle), or a bearer user token with no
     * body; either opens a new session whose credential only the cookie carries.
     */
    async create(ctx: Context): Promise<void> {
      const credentials = input.create.takeBody(ctx);
      let userId: string;
      if (credentials === null) {
        userId = (await bearerUser(ctx, deps)).userId;
      } else {
        userId = (await verifyCredentials(deps, credentials, ctx.ip)).id;
      }
      const { value } = await openSession(deps, userId, {
        userAgent: ctx.get('user-agent'),
        address: ctx.ip,
      });
      setSessionCookie(ctx, value, sessionCookieMaxAgeMs(deps));
      ctx.status = 201;
      ctx.body = { data: presentAccount(await accountContext(deps, userId)) };
    },

    /**
     * DELETE /session: ends the cookie's session and clears the cookie; with a bearer user token
     * instead, revokes that token and leaves the cookie alone (the first-run form drops the
     * signup's token this way once its session is open).
     */
    async remove(ctx: Context): Promise<void> {
      const auth = userAuth(ctx);
      if (auth.sessionId !== undefined) {
        await endSession(deps, auth.sessionId);
        setSessionCookie(ctx, null);
      } else {
        await deps.accounts.deleteUserToken(auth.tokenId);
      }
      ctx.body = { data: { signed_out: true } };
    },

    /** GET /session/sessions: the signed-in user's live sessions, newest first. */
    async listSessions(ctx: Context): Promise<void> {
      const auth = userAuth(ctx);
      ctx.body = {
        data: (await listSessions(deps, auth.userId)).map((row) =>
          presentSessionRow(deps, row, auth.sessionId),
        ),
      };
    },

    /** DELETE /session/sessions/:id: ends one of the user's sessions (its cookie stops working at once). */
    async revokeSession(ctx: Context): Promise<void> {
      const auth = userAuth(ctx);
      await revokeSession(deps, auth.userId, String(ctx.params.id));
      if (ctx.params.id?.toLowerCase() === auth.sessionId) setSessionCookie(ctx, null);
      ctx.body = { data: { revoked: true } };
    },

    async show(ctx: Context): Promise<void> {
      ctx.body = { data: presentAccount(await accountContext(deps, userAuth(ctx).userId)) };
    },

    /** GET /bootstrap/setup-state: no auth; whether the interface should offer the first-run form. */
    async setupState(ctx: Context): Promise<void> {
      const open = deps.config.features.registrationEnabled;
      ctx.body = {
        data: {
          needs_setup: open && !(await deps.accounts.hasAnyUser()),
          registration_enabled: open,
          projects_enabled: deps.config.features.projectsEnabled,
        },
      };
    },

    async listSourceTokens(ctx: Context): Promise<void> {
      const sourceId = input.sourceTokens.query(ctx);
      ctx.body = { data: (await listSourceTokens(deps, userAuth(ctx), sourceId)).map(presentSourceTokenRow) };
    },

    async revokeSourceToken(ctx: Context): Promise<void> {
      const id = normalizeId(ctx.params.id);
      if (!id) throw notFound();
      ctx.body = { data: presentSourceTokenRow(await revokeSourceToken(deps, userAuth(ctx), id)) };
    },

    /** GET /sources/:id/metrics: GET /metrics' parameters and rules, for a source of the user's organization. */
    async sourceSeries(ctx: Context): Promise<void> {
      const { source, params } = input.sourceSeries.query(ctx);
      ctx.type = 'application/json';
      ctx.body = await deps.metrics.readSeriesAnswer(source, params, presentSeriesAnswer);
    },
  };
}
