// Alerts (SPEC 13): monitors, the state of each monitored instance (one per matching key), the
// history of state changes, and the outbox of notifications. A state change, its history row and its
// outbox rows are written in one transaction (storage/monitors.ts), so a crash never loses or
// repeats a notification: the outbox's idempotency key is unique.
export const ALERTS_SCHEMA = `
CREATE TABLE monitors (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL,
  status TEXT NOT NULL,
  locked INTEGER NOT NULL DEFAULT 0,
  muted_until INTEGER,
  document TEXT NOT NULL,
  inserted_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  updated_by TEXT
);
CREATE INDEX monitors_by_organization ON monitors (organization_id, inserted_at);

CREATE TABLE monitor_instances (
  monitor_id TEXT NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  instance TEXT NOT NULL,
  labels TEXT NOT NULL,
  state TEXT NOT NULL,
  since INTEGER NOT NULL,
  pending_since INTEGER,
  last_value REAL,
  last_evaluated_at INTEGER,
  last_notified_at INTEGER,
  rules TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY (monitor_id, instance)
);

CREATE TABLE monitor_history (
  id INTEGER PRIMARY KEY,
  monitor_id TEXT NOT NULL REFERENCES monitors(id) ON DELETE CASCADE,
  at INTEGER NOT NULL,
  instance TEXT NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  value REAL,
  summary TEXT NOT NULL
);
CREATE INDEX monitor_history_by_monitor ON monitor_history (monitor_id, id);

CREATE TABLE alert_outbox (
  id INTEGER PRIMARY KEY,
  idempotency_key TEXT NOT NULL UNIQUE,
  organization_id TEXT NOT NULL,
  monitor_id TEXT,
  channel_id TEXT NOT NULL,
  notification TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending',
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  sent_at INTEGER
);
CREATE INDEX alert_outbox_due ON alert_outbox (status, next_attempt_at);
`;
