// The share links repository on PostgreSQL (cluster mode): the same methods and rows as
// ../shares.ts, in PostgreSQL's dialect. Not cached: a revoked link fails at once on every node.
import type { PgStore } from './client';
import type { ShareRow, SharesRepo } from '../shares';

export function createPgSharesRepo(store: PgStore): SharesRepo {
  return {
    // Only while the dashboard is there: one statement, whose FOR KEY SHARE on the dashboard row
    // waits for a delete in progress and then inserts nothing (no foreign-key error).
    insert: async (row: ShareRow): Promise<boolean> =>
      (await store.run(
        `INSERT INTO dashboard_shares (id, dashboard_id, organization_id, user_id, token_hash, last5, created_at)
         SELECT $1, id, organization_id, $4, $5, $6, $7 FROM dashboards
         WHERE id = $2 AND organization_id = $3
         FOR KEY SHARE`,
        [
          row.id,
          row.dashboard_id,
          row.organization_id,
          row.user_id,
          row.token_hash,
          row.last5,
          row.created_at,
        ],
      )) > 0,
    byHash: (hash: string): Promise<ShareRow | undefined> =>
      store.one<ShareRow>('SELECT * FROM dashboard_shares WHERE token_hash = $1', [hash]),
    listByDashboard: (dashboardId: string, organizationId: string): Promise<ShareRow[]> =>
      store.rows<ShareRow>(
        `SELECT * FROM dashboard_shares WHERE dashboard_id = $1 AND organization_id = $2
         ORDER BY created_at, id COLLATE "C" LIMIT 100`,
        [dashboardId, organizationId],
      ),
    remove: async (id: string, dashboardId: string, organizationId: string): Promise<boolean> =>
      (await store.run(
        'DELETE FROM dashboard_shares WHERE id = $1 AND dashboard_id = $2 AND organization_id = $3',
        [id, dashboardId, organizationId],
      )) > 0,
  };
}
