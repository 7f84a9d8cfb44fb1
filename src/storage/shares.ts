// Dashboard share links: prepared statements only. Not cached: a revoked link fails at once.
import type { Db } from './db';

export interface ShareRow {
  id: string;
  dashboard_id: string;
  organization_id: string;
  user_id: string;
  token_hash: string;
  last5: string;
  created_at: number;
}

export function createSharesRepo(db: Db) {
  const q = {
    // Only while the dashboard is there: the check and the insert are one statement.
    insert: db.prepare<ShareRow>(
      `INSERT INTO dashboard_shares (id, dashboard_id, organization_id, user_id, token_hash, last5, created_at)
       SELECT @id, @dashboard_id, @organization_id, @user_id, @token_hash, @last5, @created_at
       WHERE EXISTS (SELECT 1 FROM dashboards WHERE id = @dashboard_id AND organization_id = @organization_id)`,
    ),
    byHash: db.prepare<[string], ShareRow>('SELECT * FROM dashboard_shares WHERE token_hash = ?'),
    byDashboard: db.prepare<[string, string], ShareRow>(
      'SELECT * FROM dashboard_shares WHERE dashboard_id = ? AND organization_id = ? ORDER BY created_at, id LIMIT 100',
    ),
    remove: db.prepare<[string, string, string]>(
      'DELETE FROM dashboard_shares WHERE id = ? AND dashboard_id = ? AND organization_id = ?',
    ),
  };
  return {
    /** false when the dashboard is gone (deleted since it was read): nothing is inserted */
    insert: async (row: ShareRow): Promise<boolean> => q.insert.run(row).changes > 0,
    byHash: async (hash: string): Promise<ShareRow | undefined> => q.byHash.get(hash),
    listByDashboard: async (dashboardId: string, organizationId: string): Promise<ShareRow[]> =>
      q.byDashboard.all(dashboardId, organizationId),
    /** true when a link was deleted */
    remove: async (id: string, dashboardId: string, organizationId: string): Promise<boolean> =>
      q.remove.run(id, dashboardId, organizationId).changes > 0,
  };
}

export type SharesRepo = ReturnType<typeof createSharesRepo>;
