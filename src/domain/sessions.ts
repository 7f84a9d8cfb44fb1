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
import type { SessionRow } from '../storage/sessions';

export const SESSION_PREFIX = 'svc_ses_';
const SESSION_SHAPE = /^svc_ses_[A-Za-z0-9_-]{43}$/;
/** last_seen_at is written at most this often per session (idle time is kept to this precision). */
const TOUCH_EVERY_MS = 60_000;
const MAX_USER_AGENT = 200;

type SessionDeps = Pick<Ports, 'sessions' | 'config' | 'now'>;

const limits = (deps: SessionDeps) => ({
  idleMs: deps.config.session.idleTimeoutSeconds * 1000,
  maxMs: deps.config.session.maxLifetimeSeconds * 1000,
});

/** The cookie's lifetime: the session's absolute one (the server enforces both limits anyway). */
export const sessionCookieMaxAgeMs = (deps: SessionDeps): number => limits(deps).maxMs;

export async function openSession(
  deps: SessionDeps,
  userId: string,
  meta: { userAgent: string; address: string },
): Promise<{ value: string; row: SessionRow }> {
  const now = deps.now();
  const { idleMs, maxMs } = limits(deps);
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
  await deps.sessions.open(row, now - idleMs, now - maxMs); // the user's stale rows go as a new one comes
  return { value, row };
}

/** The live session of a cookie value, or null (unknown, malformed, idle too long or too old: ended). */
export async function resolveSession(deps: SessionDeps, value: string): Promise<SessionRow | null> {
  if (!SESSION_SHAPE.test(value)) return null;
  const repo = deps.sessions;
  const row = await repo.byHash(hashToken(value));
  if (!row) return null;
  const now = deps.now();
  const { idleMs, maxMs } = limits(deps);
  if (now - row.last_seen_at >= idleMs || now - row.created_at >= maxMs) {
    await repo.removeById(row.id);
    return null;
  }
  if (now - row.last_seen_at >= TOUCH_EVERY_MS) await repo.touch(row.id, now);
  return row;
}

export async function listSessions(deps: SessionDeps, userId: string): Promise<SessionRow[]> {
  const now = deps.now();
  const { idleMs, maxMs } = limits(deps);
  return (await deps.sessions.listByUser(userId)).filter(
    (row) => now - row.last_seen_at < idleMs && now - row.created_at < maxMs,
  );
}

/** Ends one of the user's sessions; another user's, or an unknown one, is 404. */
export async function revokeSession(deps: SessionDeps, userId: string, rawId: string): Promise<void> {
  const id = normalizeId(rawId);
  if (!id || !(await deps.sessions.remove(id, userId))) throw notFound();
}

export async function endSession(deps: SessionDeps, id: string): Promise<void> {
  await deps.sessions.removeById(id);
}

/** The times a session ends at: after its idle time from its last use, or at its lifetime. */
export function sessionEnds(deps: SessionDeps, row: SessionRow): { idle: number; absolute: number } {
  const { idleMs, maxMs } = limits(deps);
  return { idle: row.last_seen_at + idleMs, absolute: row.created_at + maxMs };
}
