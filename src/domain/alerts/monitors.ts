// Monitor rules (SPEC 13): organization scope, locking, versions, defaults and the checks that need
// the database, as for dashboards. Order of answers for a change: 404 (unknown or another
// organization's) -> 409 (locked, stale) -> 422 (every broken field at once).
import { conflict, notFound } from '../../errors';
import { newId, normalizeId } from '../../lib/ids';
import type { MonitorsRepo } from '../../storage/monitors';
import type { Auth, Source } from '../types';
import type { ErrorBag } from '../dashboards/issues';
import {
  SOURCE_FIELDS,
  type SourceFields,
  type SourceLookup,
  selectSource,
} from '../dashboards/source-selection';
import { type ExpectedVersion, checkChangeable, nextUpdatedAt } from '../dashboards/versions';
import { NO_ORGANIZATION } from '../dashboards/dashboards';
import type { AlertRule, Monitor, MonitorStatus, MonitorType, Strategy } from '../../model/monitor';
import { parseTimestamp } from '../../shared/time';
import { compileMonitor, type MonitorPlan } from './plan';
import { MAX_MONITOR_BYTES, MAX_MONITORS } from './limits';
import { checkSeriesRows } from '../dashboards/widget-series';
import { planReport, type ReportLookups } from './reports';

export const LOCKED = 'Monitor is locked';

/** Whether a channel id names a channel of the organization (the channels' repository, when present). */
export interface ChannelDirectory {
  exists(organizationId: string, channelId: string): Promise<boolean>;
}

export interface MonitorsContext {
  monitors: MonitorsRepo;
  sources: SourceLookup & { byId(id: string): Promise<Source | undefined> };
  projectsEnabled: boolean;
  now: () => number;
  channels?: ChannelDirectory;
  /** the organization's dashboards, for report monitors (their dashboard_id is checked when present) */
  dashboards?: ReportLookups['dashboards'];
  nameOf?: (userId: string) => Promise<string | undefined>;
}

interface RuleInput {
  id?: string | null;
  analysis_strategy: Strategy;
  settings?: Record<string, unknown> | null;
  [more: string]: unknown;
}

/** Fields a create or update may carry, after their types were checked (http/schemas/monitors.ts). */
export interface MonitorInput extends SourceFields {
  name?: string;
  description?: string | null;
  type?: MonitorType;
  status?: MonitorStatus;
  locked?: boolean;
  alert_metric_key?: string | null;
  alert_metric_path?: string | null;
  alert_series?: unknown[] | null;
  alert_timeframe?: string | null;
  alert_granularity?: string | null;
  alert_notify_every?: number;
  delivery_channels?: Record<string, unknown>[] | null;
  alerts?: RuleInput[] | null;
  for?: string;
  repeat_every?: string | null;
  notify_recovery?: boolean;
  notify_no_data?: boolean;
  muted_until?: string | null;
  target?: Record<string, unknown> | null;
  segment_values?: Record<string, unknown> | null;
  dashboard_id?: string | null;
  report_settings?: Record<string, unknown> | null;
  delivery_media?: Record<string, unknown>[] | null;
}

const EXTRA_FIELDS = [
  'target',
  'segment_values',
  'dashboard_id',
  'report_settings',
  'delivery_media',
] as const;

export async function listMonitors(
  ctx: MonitorsContext,
  auth: Auth,
  limit: number,
  offset: number,
): Promise<{ monitors: Monitor[]; total: number }> {
  const organizationId = auth.organizationId;
  if (!organizationId) return { monitors: [], total: 0 };
  return {
    monitors: await ctx.monitors.list(organizationId, limit, offset),
    total: await ctx.monitors.count(organizationId),
  };
}

/** A monitor of the token's organization, or 404. */
export async function findMonitor(ctx: MonitorsContext, auth: Auth, rawId: string): Promise<Monitor> {
  const id = normalizeId(rawId);
  const found = id && auth.organizationId ? await ctx.monitors.byId(id, auth.organizationId) : undefined;
  if (!found) throw notFound();
  return found;
}

/** PUT/DELETE target: 404, then 409 when locked (unless the request unlocks it), then 409 when stale. */
export async function findChangeable(
  ctx: MonitorsContext,
  auth: Auth,
  rawId: string,
  unlocks: boolean,
  expected: ExpectedVersion = {},
): Promise<Monitor> {
  const monitor = await findMonitor(ctx, auth, rawId);
  await checkChangeable(monitor, unlocks, expected, LOCKED, 'This monitor', async (id) => ctx.nameOf?.(id));
  return monitor;
}

/** A monitor built from a create's fields, unsaved (POST and the preview). */
export async function buildMonitor(
  ctx: MonitorsContext,
  auth: Auth,
  input: MonitorInput,
  bag: ErrorBag,
): Promise<{ monitor: Monitor; source: Source; plan: MonitorPlan | null }> {
  const organizationId = auth.organizationId;
  if (!organizationId) throw conflict(NO_ORGANIZATION);
  if (input.name === undefined && !bag.has('name')) bag.add('name', 'is required');
  const source = await selectSource(
    input,
    organizationId,
    ctx.sources,
    { projectsEnabled: ctx.projectsEnabled, keptProjectId: null },
    bag,
  );
  if (source === undefined && !SOURCE_FIELDS.some((field) => bag.has(field))) {
    bag.add('source', 'is required: send source {type, id}, or source_type and source_id');
  }
  const now = ctx.now();
  const blank: Monitor = {
    id: newId(),
    organizationId,
    userId: auth.userId,
    name: '',
    description: null,
    type: 'alert',
    status: 'active',
    locked: false,
    sourceType: source?.type ?? 'project',
    sourceId: source?.id ?? '',
    alertMetricKey: null,
    alertMetricPath: null,
    alertSeries: [],
    alertTimeframe: null,
    alertGranularity: null,
    alertNotifyEvery: 1,
    deliveryChannels: [],
    alerts: [],
    triggerStatus: 'idle',
    for: '0m',
    repeatEvery: null,
    notifyRecovery: true,
    notifyNoData: false,
    mutedUntil: null,
    extra: {},
    insertedAt: now,
    updatedAt: now,
    updatedBy: auth.kind === 'user' ? auth.userId : null,
  };
  const monitor = await applyInput(ctx, blank, input, bag);
  const plan = source ? await checkMonitor(ctx, monitor, source, bag) : null;
  return { monitor, source: source!, plan };
}

export async function createMonitor(
  ctx: MonitorsContext,
  auth: Auth,
  input: MonitorInput,
  bag: ErrorBag,
): Promise<Monitor> {
  const { monitor } = await buildMonitor(ctx, auth, input, bag);
  bag.throwIfAny();
  // The cap is counted in the insert's own transaction.
  if (!(await ctx.monitors.insert(monitor, MAX_MONITORS)))
    throw conflict(`An organization may have at most ${MAX_MONITORS} monitors`);
  return monitor;
}

/**
 * Applies a PUT to a monitor found with findChangeable. Only the fields sent change. Undefined when
 * another save came in between (the write is conditioned on the version read): the caller finds
 * and checks it again.
 */
export async function updateMonitor(
  ctx: MonitorsContext,
  current: Monitor,
  input: MonitorInput,
  bag: ErrorBag,
  userId: string | null,
  expected: ExpectedVersion = {},
): Promise<Monitor | undefined> {
  const keptProjectId = current.sourceType === 'project' ? current.sourceId : null;
  const selected = await selectSource(
    input,
    current.organizationId,
    ctx.sources,
    { projectsEnabled: ctx.projectsEnabled, keptProjectId },
    bag,
  );
  const source = selected === undefined ? await ctx.sources.byId(current.sourceId) : selected;
  const base: Monitor = source ? { ...current, sourceType: source.type, sourceId: source.id } : current;
  const next = await applyInput(ctx, base, input, bag);
  if (source) await checkMonitor(ctx, next, source, bag);
  bag.throwIfAny();
  const saved: Monitor = {
    ...next,
    updatedAt: nextUpdatedAt(current, ctx.now()),
    updatedBy: userId,
  };
  // A change of what is watched starts the instances afresh (their states belong to the old rule).
  const saved_ = await ctx.monitors.update(saved, current.updatedAt, watchChanged(current, saved));
  return saved_ ? saved : undefined;
}

/** Deletes a monitor found with findChangeable, only at the version read; false when it changed meanwhile. */
export async function removeMonitor(ctx: MonitorsContext, monitor: Monitor): Promise<boolean> {
  return ctx.monitors.remove(monitor.id, monitor.organizationId, monitor.updatedAt);
}

/**
 * Mutes until `until` (ms), or unmutes with null. Not a change of the monitor's definition: no lock
 * check. Written only at the version read (another save in between: read again), as a later version
 * even when the clock is not past the one read (a node whose clock is behind): the document written
 * holds the rules' status as read, which may put back an evaluation stamp an evaluation written
 * meanwhile moved on, so an evaluation planned from that older stamp must find the version changed
 * (storage/monitors.ts saveEvaluations).
 */
export async function muteMonitor(
  ctx: MonitorsContext,
  auth: Auth,
  rawId: string,
  until: number | null,
): Promise<Monitor> {
  for (let attempt = 1; ; attempt++) {
    const monitor = await findMonitor(ctx, auth, rawId);
    const next = { ...monitor, mutedUntil: until, updatedAt: Math.max(ctx.now(), monitor.updatedAt + 1) };
    if (await ctx.monitors.update(next, monitor.updatedAt)) return next;
    if (attempt === SAVE_TRIES) throw conflict(CHANGED_MEANWHILE);
  }
}

/** Tries of a write conditioned on the version read before the answer is a 409. */
export const SAVE_TRIES = 5;
export const CHANGED_MEANWHILE = 'The monitor changed while it was being saved: retry';

function watchChanged(a: Monitor, b: Monitor): boolean {
  const watched = (m: Monitor) =>
    JSON.stringify([m.sourceId, m.alertMetricKey, m.alertMetricPath, m.alertSeries, m.alertGranularity]);
  return watched(a) !== watched(b);
}

async function applyInput(
  ctx: MonitorsContext,
  current: Monitor,
  input: MonitorInput,
  bag: ErrorBag,
): Promise<Monitor> {
  const next: Monitor = { ...current, extra: { ...current.extra } };
  if (input.name !== undefined) next.name = input.name;
  if (input.description !== undefined) next.description = input.description;
  if (input.type !== undefined) next.type = input.type;
  if (input.status !== undefined) next.status = input.status;
  if (input.locked !== undefined) next.locked = input.locked;
  if (input.alert_metric_key !== undefined) next.alertMetricKey = input.alert_metric_key;
  if (input.alert_series !== undefined) next.alertSeries = input.alert_series ?? [];
  if (input.alert_metric_path !== undefined) next.alertMetricPath = input.alert_metric_path;
  else if (input.alert_series !== undefined) next.alertMetricPath = firstPath(next.alertSeries);
  if (input.alert_timeframe !== undefined) next.alertTimeframe = input.alert_timeframe;
  if (input.alert_granularity !== undefined) next.alertGranularity = input.alert_granularity;
  if (input.alert_notify_every !== undefined) next.alertNotifyEvery = input.alert_notify_every;
  if (input.delivery_channels !== undefined) next.deliveryChannels = input.delivery_channels ?? [];
  if (input.alerts !== undefined) next.alerts = mergeRules(current.alerts, input.alerts ?? []);
  if (input.for !== undefined) next.for = input.for;
  if (input.repeat_every !== undefined) next.repeatEvery = input.repeat_every;
  if (input.notify_recovery !== undefined) next.notifyRecovery = input.notify_recovery;
  if (input.notify_no_data !== undefined) next.notifyNoData = input.notify_no_data;
  if (input.muted_until !== undefined)
    next.mutedUntil = input.muted_until === null ? null : parseTimestamp(input.muted_until);
  for (const field of EXTRA_FIELDS) {
    const value = input[field];
    if (value === undefined) continue;
    if (value === null) delete next.extra[field];
    else next.extra[field] = value;
  }
  await checkChannels(ctx, next, bag);
  if (next.alertSeries.length > 0) checkSeriesRows(next.alertSeries, 'alert_series', bag);
  const { id, organizationId, userId, insertedAt, updatedAt, updatedBy, ...document } = next;
  const bytes = Buffer.byteLength(JSON.stringify(document));
  if (bytes > MAX_MONITOR_BYTES)
    bag.add('body', `a monitor must be at most ${MAX_MONITOR_BYTES} bytes of JSON (got ${bytes})`);
  void [id, organizationId, userId, insertedAt, updatedAt, updatedBy];
  return next;
}

/** Checks what needs the source: the monitor compiles (key, path, window, rules). */
async function checkMonitor(
  ctx: MonitorsContext,
  m: Monitor,
  source: Source,
  bag: ErrorBag,
): Promise<MonitorPlan | null> {
  if (m.name.trim() === '' && !bag.has('name')) bag.add('name', 'is required');
  if (m.type !== 'alert') {
    // A report monitor: its dashboard, schedule and window (domain/alerts/reports.ts).
    if (ctx.dashboards) await planReport(m, { dashboards: ctx.dashboards, sources: ctx.sources }, bag);
    return null;
  }
  return compileMonitor(m, source, bag);
}

function firstPath(rows: unknown[]): string | null {
  for (const row of rows) {
    const r = row as { kind?: unknown; path?: unknown } | null;
    if (r && r.kind !== 'expression' && typeof r.path === 'string' && r.path !== '') return r.path;
  }
  return null;
}

/** Rules as sent: an id of an existing rule keeps its evaluation fields, others get a new id. */
function mergeRules(current: AlertRule[], sent: RuleInput[]): AlertRule[] {
  const byId = new Map(current.map((rule) => [rule.id, rule]));
  return sent.map((input) => {
    const id = typeof input.id === 'string' ? normalizeId(input.id) : null;
    const kept = id ? byId.get(id) : undefined;
    const sameStrategy = kept?.analysis_strategy === input.analysis_strategy;
    return {
      id: kept ? kept.id : (id ?? newId()),
      analysis_strategy: input.analysis_strategy,
      settings: input.settings ?? {},
      status: kept && sameStrategy ? kept.status : 'passed',
      last_summary: kept && sameStrategy ? kept.last_summary : null,
      last_evaluated_at: kept && sameStrategy ? kept.last_evaluated_at : null,
    };
  });
}

async function checkChannels(ctx: MonitorsContext, m: Monitor, bag: ErrorBag): Promise<void> {
  for (const [index, entry] of m.deliveryChannels.entries()) {
    const raw = entry.channel_id;
    if (raw === undefined) continue; // Trifle App's own entry, kept as sent
    const id = typeof raw === 'string' ? normalizeId(raw) : null;
    const known = id !== null && (ctx.channels ? await ctx.channels.exists(m.organizationId, id) : true);
    if (!known)
      bag.add(`delivery_channels[${index}].channel_id`, 'must be the id of a channel of this organization');
  }
}

/** The channel ids a monitor notifies (its `{channel_id}` entries). */
export function channelIdsOf(m: Monitor): string[] {
  const ids = m.deliveryChannels
    .map((entry) => (typeof entry.channel_id === 'string' ? normalizeId(entry.channel_id) : null))
    .filter((id): id is string => id !== null);
  return [...new Set(ids)];
}
