// Trifle App's `alert_notify_every` (docs/alerts.md "Reminders"): each instance counts the completed
// buckets it has been Firing for, and remembers the bucket it counted last, so that a round that
// sees no new bucket does not count twice and a restart keeps the count.
export const NOTIFY_EVERY_SCHEMA = `
ALTER TABLE monitor_instances ADD COLUMN firing_buckets INTEGER NOT NULL DEFAULT 0;
ALTER TABLE monitor_instances ADD COLUMN counted_bucket INTEGER;
`;
