// The web interface's sign-in sessions (SPEC 10, docs/interface.md). The cookie carries a session
// credential of its own, `svc_ses_` + 43 base64url characters, which no API endpoint takes as a
// bearer token; only its SHA-256 hash is stored. The server ends a session unused for
// `session.idle_timeout_seconds` or older than `session.max_lifetime_seconds`; the user lists
// and revokes sessions on the account page, and signing out revokes the session.
import { randomBytes } from 'node:crypto';
import type { Ports } from './ports';
import { notFound } from '../errors';
import { newId, normalizeId } from '../lib/ids';
import { hashToken } from '../lib/tokens';
import { sessionsRepo, type SessionRow } from '../storage/sessions';

export const SESSION_PREFIX = 'svc_ses_';
const SESSION_SHAPE = /^svc_ses_[A-Za-z0-9_-]{43}$/;
/** last_seen_at is written at most this often per session (idle time is kept to this precision). */
const TOUCH_EVERY_MS = 60_000;
const MAX_USER_AGENT = 200;

type SessionDeps = Pick<Ports, 'db' | 'config' | 'now'>;

const limits = (deps: SessionDeps) => ({
  idleMs: deps.config.session.idleTimeoutSeconds * 1000,
  maxMs: deps.config.session.maxLifetimeSeconds * 1000,
});

/** The cookie's lifetime: the session's absolute one (the server enforces both limits anyway). */
export const sessionCookieMaxAgeMs = (deps: SessionDeps): number => limits(deps).maxMs;

export function openSession(
  deps: SessionDeps,
  userId: string,
  meta: { userAgent: string; address: string },
): { value: string; row: SessionRow } {
  const repo = sessionsRepo(deps.db);
  const now = deps.now();
  const { idleMs, maxMs } = limits(deps);
  repo.removeExpired(userId, now - idleMs, now - maxMs); // the user's stale rows go as a new one comes
  const value = SESSION_PREFIX + randomBytes(32).toString('base64url');
  const row: SessionRow = {
    id: newId(),
    user_id: userId,
    token_hash: hashToken(value),
    user_agent: meta.userAgent ? meta.userAgent.slice(0, MAX_USER_AGENT) : null,
    address: meta.address || null,
    created_at: now,
    last_seen_at: now,
  };
  repo.insert(row);
  return { value, row };
}

/** The live session of a cookie value, or null (unknown, malformed, idle too long or too old: ended). */
export function resolveSession(deps: SessionDeps, value: string): SessionRow | null {
  if (!SESSION_SHAPE.test(value)) return null;
  const repo = sessionsRepo(deps.db);
  const row = repo.byHash(hashToken(value));
  if (!row) return null;
  const now = deps.now();
  const { idleMs, maxMs } = limits(deps);
  if (now - row.last_seen_at >= idleMs || now - row.created_at >= maxMs) {
    repo.removeById(row.id);
    return null;
  }
  if (now - row.last_seen_at >= TOUCH_EVERY_MS) repo.touch(row.id, now);
  return row;
}

export function listSessions(deps: SessionDeps, userId: string): SessionRow[] {
  const now = deps.now();
  const { idleMs, maxMs } = limits(deps);
  return sessionsRepo(deps.db)
    .listByUser(userId)
    .filter((row) => now - row.last_seen_at < idleMs && now - row.created_at < maxMs);
}

/** Ends one of the user's sessions; another user's, or an unknown one, is 404. */
export function revokeSession(deps: SessionDeps, userId: string, rawId: string): void {
  const id = normalizeId(rawId);
  if (!id || !sessionsRepo(deps.db).remove(id, userId)) throw notFound();
}

export function endSession(deps: SessionDeps, id: string): void {
  sessionsRepo(deps.db).removeById(id);
}

/** The times a session ends at: after its idle time from its last use, or at its lifetime. */
export function sessionEnds(deps: SessionDeps, row: SessionRow): { idle: number; absolute: number } {
  const { idleMs, maxMs } = limits(deps);
  return { idle: row.last_seen_at + idleMs, absolute: row.created_at + maxMs };
}
