// Bearer-token authentication (SPEC section 3). Sets the request state's auth (and source for
// source tokens; handlers read them through state.ts). Token strings are hashed before lookup; junk never reaches the database.
// The web interface's session cookie (docs/interface.md) holds a session credential of its own
// (src/domain/sessions.ts), never an API token, and counts only when no Authorization header is
// sent; as a bearer token it is refused (401). A cookie-authenticated write must carry
// X-Service-CSRF, which a page of another site cannot send without a CORS preflight this server
// never grants.
import type { Context, Next } from 'koa';
import { badRequest, forbidden, unauthorized } from '../../errors';
import { normalizeId } from '../../lib/ids';
import { hashToken, tokenKind } from '../../lib/tokens';
import type { Deps } from '../../deps';
import { resolveSession } from '../../domain/sessions';
import type { Auth, SourceAuth, UserAuth } from '../../domain/types';
import { stateOf } from '../state';
import { hasRole, type Role } from '../../domain/members';

/** The repositories, and for sessions their limits and clock. */
export type AuthRepos = Pick<Deps, 'accounts' | 'sources' | 'sessions' | 'config' | 'now'>;

export const SESSION_COOKIE = 'svc_session';
export const CSRF_HEADER = 'x-service-csrf';
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The session cookie's value, when the request has no Authorization header. */
function cookieToken(ctx: Context): string | null {
  if (ctx.get('authorization') !== '') return null;
  const value = ctx.cookies.get(SESSION_COOKIE);
  if (!value) return null;
  if (!SAFE_METHODS.has(ctx.method) && ctx.get(CSRF_HEADER) === '')
    throw forbidden('Missing X-Service-CSRF header');
  return value;
}

function bearer(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

async function userAuth(
  repos: AuthRepos,
  userId: string,
  tokenId: string,
  sessionId?: string,
): Promise<UserAuth> {
  const membership = await repos.accounts.membershipByUser(userId);
  const auth: UserAuth = {
    kind: 'user',
    tokenId,
    userId,
    organizationId: membership?.organization_id ?? null,
    role: membership?.role ?? null,
  };
  if (sessionId !== undefined) {
    auth.viaCookie = true;
    auth.sessionId = sessionId;
  }
  return auth;
}

/** Resolves the request's session cookie or bearer token to an Auth, or throws 401. */
export async function authenticate(ctx: Context, repos: AuthRepos): Promise<Auth> {
  const fromCookie = cookieToken(ctx);
  if (fromCookie !== null) {
    const session = await resolveSession(repos, fromCookie);
    if (!session) throw unauthorized();
    return await userAuth(repos, session.user_id, session.id, session.id);
  }
  const value = bearer(ctx);
  const kind = value ? tokenKind(value) : null;
  if (!value || !kind) throw unauthorized();
  const hash = hashToken(value);
  if (kind === 'user') {
    const token = await repos.accounts.userTokenByHash(hash);
    if (!token) throw unauthorized();
    return await userAuth(repos, token.user_id, token.id);
  }
  const token = await repos.sources.tokenByHash(hash);
  if (!token) throw unauthorized();
  const auth: SourceAuth = {
    kind: 'source',
    tokenId: token.id,
    sourceId: token.source_id,
    organizationId: token.organization_id,
    userId: token.user_id,
    read: token.can_read === 1,
    write: token.can_write === 1,
  };
  return auth;
}

/**
 * The source header of a request. Metrics calls also accept the Trifle::Stats libraries' name
 * X-Trifle-Source-Id (SPEC 3), so their HTTP driver works with a changed base URL; both sent and
 * naming different sources is 400.
 */
function sourceHeader(ctx: Context, alias: boolean): string {
  const own = ctx.get('x-service-source-id');
  const upstream = alias ? ctx.get('x-trifle-source-id') : '';
  if (own === '' || upstream === '') return own || upstream;
  const a = normalizeId(own.trim()) ?? own.trim();
  const b = normalizeId(upstream.trim()) ?? upstream.trim();
  if (a !== b) throw badRequest('X-Service-Source-Id and X-Trifle-Source-Id headers name different sources');
  return own;
}

/** Checks X-Service-Source-Id against a source token: missing/malformed -> 400, other source -> 403. */
export function checkSourceHeader(ctx: Context, auth: SourceAuth, required: boolean, alias = false): void {
  const raw = sourceHeader(ctx, alias);
  if (raw === '') {
    if (required) throw badRequest('Missing X-Service-Source-Id header');
    return;
  }
  const id = normalizeId(raw.trim());
  if (!id) throw badRequest('Invalid X-Service-Source-Id header');
  if (id !== auth.sourceId) throw forbidden();
}

/**
 * A member below `minimum` is 403 (src/domain/members.ts). A user without an organization passes:
 * the route answers its own 409 for that.
 */
function checkRole(auth: Auth, minimum: Role): void {
  if (auth.kind === 'user' && auth.organizationId !== null && !hasRole(auth.role, minimum)) {
    throw forbidden(`Requires the ${minimum} role`);
  }
}

/** Routes that change what an organization shares: a user API token of a member with at least `minimum`. */
export function requireMember(repos: AuthRepos, minimum: Role) {
  return async function memberOnly(ctx: Context, next: Next): Promise<void> {
    const auth = await authenticate(ctx, repos);
    if (auth.kind !== 'user') throw forbidden();
    checkRole(auth, minimum);
    stateOf(ctx).auth = auth;
    await next();
  };
}

/** Bootstrap endpoints: a user API token only; a source token is 403. */
export function requireUser(repos: AuthRepos) {
  return async function userOnly(ctx: Context, next: Next): Promise<void> {
    const auth = await authenticate(ctx, repos);
    if (auth.kind !== 'user') throw forbidden();
    stateOf(ctx).auth = auth;
    await next();
  };
}

/** Metrics endpoints: a source token with the permission, bound to the X-Service-Source-Id source. */
export function requireSource(repos: AuthRepos, permission: 'read' | 'write') {
  return async function sourceOnly(ctx: Context, next: Next): Promise<void> {
    const auth = await authenticate(ctx, repos);
    if (auth.kind !== 'source') {
      checkUserOnMetrics(ctx);
      throw forbidden();
    }
    checkSourceHeader(ctx, auth, true, true);
    if (!auth[permission]) throw forbidden();
    const source = await repos.sources.cachedById(auth.sourceId);
    if (!source) throw unauthorized();
    const state = stateOf(ctx);
    state.auth = auth;
    state.source = source;
    await next();
  };
}

// A user token on a metrics endpoint is 403, but the header rules still come first (SPEC 3 order).
function checkUserOnMetrics(ctx: Context): void {
  const raw = sourceHeader(ctx, true);
  if (raw === '') throw badRequest('Missing X-Service-Source-Id header');
  if (!normalizeId(raw.trim())) throw badRequest('Invalid X-Service-Source-Id header');
}

/**
 * Dashboards: either token kind, scoped to its organization; the source header is optional.
 * A source token's own flags hold here too (SPEC 3): `read` to look, `write` to change.
 */
export function requireOrganizationToken(repos: AuthRepos, permission: 'read' | 'write') {
  return async function anyToken(ctx: Context, next: Next): Promise<void> {
    const auth = await authenticate(ctx, repos);
    if (auth.kind === 'source') {
      checkSourceHeader(ctx, auth, false);
      if (!auth[permission]) throw forbidden();
    } else if (permission === 'write') {
      checkRole(auth, 'editor');
    }
    stateOf(ctx).auth = auth;
    await next();
  };
}
