// Report monitors (docs/alerts.md "Reports"): the period last sent per monitor, so that a period is
// rendered and queued once (its outbox rows carry an idempotency key per period as well), and the
// last failure, so that the same failure is recorded in the history once.
export const MONITOR_REPORTS_SCHEMA = `
CREATE TABLE monitor_reports (
  monitor_id TEXT PRIMARY KEY REFERENCES monitors(id) ON DELETE CASCADE,
  period_start INTEGER,
  ran_at INTEGER NOT NULL,
  error TEXT
);
`;
