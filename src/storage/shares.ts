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
    insert: db.prepare<ShareRow>(
      `INSERT INTO dashboard_shares (id, dashboard_id, organization_id, user_id, token_hash, last5, created_at)
       VALUES (@id, @dashboard_id, @organization_id, @user_id, @token_hash, @last5, @created_at)`,
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
    insert: (row: ShareRow) => void q.insert.run(row),
    byHash: (hash: string): ShareRow | undefined => q.byHash.get(hash),
    listByDashboard: (dashboardId: string, organizationId: string): ShareRow[] =>
      q.byDashboard.all(dashboardId, organizationId),
    /** true when a link was deleted */
    remove: (id: string, dashboardId: string, organizationId: string): boolean =>
      q.remove.run(id, dashboardId, organizationId).changes > 0,
  };
}

export type SharesRepo = ReturnType<typeof createSharesRepo>;
