// The web interface's sessions: prepared statements only. Not cached: a revoked session fails at
// once. One store per database (the auth middleware and the session routes share it).
import type { Db } from './db';

export interface SessionRow {
  id: string;
  user_id: string;
  token_hash: string;
  user_agent: string | null;
  address: string | null;
  created_at: number;
  last_seen_at: number;
}

function createSessionsRepo(db: Db) {
  const q = {
    insert: db.prepare<SessionRow>(
      `INSERT INTO web_sessions (id, user_id, token_hash, user_agent, address, created_at, last_seen_at)
       VALUES (@id, @user_id, @token_hash, @user_agent, @address, @created_at, @last_seen_at)`,
    ),
    byHash: db.prepare<[string], SessionRow>('SELECT * FROM web_sessions WHERE token_hash = ?'),
    byUser: db.prepare<[string], SessionRow>(
      'SELECT * FROM web_sessions WHERE user_id = ? ORDER BY created_at DESC, id LIMIT 200',
    ),
    touch: db.prepare<[number, string]>('UPDATE web_sessions SET last_seen_at = ? WHERE id = ?'),
    remove: db.prepare<[string, string]>('DELETE FROM web_sessions WHERE id = ? AND user_id = ?'),
    removeById: db.prepare<[string]>('DELETE FROM web_sessions WHERE id = ?'),
    removeExpired: db.prepare<[string, number, number]>(
      'DELETE FROM web_sessions WHERE user_id = ? AND (last_seen_at <= ? OR created_at <= ?)',
    ),
  };
  return {
    insert: (row: SessionRow) => void q.insert.run(row),
    byHash: (hash: string): SessionRow | undefined => q.byHash.get(hash),
    listByUser: (userId: string): SessionRow[] => q.byUser.all(userId),
    touch: (id: string, at: number) => void q.touch.run(at, id),
    /** true when the user's session was deleted */
    remove: (id: string, userId: string): boolean => q.remove.run(id, userId).changes > 0,
    removeById: (id: string) => void q.removeById.run(id),
    /** Deletes the user's sessions last used at or before `idleBefore` or made at or before `madeBefore`. */
    removeExpired: (userId: string, idleBefore: number, madeBefore: number) =>
      void q.removeExpired.run(userId, idleBefore, madeBefore),
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;

const repos = new WeakMap<Db, SessionsRepo>();

export function sessionsRepo(db: Db): SessionsRepo {
  let repo = repos.get(db);
  if (!repo) {
    repo = createSessionsRepo(db);
    repos.set(db, repo);
  }
  return repo;
}
