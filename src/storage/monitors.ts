// Monitors, their instances' states and their history: prepared statements only. Every read of a
// monitor by id is scoped to an organization; the evaluator's reads (every active monitor) are not.
import type { Db } from './db';
import { OUTBOX_INSERT, type NewOutboxRow } from './outbox';
import type { HistoryEntry, InstanceState, Monitor, MonitorInstance } from '../model/monitor';

export interface MonitorRow {
  id: string;
  organization_id: string;
  user_id: string;
  status: string;
  locked: number;
  muted_until: number | null;
  document: string;
  inserted_at: number;
  updated_at: number;
  updated_by: string | null;
}

export interface InstanceRow {
  monitor_id: string;
  instance: string;
  labels: string;
  state: string;
  since: number;
  pending_since: number | null;
  last_value: number | null;
  last_evaluated_at: number | null;
  last_notified_at: number | null;
  rules: string;
  firing_buckets: number;
  counted_bucket: number | null;
}

export interface HistoryRow {
  at: number;
  instance: string;
  from_state: string;
  to_state: string;
  value: number | null;
  summary: string;
}

type Document = Omit<
  Monitor,
  | 'id'
  | 'organizationId'
  | 'userId'
  | 'status'
  | 'locked'
  | 'mutedUntil'
  | 'insertedAt'
  | 'updatedAt'
  | 'updatedBy'
>;

export function toMonitor(r: MonitorRow): Monitor {
  const doc = JSON.parse(r.document) as Document;
  return {
    ...doc,
    id: r.id,
    organizationId: r.organization_id,
    userId: r.user_id,
    status: r.status as Monitor['status'],
    locked: r.locked === 1,
    mutedUntil: r.muted_until,
    insertedAt: r.inserted_at,
    updatedAt: r.updated_at,
    updatedBy: r.updated_by,
  };
}

export function toRow(m: Monitor): MonitorRow {
  const {
    id,
    organizationId,
    userId,
    status,
    locked,
    mutedUntil,
    insertedAt,
    updatedAt,
    updatedBy,
    ...document
  } = m;
  return {
    id,
    organization_id: organizationId,
    user_id: userId,
    status,
    locked: locked ? 1 : 0,
    muted_until: mutedUntil,
    document: JSON.stringify(document),
    inserted_at: insertedAt,
    updated_at: updatedAt,
    updated_by: updatedBy ?? null,
  };
}

export function toInstance(r: InstanceRow): MonitorInstance {
  return {
    monitorId: r.monitor_id,
    instance: r.instance,
    labels: JSON.parse(r.labels) as Record<string, string>,
    state: r.state as InstanceState,
    since: r.since,
    pendingSince: r.pending_since,
    lastValue: r.last_value,
    lastEvaluatedAt: r.last_evaluated_at,
    lastNotifiedAt: r.last_notified_at,
    rules: JSON.parse(r.rules) as MonitorInstance['rules'],
    firingBuckets: r.firing_buckets,
    countedBucket: r.counted_bucket,
  };
}

export function instanceRow(i: MonitorInstance): InstanceRow {
  return {
    monitor_id: i.monitorId,
    instance: i.instance,
    labels: JSON.stringify(i.labels),
    state: i.state,
    since: i.since,
    pending_since: i.pendingSince,
    last_value: i.lastValue !== null && Number.isFinite(i.lastValue) ? i.lastValue : null,
    last_evaluated_at: i.lastEvaluatedAt,
    last_notified_at: i.lastNotifiedAt,
    rules: JSON.stringify(i.rules),
    firing_buckets: i.firingBuckets,
    counted_bucket: i.countedBucket,
  };
}

export function toHistoryEntry(r: HistoryRow): HistoryEntry {
  return {
    at: r.at,
    instance: r.instance,
    from: r.from_state as InstanceState,
    to: r.to_state as InstanceState,
    value: r.value,
    summary: r.summary,
  };
}

/** A history entry's value as stored: a number, or null (NaN and infinities too). */
export const historyValue = (e: HistoryEntry): number | null =>
  e.value !== null && Number.isFinite(e.value) ? e.value : null;

export interface ReportState {
  periodStart: number | null;
  ranAt: number;
  error: string | null;
}

/** A report's writes (saveReport): its notifications, its new state and history entry. */
export interface ReportWrites {
  /** the report's state as the run read it (undefined: none yet): written only while it is still that */
  from: ReportState | undefined;
  outbox: NewOutboxRow[];
  state: ReportState;
  entry: HistoryEntry;
}

/** The report state stored is the one a run read (undefined: none). */
export const sameReportState = (a: ReportState | undefined, b: ReportState | undefined): boolean =>
  a === undefined || b === undefined
    ? a === b
    : a.periodStart === b.periodStart && a.ranAt === b.ranAt && a.error === b.error;

/**
 * A monitor's evaluation stamp: when it was last evaluated, the latest of its rules'
 * `last_evaluated_at` (every evaluation sets them all), null before its first evaluation. An
 * evaluation is written only while the stamp is still the one it started from, and writes a later
 * one (saveEvaluations; an alert monitor has at least one rule: plan.ts).
 */
export function evaluationStamp(alerts: unknown): number | null {
  if (!Array.isArray(alerts)) return null;
  let stamp: number | null = null;
  for (const rule of alerts) {
    const at = (rule as { last_evaluated_at?: unknown } | null)?.last_evaluated_at;
    if (typeof at === 'number' && (stamp === null || at > stamp)) stamp = at;
  }
  return stamp;
}

/** The evaluation stamp of a stored document (MonitorRow.document). */
const documentStamp = (document: string): number | null =>
  evaluationStamp((JSON.parse(document) as { alerts?: unknown }).alerts);

/** A page of monitors stops once its documents pass this many bytes (at least one is served). */
export const MONITOR_PAGE_MAX_BYTES = 8 * 1024 * 1024;

export function createMonitorsRepo(db: Db) {
  const q = {
    insert: db.prepare<MonitorRow>(
      `INSERT INTO monitors (id, organization_id, user_id, status, locked, muted_until, document, inserted_at, updated_at, updated_by)
       VALUES (@id, @organization_id, @user_id, @status, @locked, @muted_until, @document, @inserted_at, @updated_at, @updated_by)`,
    ),
    update: db.prepare<MonitorRow>(
      `UPDATE monitors SET status = @status, locked = @locked, muted_until = @muted_until, document = @document,
         updated_at = @updated_at, updated_by = @updated_by
       WHERE id = @id AND organization_id = @organization_id`,
    ),
    byId: db.prepare<[string, string], MonitorRow>(
      'SELECT * FROM monitors WHERE id = ? AND organization_id = ?',
    ),
    list: db.prepare<[string, number, number], MonitorRow>(
      'SELECT * FROM monitors WHERE organization_id = ? ORDER BY inserted_at, id LIMIT ? OFFSET ?',
    ),
    count: db.prepare<[string], { n: number }>(
      'SELECT count(*) AS n FROM monitors WHERE organization_id = ?',
    ),
    active: db.prepare<[], MonitorRow>(
      "SELECT * FROM monitors WHERE status = 'active' ORDER BY organization_id, id",
    ),
    activePage: db.prepare<[string, string, number], MonitorRow>(
      `SELECT * FROM monitors WHERE status = 'active' AND (organization_id, id) > (?, ?)
       ORDER BY organization_id, id LIMIT ?`,
    ),
    remove: db.prepare<[string, string]>('DELETE FROM monitors WHERE id = ? AND organization_id = ?'),
    instances: db.prepare<[string], InstanceRow>(
      'SELECT * FROM monitor_instances WHERE monitor_id = ? ORDER BY instance',
    ),
    upsertInstance: db.prepare<InstanceRow>(
      `INSERT INTO monitor_instances (monitor_id, instance, labels, state, since, pending_since, last_value,
         last_evaluated_at, last_notified_at, rules, firing_buckets, counted_bucket)
       VALUES (@monitor_id, @instance, @labels, @state, @since, @pending_since, @last_value, @last_evaluated_at,
         @last_notified_at, @rules, @firing_buckets, @counted_bucket)
       ON CONFLICT (monitor_id, instance) DO UPDATE SET labels = excluded.labels, state = excluded.state,
         since = excluded.since, pending_since = excluded.pending_since, last_value = excluded.last_value,
         last_evaluated_at = excluded.last_evaluated_at, last_notified_at = excluded.last_notified_at,
         rules = excluded.rules, firing_buckets = excluded.firing_buckets,
         counted_bucket = excluded.counted_bucket`,
    ),
    removeInstance: db.prepare<[string, string]>(
      'DELETE FROM monitor_instances WHERE monitor_id = ? AND instance = ?',
    ),
    clearInstances: db.prepare<[string]>('DELETE FROM monitor_instances WHERE monitor_id = ?'),
    addHistory: db.prepare<[string, number, string, string, string, number | null, string]>(
      `INSERT INTO monitor_history (monitor_id, at, instance, from_state, to_state, value, summary)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    history: db.prepare<[string, number], HistoryRow>(
      'SELECT at, instance, from_state, to_state, value, summary FROM monitor_history WHERE monitor_id = ? ORDER BY id DESC LIMIT ?',
    ),
    touchRules: db.prepare<[string, string]>('UPDATE monitors SET document = ? WHERE id = ?'),
    reportState: db.prepare<[string], { period_start: number | null; ran_at: number; error: string | null }>(
      'SELECT period_start, ran_at, error FROM monitor_reports WHERE monitor_id = ?',
    ),
    insertOutbox: db.prepare<NewOutboxRow>(OUTBOX_INSERT),
    saveReportState: db.prepare<[string, number | null, number, string | null]>(
      `INSERT INTO monitor_reports (monitor_id, period_start, ran_at, error) VALUES (?, ?, ?, ?)
       ON CONFLICT (monitor_id) DO UPDATE SET period_start = excluded.period_start, ran_at = excluded.ran_at,
         error = excluded.error`,
    ),
  };
  /** One IMMEDIATE transaction: what it reads still holds when it writes. */
  const atomically = <T>(fn: () => T): T => db.transaction(fn).immediate();
  const addHistory = (monitorId: string, e: HistoryEntry) =>
    void q.addHistory.run(monitorId, e.at, e.instance, e.from, e.to, historyValue(e), e.summary);
  /** The monitor as the caller read it is still the stored version, and active. */
  const unchanged = (m: Pick<Monitor, 'id' | 'organizationId' | 'updatedAt'>): boolean => {
    const row = q.byId.get(m.id, m.organizationId);
    return row !== undefined && row.updated_at === m.updatedAt && row.status === 'active';
  };
  /** Inserts the rows; how many were new (a known idempotency key is skipped). */
  const enqueue = (rows: NewOutboxRow[]): number =>
    rows.reduce((n, row) => n + q.insertOutbox.run(row).changes, 0);
  /**
   * An evaluation's writes, only while the monitor is still the version evaluated, active, and at the
   * evaluation stamp the evaluation started from (null otherwise: nothing written).
   */
  const saveOne = db.transaction(({ evaluated, from, writes: w }: Evaluation): number | null => {
    const row = q.byId.get(evaluated.id, evaluated.organizationId);
    if (row === undefined || row.updated_at !== evaluated.updatedAt || row.status !== 'active') return null;
    if (documentStamp(row.document) !== from) return null;
    for (const e of w.history) addHistory(evaluated.id, e);
    for (const i of w.instances) q.upsertInstance.run(instanceRow(i));
    for (const key of w.removed) q.removeInstance.run(evaluated.id, key);
    const queued = enqueue(w.outbox);
    q.touchRules.run(toRow(evaluated).document, evaluated.id);
    return queued;
  });
  /** saveOne of each, nested (a savepoint each): a failure is rolled back alone and returned. */
  const saveAll = db.transaction((evaluations: Evaluation[]): Array<number | null | Error> =>
    evaluations.map((e) => {
      try {
        return saveOne(e);
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    }),
  );
  return {
    /** Atomic: the organization's count under `max`, then the insert; false at the cap. */
    insert: async (m: Monitor, max: number): Promise<boolean> =>
      atomically(() => {
        if (q.count.get(m.organizationId)!.n >= max) return false;
        q.insert.run(toRow(m));
        return true;
      }),
    /**
     * Atomic: saves the monitor only while the stored version is still `fromUpdatedAt` (the one the
     * caller's checks read), clearing its instances when asked; false otherwise.
     */
    update: async (m: Monitor, fromUpdatedAt: number, clearInstances = false): Promise<boolean> =>
      atomically(() => {
        if (q.byId.get(m.id, m.organizationId)?.updated_at !== fromUpdatedAt) return false;
        q.update.run(toRow(m));
        if (clearInstances) q.clearInstances.run(m.id);
        return true;
      }),
    byId: async (id: string, organizationId: string): Promise<Monitor | undefined> => {
      const row = q.byId.get(id, organizationId);
      return row ? toMonitor(row) : undefined;
    },
    async list(organizationId: string, limit: number, offset: number): Promise<Monitor[]> {
      const out: Monitor[] = [];
      let bytes = 0;
      for (const row of q.list.iterate(organizationId, limit, offset)) {
        if (out.length > 0 && bytes + row.document.length > MONITOR_PAGE_MAX_BYTES) break;
        bytes += row.document.length;
        out.push(toMonitor(row));
      }
      return out;
    },
    count: async (organizationId: string): Promise<number> => q.count.get(organizationId)!.n,
    /** every active monitor of every organization (the evaluator's round) */
    active: async (): Promise<Monitor[]> => q.active.all().map(toMonitor),
    /** `active` in pages of `limit` after the monitor `after` (organization, id order) */
    activePage: async (
      after: Pick<Monitor, 'organizationId' | 'id'> | null,
      limit: number,
    ): Promise<Monitor[]> =>
      q.activePage.all(after?.organizationId ?? '', after?.id ?? '', limit).map(toMonitor),
    /** Atomic: deletes only while the stored version is still `fromUpdatedAt`; false otherwise. */
    remove: async (id: string, organizationId: string, fromUpdatedAt: number): Promise<boolean> =>
      atomically(() => {
        if (q.byId.get(id, organizationId)?.updated_at !== fromUpdatedAt) return false;
        q.remove.run(id, organizationId);
        return true;
      }),
    instances: async (monitorId: string): Promise<MonitorInstance[]> =>
      q.instances.all(monitorId).map(toInstance),
    history: async (monitorId: string, limit: number): Promise<HistoryEntry[]> =>
      q.history.all(monitorId, limit).map(toHistoryEntry),
    /** A report monitor's last run: the period it last sent, and its last failure. */
    async reportState(monitorId: string): Promise<ReportState | undefined> {
      const r = q.reportState.get(monitorId);
      return r ? { periodStart: r.period_start, ranAt: r.ran_at, error: r.error } : undefined;
    },
    /**
     * Atomic per evaluation: its findings (history entries, instance states, forgotten instances,
     * the notifications it queues, what it learned of the rules; `evaluated`, updated_at kept),
     * written only while the monitor is still the version (and active) it was evaluated as and its
     * evaluation stamp is still `from`, the one the evaluation started from (a compare-and-set: of
     * two evaluations from one state, on two nodes say, the second finds the stamp moved): null
     * for it when the monitor changed, went or was evaluated meanwhile (the findings are dropped
     * whole), else how many notifications were queued. Several evaluations go in one IMMEDIATE
     * transaction (one write to the WAL, one hold of the write lock), each in a savepoint of its
     * own: one that throws is rolled back alone and given back as its Error. With `tryOnly`, null (nothing written) when
     * another connection holds the write lock, instead of sleeping in SQLite's busy handler on the
     * event loop while the metric writer's fold (a few ms a transaction) holds it.
     */
    async saveEvaluations(
      evaluations: Evaluation[],
      { tryOnly }: { tryOnly: boolean },
    ): Promise<Array<number | null | Error> | null> {
      if (!tryOnly) return saveAll.immediate(evaluations);
      const timeout = db.pragma('busy_timeout', { simple: true }) as number;
      db.pragma('busy_timeout = 0');
      try {
        return saveAll.immediate(evaluations);
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_BUSY') return null;
        throw err;
      } finally {
        db.pragma(`busy_timeout = ${timeout}`);
      }
    },
    /**
     * Atomic: a report's run, only while its stored state is still `w.from`, the one the run read
     * (of two runs from one state, the second writes nothing). With `period`, only while the
     * monitor is still the version it was planned from, active, and that period was not sent yet:
     * the notifications are queued. Then its state and history entry. Null when nothing was
     * written; else how many were queued.
     */
    saveReport: async (m: Monitor, period: number | null, w: ReportWrites): Promise<number | null> =>
      atomically(() => {
        let queued = 0;
        const stored = q.reportState.get(m.id);
        const state = stored && {
          periodStart: stored.period_start,
          ranAt: stored.ran_at,
          error: stored.error,
        };
        if (!sameReportState(state, w.from)) return null;
        if (period !== null) {
          if (!unchanged(m) || stored?.period_start === period) return null;
          queued = enqueue(w.outbox);
        }
        q.saveReportState.run(m.id, w.state.periodStart, w.state.ranAt, w.state.error);
        addHistory(m.id, w.entry);
        return queued;
      }),
  };
}

export type MonitorsRepo = ReturnType<typeof createMonitorsRepo>;

/** A monitor's evaluation to store: the monitor as evaluated (its rules' status) and what changed. */
export interface Evaluation {
  /** the monitor with its rules' new status (its evaluation stamp later than `from`) */
  evaluated: Monitor;
  /** the monitor's evaluation stamp (evaluationStamp) when the evaluation read its instances */
  from: number | null;
  writes: {
    history: HistoryEntry[];
    instances: MonitorInstance[];
    removed: string[];
    outbox: NewOutboxRow[];
  };
}
