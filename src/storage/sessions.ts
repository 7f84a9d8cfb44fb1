// The web interface's sessions: prepared statements only. Not cached: a revoked session fails at
// once. One repository per server (Ports.sessions: the auth middleware and the session routes share it).
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

export function createSessionsRepo(db: Db) {
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
    /**
     * Atomic: the user's expired sessions (last used at or before `idleBefore`, or made at or
     * before `madeBefore`) go and the new one is inserted, in one transaction.
     */
    open: async (row: SessionRow, idleBefore: number, madeBefore: number): Promise<void> =>
      db
        .transaction(() => {
          q.removeExpired.run(row.user_id, idleBefore, madeBefore);
          q.insert.run(row);
        })
        .immediate(),
    byHash: async (hash: string): Promise<SessionRow | undefined> => q.byHash.get(hash),
    listByUser: async (userId: string): Promise<SessionRow[]> => q.byUser.all(userId),
    touch: async (id: string, at: number): Promise<void> => void q.touch.run(at, id),
    /** true when the user's session was deleted */
    remove: async (id: string, userId: string): Promise<boolean> => q.remove.run(id, userId).changes > 0,
    removeById: async (id: string): Promise<void> => void q.removeById.run(id),
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;
