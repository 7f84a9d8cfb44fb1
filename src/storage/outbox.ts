// The outbox of alert notifications (SPEC 13): one row per notification and channel, written in the
// transaction of the state change that caused it (storage/monitors.ts `transaction`). The unique
// idempotency key makes a second insert of the same notification a no-op, and is what receivers see
// as X-Idempotency-Key. Rows move pending -> sending -> sent, or back to pending with a later
// next_attempt_at, or to failed once the attempts are spent or the failure is permanent.
import type { Db } from './db';

export type OutboxStatus = 'pending' | 'sending' | 'sent' | 'failed';

export interface OutboxRow {
  id: number;
  idempotency_key: string;
  organization_id: string;
  monitor_id: string | null;
  channel_id: string;
  notification: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

export type NewOutboxRow = Pick<
  OutboxRow,
  'idempotency_key' | 'organization_id' | 'monitor_id' | 'channel_id' | 'notification' | 'created_at'
>;

/** A notification queued (the monitors repository queues them in its evaluation's transaction). */
export const OUTBOX_INSERT = `INSERT INTO alert_outbox (idempotency_key, organization_id, monitor_id, channel_id,
   notification, status, attempts, next_attempt_at, created_at)
 VALUES (@idempotency_key, @organization_id, @monitor_id, @channel_id, @notification, 'pending', 0,
   @created_at, @created_at)
 ON CONFLICT (idempotency_key) DO NOTHING`;

export function createOutboxRepo(db: Db) {
  const q = {
    insert: db.prepare<NewOutboxRow>(OUTBOX_INSERT),
    due: db.prepare<[number, number], OutboxRow>(
      `SELECT * FROM alert_outbox WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`,
    ),
    claim: db.prepare<[number]>(
      "UPDATE alert_outbox SET status = 'sending', attempts = attempts + 1 WHERE id = ? AND status = 'pending'",
    ),
    sent: db.prepare<[number, number]>(
      "UPDATE alert_outbox SET status = 'sent', sent_at = ?, last_error = NULL WHERE id = ?",
    ),
    retry: db.prepare<[number, string, number]>(
      "UPDATE alert_outbox SET status = 'pending', next_attempt_at = ?, last_error = ? WHERE id = ?",
    ),
    failed: db.prepare<[string, number]>(
      "UPDATE alert_outbox SET status = 'failed', last_error = ? WHERE id = ?",
    ),
    // A row left 'sending' by a process that died mid-attempt is tried again (same key).
    resume: db.prepare<[]>("UPDATE alert_outbox SET status = 'pending' WHERE status = 'sending'"),
    byMonitor: db.prepare<[string], OutboxRow>('SELECT * FROM alert_outbox WHERE monitor_id = ? ORDER BY id'),
    all: db.prepare<[], OutboxRow>('SELECT * FROM alert_outbox ORDER BY id'),
    nextDue: db.prepare<[], { at: number | null }>(
      "SELECT min(next_attempt_at) AS at FROM alert_outbox WHERE status = 'pending'",
    ),
  };
  return {
    /** true when the row is new (false: that idempotency key was already queued) */
    insert: async (row: NewOutboxRow): Promise<boolean> => q.insert.run(row).changes > 0,
    due: async (now: number, limit: number): Promise<OutboxRow[]> => q.due.all(now, limit),
    /** Atomic: true when this caller took the row (it was pending; a conditioned update) */
    claim: async (id: number): Promise<boolean> => q.claim.run(id).changes > 0,
    markSent: async (id: number, at: number): Promise<void> => void q.sent.run(at, id),
    retryAt: async (id: number, at: number, error: string): Promise<void> => void q.retry.run(at, error, id),
    markFailed: async (id: number, error: string): Promise<void> => void q.failed.run(error, id),
    resumeInterrupted: async (): Promise<number> => q.resume.run().changes,
    byMonitor: async (monitorId: string): Promise<OutboxRow[]> => q.byMonitor.all(monitorId),
    all: async (): Promise<OutboxRow[]> => q.all.all(),
    nextDue: async (): Promise<number | null> => q.nextDue.get()?.at ?? null,
  };
}

export type OutboxRepo = ReturnType<typeof createOutboxRepo>;
