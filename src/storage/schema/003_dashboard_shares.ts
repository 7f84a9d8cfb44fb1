// Read-only share links of dashboards (docs/interface.md): a random token per link, stored as its
// SHA-256 hash with the last 5 characters to recognise it by; deleted with its dashboard.
export const DASHBOARD_SHARES_SCHEMA = `
CREATE TABLE dashboard_shares (
  id TEXT PRIMARY KEY,
  dashboard_id TEXT NOT NULL REFERENCES dashboards(id) ON DELETE CASCADE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  last5 TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX dashboard_shares_dashboard ON dashboard_shares(dashboard_id);
`;
