// Accounts, organizations, sources, tokens and dashboards. Times are epoch milliseconds (INTEGER).
// Token values are never stored: only their SHA-256 hash (hex) and last 5 characters.
export const CORE_SCHEMA = `
CREATE TABLE users (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  email_lower TEXT NOT NULL UNIQUE,
  name TEXT,
  password_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  slug TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL
);

-- A user belongs to at most one organization (UNIQUE user_id).
CREATE TABLE memberships (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL UNIQUE REFERENCES users(id) ON DELETE CASCADE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX memberships_organization ON memberships(organization_id);

CREATE TABLE user_tokens (
  id TEXT PRIMARY KEY,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  last5 TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX user_tokens_user ON user_tokens(user_id);

-- Projects (embedded store) and databases (an external Trifle::Stats store) share one table.
-- config holds the driver's fields as JSON, credentials included; it is never returned.
CREATE TABLE sources (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  type TEXT NOT NULL CHECK (type IN ('project', 'database')),
  display_name TEXT NOT NULL,
  driver TEXT,
  time_zone TEXT NOT NULL,
  beginning_of_week INTEGER NOT NULL,
  granularities TEXT NOT NULL,
  default_timeframe TEXT NOT NULL,
  default_granularity TEXT NOT NULL,
  expire_after INTEGER,
  project_cluster_id TEXT,
  config TEXT NOT NULL DEFAULT '{}',
  setup_status TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX sources_organization ON sources(organization_id, type, created_at);

CREATE TABLE source_tokens (
  id TEXT PRIMARY KEY,
  source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  last5 TEXT NOT NULL,
  can_read INTEGER NOT NULL,
  can_write INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE dashboard_groups (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  position INTEGER NOT NULL,
  inserted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX dashboard_groups_organization ON dashboard_groups(organization_id, position);

CREATE TABLE dashboards (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id),
  source_type TEXT NOT NULL,
  source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
  database_id TEXT,
  group_id TEXT REFERENCES dashboard_groups(id) ON DELETE SET NULL,
  name TEXT NOT NULL,
  key TEXT NOT NULL,
  visibility INTEGER NOT NULL,
  locked INTEGER NOT NULL,
  position INTEGER NOT NULL,
  default_timeframe TEXT NOT NULL,
  default_granularity TEXT NOT NULL,
  payload TEXT NOT NULL,
  segments TEXT NOT NULL,
  inserted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX dashboards_organization ON dashboards(organization_id, position, inserted_at);
`;
