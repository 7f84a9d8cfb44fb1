// The monitors repository on PostgreSQL (cluster mode): the same methods and rows as
// ../monitors.ts, in PostgreSQL's dialect.
//
// SQLite's IMMEDIATE transaction serialised every check with its write; here each check-then-write
// either is one conditioned statement (update, remove) or takes the row it checks FOR UPDATE first
// (the organization for the cap, the monitor for an evaluation or a report), so two nodes never both
// pass a check that only one of them may pass. An evaluation's notifications go in with
// `ON CONFLICT (idempotency_key) DO NOTHING` (alert_outbox.idempotency_key is UNIQUE). Of two nodes
// that evaluate a monitor from the same state, the second finds its evaluation stamp moved (the
// rules' last_evaluated_at, compared under the row lock) and writes nothing: each transition's
// history entry and notifications once.
import { AppError } from '../../errors';
import type { PgStore, Sql } from './client';
import {
  MONITOR_PAGE_MAX_BYTES,
  evaluationStamp,
  historyValue,
  sameReportState,
  instanceRow,
  toHistoryEntry,
  toInstance,
  toMonitor,
  toRow,
  type Evaluation,
  type HistoryRow,
  type InstanceRow,
  type MonitorRow,
  type MonitorsRepo,
  type ReportState,
  type ReportWrites,
} from '../monitors';
import type { NewOutboxRow } from '../outbox';
import type { HistoryEntry, Monitor, MonitorInstance } from '../../model/monitor';

/** lock_not_available: NOWAIT found the row taken, or lock_timeout ran out. */
const LOCK_NOT_AVAILABLE = '55P03';
/** Errors that end the whole transaction (tried again whole by store.tx, or busy) rather than one evaluation. */
const WHOLE_TRANSACTION = new Set(['40001', '40P01']);

const codeOf = (err: unknown): unknown => (err as { code?: unknown } | null)?.code;

const COLUMNS =
  'id, organization_id, user_id, status, locked, muted_until, document, inserted_at, updated_at, updated_by';

const S = {
  insert: `INSERT INTO monitors (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
  // Conditioned on the version the caller read: a concurrent update waits, then finds it changed.
  update: `UPDATE monitors SET status = $3, locked = $4, muted_until = $5, document = $6, updated_at = $7,
      updated_by = $8
    WHERE id = $1 AND organization_id = $2 AND updated_at = $9`,
  byId: `SELECT ${COLUMNS} FROM monitors WHERE id = $1 AND organization_id = $2`,
  list: `SELECT ${COLUMNS} FROM monitors WHERE organization_id = $1 ORDER BY inserted_at, id COLLATE "C"
    LIMIT $2 OFFSET $3`,
  count: 'SELECT count(*) AS n FROM monitors WHERE organization_id = $1',
  active: `SELECT ${COLUMNS} FROM monitors WHERE status = 'active'
    ORDER BY organization_id COLLATE "C", id COLLATE "C"`,
  activePage: `SELECT ${COLUMNS} FROM monitors
    WHERE status = 'active' AND (organization_id COLLATE "C", id COLLATE "C") > ($1, $2)
    ORDER BY organization_id COLLATE "C", id COLLATE "C" LIMIT $3`,
  remove: 'DELETE FROM monitors WHERE id = $1 AND organization_id = $2 AND updated_at = $3',
  lockOrganization: 'SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE',
  lockMonitor: 'SELECT updated_at, status FROM monitors WHERE id = $1 AND organization_id = $2 FOR UPDATE',
  // In one order (id, byte order) so that two batches over the same monitors never deadlock. With
  // the rules (their last_evaluated_at: the evaluation stamp), not the whole document.
  lockMonitors: `SELECT id, organization_id, updated_at, status, (document::json -> 'alerts')::text AS alerts
    FROM monitors WHERE id = ANY($1::text[])
    ORDER BY id COLLATE "C" FOR UPDATE`,
  instances: `SELECT monitor_id, instance, labels, state, since, pending_since, last_value, last_evaluated_at,
      last_notified_at, rules, firing_buckets, counted_bucket
    FROM monitor_instances WHERE monitor_id = $1 ORDER BY instance COLLATE "C"`,
  upsertInstances: `INSERT INTO monitor_instances (monitor_id, instance, labels, state, since, pending_since,
      last_value, last_evaluated_at, last_notified_at, rules, firing_buckets, counted_bucket)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[], $6::bigint[],
      $7::float8[], $8::bigint[], $9::bigint[], $10::text[], $11::bigint[], $12::bigint[])
    ON CONFLICT (monitor_id, instance) DO UPDATE SET labels = excluded.labels, state = excluded.state,
      since = excluded.since, pending_since = excluded.pending_since, last_value = excluded.last_value,
      last_evaluated_at = excluded.last_evaluated_at, last_notified_at = excluded.last_notified_at,
      rules = excluded.rules, firing_buckets = excluded.firing_buckets, counted_bucket = excluded.counted_bucket`,
  removeInstances: 'DELETE FROM monitor_instances WHERE monitor_id = $1 AND instance = ANY($2::text[])',
  clearInstances: 'DELETE FROM monitor_instances WHERE monitor_id = $1',
  // In the entries' order, so that their ids (history's order) are SQLite's.
  addHistory: `INSERT INTO monitor_history (monitor_id, at, instance, from_state, to_state, value, summary)
    SELECT $1, h.at, h.instance, h.from_state, h.to_state, h.value, h.summary
    FROM unnest($2::bigint[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::text[])
      WITH ORDINALITY AS h(at, instance, from_state, to_state, value, summary, n)
    ORDER BY h.n`,
  history: `SELECT at, instance, from_state, to_state, value, summary FROM monitor_history
    WHERE monitor_id = $1 ORDER BY id DESC LIMIT $2`,
  touchRules: 'UPDATE monitors SET document = $1 WHERE id = $2',
  reportState: 'SELECT period_start, ran_at, error FROM monitor_reports WHERE monitor_id = $1',
  saveReportState: `INSERT INTO monitor_reports (monitor_id, period_start, ran_at, error) VALUES ($1, $2, $3, $4)
    ON CONFLICT (monitor_id) DO UPDATE SET period_start = excluded.period_start, ran_at = excluded.ran_at,
      error = excluded.error`,
  // ../outbox.ts OUTBOX_INSERT for several rows: a known idempotency key is skipped (rowCount: the new).
  enqueue: `INSERT INTO alert_outbox (idempotency_key, organization_id, monitor_id, channel_id, notification,
      status, attempts, next_attempt_at, created_at)
    SELECT o.key, o.organization_id, o.monitor_id, o.channel_id, o.notification, 'pending', 0, o.created_at,
      o.created_at
    FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[])
      WITH ORDINALITY AS o(key, organization_id, monitor_id, channel_id, notification, created_at, n)
    ORDER BY o.n
    ON CONFLICT (idempotency_key) DO NOTHING`,
};

const monitorParams = (r: MonitorRow) => [
  r.id,
  r.organization_id,
  r.user_id,
  r.status,
  r.locked,
  r.muted_until,
  r.document,
  r.inserted_at,
  r.updated_at,
  r.updated_by,
];

async function addHistory(sql: Sql, monitorId: string, entries: HistoryEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await sql.run(S.addHistory, [
    monitorId,
    entries.map((e) => e.at),
    entries.map((e) => e.instance),
    entries.map((e) => e.from),
    entries.map((e) => e.to),
    entries.map(historyValue),
    entries.map((e) => e.summary),
  ]);
}

async function upsertInstances(sql: Sql, instances: MonitorInstance[]): Promise<void> {
  if (instances.length === 0) return;
  // One statement may not update a row twice: the last state of a key wins, as SQLite's upserts in turn.
  const last = new Map<string, InstanceRow>();
  for (const i of instances) {
    const row = instanceRow(i);
    const key = JSON.stringify([row.monitor_id, row.instance]);
    last.delete(key);
    last.set(key, row);
  }
  const rows = [...last.values()];
  const column = <K extends keyof InstanceRow>(k: K) => rows.map((r) => r[k]);
  await sql.run(S.upsertInstances, [
    column('monitor_id'),
    column('instance'),
    column('labels'),
    column('state'),
    column('since'),
    column('pending_since'),
    column('last_value'),
    column('last_evaluated_at'),
    column('last_notified_at'),
    column('rules'),
    column('firing_buckets'),
    column('counted_bucket'),
  ]);
}

/** Inserts the rows; how many were new (a known idempotency key is skipped). */
async function enqueue(sql: Sql, rows: NewOutboxRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  return sql.run(S.enqueue, [
    rows.map((r) => r.idempotency_key),
    rows.map((r) => r.organization_id),
    rows.map((r) => r.monitor_id),
    rows.map((r) => r.channel_id),
    rows.map((r) => r.notification),
    rows.map((r) => r.created_at),
  ]);
}

/** One evaluation's writes (the monitor is locked and was found at the version evaluated). */
async function writeEvaluation(sql: Sql, { evaluated, writes: w }: Evaluation): Promise<number> {
  await addHistory(sql, evaluated.id, w.history);
  await upsertInstances(sql, w.instances);
  if (w.removed.length > 0) await sql.run(S.removeInstances, [evaluated.id, w.removed]);
  const queued = await enqueue(sql, w.outbox);
  await sql.run(S.touchRules, [toRow(evaluated).document, evaluated.id]);
  return queued;
}

export function createPgMonitorsRepo(store: PgStore): MonitorsRepo {
  /** The evaluations in one transaction, each in a savepoint; throws what ends them all. */
  const saveAll = (evaluations: Evaluation[], tryOnly: boolean) =>
    store.tx(async (sql): Promise<Array<number | null | Error>> => {
      // tryOnly: any wait for a lock (a monitor row, an instance row, an idempotency key another
      // transaction is inserting) ends the transaction at once (55P03), nothing written.
      if (tryOnly) await sql.run("SET LOCAL lock_timeout = '1ms'");
      const ids = [...new Set(evaluations.map((e) => e.evaluated.id))];
      const locked = await sql.rows<
        Pick<MonitorRow, 'id' | 'organization_id' | 'updated_at' | 'status'> & { alerts: string | null }
      >(tryOnly ? `${S.lockMonitors} NOWAIT` : S.lockMonitors, [ids]);
      const stored = new Map(locked.map((r) => [r.id, r]));
      // each monitor's evaluation stamp, as the batch's own writes move it
      const stamps = new Map(
        locked.map((r) => [r.id, evaluationStamp(r.alerts === null ? null : JSON.parse(r.alerts))]),
      );
      const results: Array<number | null | Error> = [];
      for (const e of evaluations) {
        const row = stored.get(e.evaluated.id);
        if (
          row === undefined ||
          row.organization_id !== e.evaluated.organizationId ||
          row.updated_at !== e.evaluated.updatedAt ||
          row.status !== 'active' ||
          stamps.get(row.id) !== e.from
        ) {
          results.push(null);
          continue;
        }
        await sql.run('SAVEPOINT evaluation');
        try {
          results.push(await writeEvaluation(sql, e));
          await sql.run('RELEASE SAVEPOINT evaluation');
          stamps.set(row.id, evaluationStamp(e.evaluated.alerts));
        } catch (err) {
          const code = codeOf(err);
          if (err instanceof AppError || (typeof code === 'string' && WHOLE_TRANSACTION.has(code))) throw err;
          if (tryOnly && code === LOCK_NOT_AVAILABLE) throw err;
          await sql.run('ROLLBACK TO SAVEPOINT evaluation');
          await sql.run('RELEASE SAVEPOINT evaluation');
          results.push(err instanceof Error ? err : new Error(String(err)));
        }
      }
      return results;
    });

  return {
    /** Atomic: the organization's row locked, its count under `max`, then the insert; false at the cap. */
    insert: async (m: Monitor, max: number): Promise<boolean> =>
      store.tx(async (sql) => {
        await sql.one(S.lockOrganization, [m.organizationId]);
        const { n } = (await sql.one<{ n: number }>(S.count, [m.organizationId]))!;
        if (n >= max) return false;
        await sql.run(S.insert, monitorParams(toRow(m)));
        return true;
      }),
    update: async (m: Monitor, fromUpdatedAt: number, clearInstances = false): Promise<boolean> =>
      store.tx(async (sql) => {
        const r = toRow(m);
        const changed = await sql.run(S.update, [
          r.id,
          r.organization_id,
          r.status,
          r.locked,
          r.muted_until,
          r.document,
          r.updated_at,
          r.updated_by,
          fromUpdatedAt,
        ]);
        if (changed === 0) return false;
        if (clearInstances) await sql.run(S.clearInstances, [m.id]);
        return true;
      }),
    byId: async (id: string, organizationId: string): Promise<Monitor | undefined> => {
      const row = await store.one<MonitorRow>(S.byId, [id, organizationId]);
      return row ? toMonitor(row) : undefined;
    },
    async list(organizationId: string, limit: number, offset: number): Promise<Monitor[]> {
      const out: Monitor[] = [];
      let bytes = 0;
      for (const row of await store.rows<MonitorRow>(S.list, [organizationId, limit, offset])) {
        if (out.length > 0 && bytes + row.document.length > MONITOR_PAGE_MAX_BYTES) break;
        bytes += row.document.length;
        out.push(toMonitor(row));
      }
      return out;
    },
    count: async (organizationId: string): Promise<number> =>
      (await store.one<{ n: number }>(S.count, [organizationId]))!.n,
    active: async (): Promise<Monitor[]> => (await store.rows<MonitorRow>(S.active)).map(toMonitor),
    activePage: async (
      after: Pick<Monitor, 'organizationId' | 'id'> | null,
      limit: number,
    ): Promise<Monitor[]> =>
      (await store.rows<MonitorRow>(S.activePage, [after?.organizationId ?? '', after?.id ?? '', limit])).map(
        toMonitor,
      ),
    remove: async (id: string, organizationId: string, fromUpdatedAt: number): Promise<boolean> =>
      (await store.run(S.remove, [id, organizationId, fromUpdatedAt])) > 0,
    instances: async (monitorId: string): Promise<MonitorInstance[]> =>
      (await store.rows<InstanceRow>(S.instances, [monitorId])).map(toInstance),
    history: async (monitorId: string, limit: number): Promise<HistoryEntry[]> =>
      (await store.rows<HistoryRow>(S.history, [monitorId, limit])).map(toHistoryEntry),
    async reportState(monitorId: string): Promise<ReportState | undefined> {
      const r = await store.one<{ period_start: number | null; ran_at: number; error: string | null }>(
        S.reportState,
        [monitorId],
      );
      return r ? { periodStart: r.period_start, ranAt: r.ran_at, error: r.error } : undefined;
    },
    /**
     * As ../monitors.ts: one transaction, the monitors locked (FOR UPDATE, in id order) and each
     * evaluation written in a savepoint of its own only while its monitor is still the version
     * evaluated and active (null otherwise; one that fails is rolled back alone and given back as
     * its Error). With `tryOnly`, null (nothing written) when another transaction holds a row it
     * needs (`FOR UPDATE NOWAIT`, `lock_timeout` 1 ms), as SQLite's version answers a taken write
     * lock: the evaluator pauses and tries again.
     */
    async saveEvaluations(
      evaluations: Evaluation[],
      { tryOnly }: { tryOnly: boolean },
    ): Promise<Array<number | null | Error> | null> {
      if (evaluations.length === 0) return [];
      try {
        return await saveAll(evaluations, tryOnly);
      } catch (err) {
        if (tryOnly && codeOf(err) === LOCK_NOT_AVAILABLE) return null;
        throw err;
      }
    },
    /**
     * As ../monitors.ts; the monitor's row is locked first (a second node's run waits for the
     * first's commit, then reads the state it wrote), then the report's state is read and compared.
     */
    saveReport: async (m: Monitor, period: number | null, w: ReportWrites): Promise<number | null> =>
      store.tx(async (sql) => {
        const row = await sql.one<Pick<MonitorRow, 'updated_at' | 'status'>>(S.lockMonitor, [
          m.id,
          m.organizationId,
        ]);
        const stored = await sql.one<{ period_start: number | null; ran_at: number; error: string | null }>(
          S.reportState,
          [m.id],
        );
        const state = stored && {
          periodStart: stored.period_start,
          ranAt: stored.ran_at,
          error: stored.error,
        };
        if (!sameReportState(state, w.from)) return null;
        let queued = 0;
        if (period !== null) {
          if (row === undefined || row.updated_at !== m.updatedAt || row.status !== 'active') return null;
          if (stored?.period_start === period) return null;
          queued = await enqueue(sql, w.outbox);
        }
        await sql.run(S.saveReportState, [m.id, w.state.periodStart, w.state.ranAt, w.state.error]);
        await addHistory(sql, m.id, [w.entry]);
        return queued;
      }),
  };
}
