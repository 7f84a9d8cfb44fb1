// The alert outbox repository on PostgreSQL (cluster mode): the same methods and rows as
// ../outbox.ts, in PostgreSQL's dialect.
//
// `claim` is one conditioned update (pending → sending): of several senders, on one node or many,
// racing for a row, the first update takes it and the others, re-reading the row it changed, find it
// no longer pending and change nothing.
import type { PgStore } from './client';
import type { NewOutboxRow, OutboxRepo, OutboxRow } from '../outbox';

/**
 * A notification queued unless its idempotency key is already there. The NOT EXISTS keeps a
 * duplicate from drawing an id from the identity (as SQLite draws none), so ids follow SQLite's;
 * ON CONFLICT covers a duplicate inserted at the same moment.
 */
export const PG_OUTBOX_INSERT = `INSERT INTO alert_outbox (idempotency_key, organization_id, monitor_id, channel_id,
    notification, status, attempts, next_attempt_at, created_at)
  SELECT $1, $2, $3, $4, $5, 'pending', 0, $6::bigint, $6::bigint
  WHERE NOT EXISTS (SELECT 1 FROM alert_outbox WHERE idempotency_key = $1)
  ON CONFLICT (idempotency_key) DO NOTHING`;

/** The parameters of PG_OUTBOX_INSERT. */
export const pgOutboxValues = (row: NewOutboxRow): unknown[] => [
  row.idempotency_key,
  row.organization_id,
  row.monitor_id,
  row.channel_id,
  row.notification,
  row.created_at,
];

export function createPgOutboxRepo(store: PgStore): OutboxRepo {
  return {
    insert: async (row: NewOutboxRow): Promise<boolean> =>
      (await store.run(PG_OUTBOX_INSERT, pgOutboxValues(row))) > 0,
    due: (now: number, limit: number): Promise<OutboxRow[]> =>
      store.rows<OutboxRow>(
        `SELECT * FROM alert_outbox WHERE status = 'pending' AND next_attempt_at <= $1 ORDER BY next_attempt_at, id LIMIT $2`,
        [now, limit],
      ),
    claim: async (id: number): Promise<boolean> =>
      (await store.run(
        "UPDATE alert_outbox SET status = 'sending', attempts = attempts + 1 WHERE id = $1 AND status = 'pending'",
        [id],
      )) > 0,
    markSent: async (id: number, at: number): Promise<void> =>
      void (await store.run(
        "UPDATE alert_outbox SET status = 'sent', sent_at = $1, last_error = NULL WHERE id = $2",
        [at, id],
      )),
    retryAt: async (id: number, at: number, error: string): Promise<void> =>
      void (await store.run(
        "UPDATE alert_outbox SET status = 'pending', next_attempt_at = $1, last_error = $2 WHERE id = $3",
        [at, error, id],
      )),
    markFailed: async (id: number, error: string): Promise<void> =>
      void (await store.run("UPDATE alert_outbox SET status = 'failed', last_error = $1 WHERE id = $2", [
        error,
        id,
      ])),
    resumeInterrupted: (): Promise<number> =>
      store.run("UPDATE alert_outbox SET status = 'pending' WHERE status = 'sending'"),
    byMonitor: (monitorId: string): Promise<OutboxRow[]> =>
      store.rows<OutboxRow>('SELECT * FROM alert_outbox WHERE monitor_id = $1 ORDER BY id', [monitorId]),
    all: (): Promise<OutboxRow[]> => store.rows<OutboxRow>('SELECT * FROM alert_outbox ORDER BY id'),
    nextDue: async (): Promise<number | null> =>
      (
        await store.one<{ at: number | null }>(
          "SELECT min(next_attempt_at) AS at FROM alert_outbox WHERE status = 'pending'",
        )
      )?.at ?? null,
  };
}
