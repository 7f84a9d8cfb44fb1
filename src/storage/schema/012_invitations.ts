// Organization members beyond the owner: an invitation is a link with a role that expires; only the
// SHA-256 hash of its token is kept, as for API tokens.
export const INVITATIONS_SCHEMA = `
CREATE TABLE invitations (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  last5 TEXT NOT NULL,
  created_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  accepted_by TEXT REFERENCES users(id) ON DELETE SET NULL,
  accepted_at INTEGER
);
CREATE INDEX invitations_organization ON invitations(organization_id);
`;
