// The web sessions repository on PostgreSQL (cluster mode): the same methods and rows as
// ../sessions.ts, in PostgreSQL's dialect. Not cached either: a session revoked on one node fails
// at once on every node.
import type { PgStore } from './client';
import type { SessionRow, SessionsRepo } from '../sessions';

const SESSION = 'id, user_id, token_hash, user_agent, address, created_at, last_seen_at';

export function createPgSessionsRepo(store: PgStore): SessionsRepo {
  return {
    open: (row, idleBefore, madeBefore) =>
      store.tx(async (sql) => {
        await sql.run(
          'DELETE FROM web_sessions WHERE user_id = $1 AND (last_seen_at <= $2 OR created_at <= $3)',
          [row.user_id, idleBefore, madeBefore],
        );
        await sql.run(`INSERT INTO web_sessions (${SESSION}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
          row.id,
          row.user_id,
          row.token_hash,
          row.user_agent,
          row.address,
          row.created_at,
          row.last_seen_at,
        ]);
      }),
    byHash: (hash) =>
      store.one<SessionRow>(`SELECT ${SESSION} FROM web_sessions WHERE token_hash = $1`, [hash]),
    listByUser: (userId) =>
      store.rows<SessionRow>(
        `SELECT ${SESSION} FROM web_sessions WHERE user_id = $1 ORDER BY created_at DESC, id COLLATE "C" LIMIT 200`,
        [userId],
      ),
    touch: async (id, at) =>
      void (await store.run('UPDATE web_sessions SET last_seen_at = $1 WHERE id = $2', [at, id])),
    remove: async (id, userId) =>
      (await store.run('DELETE FROM web_sessions WHERE id = $1 AND user_id = $2', [id, userId])) > 0,
    removeById: async (id) => void (await store.run('DELETE FROM web_sessions WHERE id = $1', [id])),
  };
}
