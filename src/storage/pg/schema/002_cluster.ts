// Version 2: what only cluster mode needs (docs/cluster.md part 3). A single node keeps these in
// memory, so they have no SQLite twin (CLUSTER_ONLY_TABLES in ../migrations.ts).
//
// - login_throttle: the failures of a sign-in key (`email:<address>` or `address:<ip>`), shared by
//   every node so that N nodes allow the guesses of one (SPEC 3, 14).
// - node_leases: one row per background job (the retention sweep, alert rounds, the outbox
//   sender); the node whose `holder` is there and whose `expires_at` is still ahead runs it, and
//   another takes it over once it has expired (SPEC 14: within a minute).
// - monitors by organization: the alerts' pages read them so.
export const CLUSTER_SCHEMA = `
CREATE TABLE login_throttle (
  key TEXT PRIMARY KEY,
  failures BIGINT NOT NULL,
  blocked_until BIGINT NOT NULL,
  last_failure BIGINT NOT NULL
);
CREATE INDEX login_throttle_last_failure ON login_throttle (last_failure);

CREATE TABLE node_leases (
  name TEXT PRIMARY KEY,
  holder TEXT NOT NULL,
  expires_at BIGINT NOT NULL,
  acquired_at BIGINT NOT NULL
);

CREATE INDEX IF NOT EXISTS monitors_organization ON monitors (organization_id, id);
`;
