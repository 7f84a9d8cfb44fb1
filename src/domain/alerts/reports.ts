// Report monitors (SPEC 13, Trifle App's scheduled deliveries): once per period (`report_settings.
// frequency`: hourly, daily, weekly, monthly) a dashboard's data goes to the monitor's channels as
// CSV and/or JSON files (`delivery_media`: file_csv, file_json). PDF and PNG renders need a browser
// and are not made here.
//
// A report reads the dashboard's key over `report_settings.timeframe` of completed buckets of
// `report_settings.granularity` (defaults: the dashboard's) through the same series read as the
// dashboards (transponders applied), and takes from it the columns each widget draws: its series
// rows (paths, `*` segments expanded, expressions over the rows before them) or its path/paths.
// The rendered files are written to the outbox with the run's record in one transaction, with an
// idempotency key per monitor, period and channel: a period is sent once, also across restarts.
// The clock is the evaluator's (`now`); the evaluator's round runs the reports after the alerts.
import { createHash } from 'node:crypto';
import type { Dashboard } from '../../model/dashboard';
import type { Monitor } from '../../model/monitor';
import type { MonitorsRepo, ReportState } from '../../storage/monitors';
import type { NewOutboxRow, OutboxRepo } from '../../storage/outbox';
import type { Source } from '../types';
import type { SeriesText } from '../metrics/query/series';
import type { OutgoingNotification } from './delivery-port';
import { scanSeries } from '../metrics/query/columns';
import {
  countBuckets,
  createBucketer,
  parseGranularity,
  type Granularity,
} from '../../model/time/granularity';
import { spanMs } from '../../shared/spans';
import { formatTimestamp } from '../../shared/time';
import { evaluateWith, parseExpression, type Expr } from '../../shared/expression';
import { channelIdsOf } from './monitors';
import { windowOf, type SeriesReader } from './reader';
import { MAX_WINDOW_BUCKETS } from './limits';

export const REPORT_FREQUENCIES = ['hourly', 'daily', 'weekly', 'monthly'] as const;
export type ReportFrequency = (typeof REPORT_FREQUENCIES)[number];
/** The source's bucket that makes one period of each frequency (in its time zone and week start). */
const PERIOD_GRANULARITY: Record<ReportFrequency, string> = {
  hourly: '1h',
  daily: '1d',
  weekly: '1w',
  monthly: '1mo',
};
/** Columns of one report at most (a wildcard row may expand to many). */
export const MAX_REPORT_COLUMNS = 1_000;
/** Bytes of a report's files together at most; a larger one is sent as its summary, without files. */
export const MAX_REPORT_BYTES = 4 * 1024 * 1024;

export interface ReportPlan {
  dashboard: Dashboard;
  source: Source;
  frequency: ReportFrequency;
  timeframe: string;
  timeframeMs: number;
  granularity: Granularity;
  csv: boolean;
  json: boolean;
}

interface Bag {
  add(field: string, message: string): void;
}

export interface ReportLookups {
  dashboards: { byId(id: string, organizationId: string): Promise<Dashboard | undefined> };
  sources: { byId(id: string): Promise<Source | undefined> };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The dashboard id of a report monitor: `dashboard_id`, or Trifle App's `target.dashboard_id`. */
export function reportDashboardId(m: Monitor): string | null {
  const direct = m.extra.dashboard_id;
  if (typeof direct === 'string' && direct !== '') return direct.toLowerCase();
  const target = m.extra.target;
  if (isObject(target) && typeof target.dashboard_id === 'string' && target.dashboard_id !== '')
    return target.dashboard_id.toLowerCase();
  return null;
}

/** A report monitor's plan, or null with every problem in `bag` under the field it is about. */
export async function planReport(m: Monitor, lookups: ReportLookups, bag: Bag): Promise<ReportPlan | null> {
  let problems = 0;
  const add = (field: string, message: string) => {
    problems += 1;
    bag.add(field, message);
  };
  const id = reportDashboardId(m);
  const dashboard = id ? await lookups.dashboards.byId(id, m.organizationId) : undefined;
  if (!id) add('dashboard_id', 'is required for report monitors');
  else if (!dashboard) add('dashboard_id', 'must be the id of a dashboard of this organization');
  const source = dashboard ? await lookups.sources.byId(dashboard.sourceId) : undefined;
  if (dashboard && !source) add('dashboard_id', 'names a dashboard whose source no longer exists');
  const raw = m.extra.report_settings;
  const settings = isObject(raw) ? raw : {};
  // Trifle App: no settings at all is weekly; settings without a frequency are daily (its form's default).
  const frequency = (settings.frequency ?? (isObject(raw) ? 'daily' : 'weekly')) as ReportFrequency;
  if (!REPORT_FREQUENCIES.includes(frequency))
    add('report_settings.frequency', `must be one of ${REPORT_FREQUENCIES.join(', ')}`);
  const media = Array.isArray(m.extra.delivery_media) ? m.extra.delivery_media : [];
  const mediums = new Set(media.map((x) => (isObject(x) ? x.medium : undefined)));
  let csv = mediums.has('file_csv');
  const json = mediums.has('file_json');
  // PDF or PNG only (Trifle App's default is PDF): the CSV file is sent in their place.
  if (!csv && !json) csv = true;
  let timeframe = '';
  let timeframeMs = 0;
  let granularity: Granularity | null = null;
  if (dashboard && source) {
    const gText =
      typeof settings.granularity === 'string' && settings.granularity !== ''
        ? settings.granularity
        : dashboard.defaultGranularity;
    granularity = parseGranularity(gText);
    if (!granularity || !source.granularities.includes(gText)) {
      add(
        'report_settings.granularity',
        `must be one of the dashboard's source's granularities: ${source.granularities.join(', ')}`,
      );
      granularity = null;
    }
    timeframe =
      typeof settings.timeframe === 'string' && settings.timeframe !== ''
        ? settings.timeframe
        : dashboard.defaultTimeframe;
    timeframeMs = spanMs(timeframe, 'typical') ?? 0;
    if (timeframeMs <= 0)
      add('report_settings.timeframe', 'must be a count and a unit such as 24h, 7d or 1mo');
    else if (granularity) {
      const cal = { timeZone: source.timeZone, beginningOfWeek: source.beginningOfWeek };
      if (timeframeMs < (spanMs(granularity.text, 'typical') ?? 0))
        add('report_settings.timeframe', `must span at least one bucket of ${granularity.text}`);
      else if (countBuckets(0, timeframeMs, granularity, cal, MAX_WINDOW_BUCKETS) > MAX_WINDOW_BUCKETS)
        add(
          'report_settings.timeframe',
          `must hold at most ${MAX_WINDOW_BUCKETS} buckets of ${granularity.text}`,
        );
    }
  }
  if (problems > 0 || !dashboard || !source || !granularity) return null;
  return { dashboard, source, frequency, timeframe, timeframeMs, granularity, csv, json };
}

/** The start of the period holding `now`: the source's 1h, 1d, 1w or 1mo bucket. */
export function periodStart(frequency: ReportFrequency, source: Source, now: number): number {
  const g = parseGranularity(PERIOD_GRANULARITY[frequency])!;
  return createBucketer(g, { timeZone: source.timeZone, beginningOfWeek: source.beginningOfWeek })(now);
}

// --- The widgets' columns -----------------------------------------------------------------------

type Row =
  | { kind: 'path'; path: string; label: string; visible: boolean }
  | { kind: 'expression'; expr: Expr | null; text: string; label: string; visible: boolean };

/** The widgets of a dashboard's grid, group children in their place, text widgets left out. */
function widgetsOf(dashboard: Dashboard): Record<string, unknown>[] {
  const grid = Array.isArray(dashboard.payload.grid) ? dashboard.payload.grid : [];
  const out: Record<string, unknown>[] = [];
  for (const widget of grid) {
    if (!isObject(widget)) continue;
    if (widget.type === 'group') {
      const children = Array.isArray(widget.children) ? widget.children : [];
      for (const child of children) if (isObject(child) && child.type !== 'text') out.push(child);
    } else if (widget.type !== 'text') out.push(widget);
  }
  return out;
}

function rowsOf(widget: Record<string, unknown>): Row[] {
  const text = (x: unknown) => (typeof x === 'string' ? x.trim() : '');
  if (Array.isArray(widget.series) && widget.series.length > 0) {
    const rows: Row[] = [];
    for (const raw of widget.series) {
      if (!isObject(raw)) continue;
      const visible = raw.visible !== false;
      if (raw.kind === 'expression') {
        let expr: Expr | null = null;
        try {
          expr = parseExpression(text(raw.expression), rows.length);
        } catch {
          expr = null;
        }
        rows.push({ kind: 'expression', expr, text: text(raw.expression), label: text(raw.label), visible });
      } else if (text(raw.path) !== '')
        rows.push({ kind: 'path', path: text(raw.path), label: text(raw.label), visible });
    }
    return rows;
  }
  const paths = Array.isArray(widget.paths)
    ? widget.paths
    : typeof widget.path === 'string'
      ? [widget.path]
      : [];
  return paths
    .filter((p): p is string => typeof p === 'string' && p !== '')
    .map((path) => ({ kind: 'path', path, label: '', visible: true }));
}

/** Whether a leaf path matches a row's path, where a `*` segment matches any one segment. */
function matches(pattern: string, path: string): boolean {
  if (!pattern.includes('*')) return pattern === path;
  const want = pattern.split('.');
  const got = path.split('.');
  return want.length === got.length && want.every((segment, i) => segment === '*' || segment === got[i]);
}

export interface ReportColumn {
  name: string;
  values: (number | null)[];
}

export interface ReportData {
  monitor: { id: string; name: string };
  dashboard: { id: string; name: string; key: string };
  frequency: ReportFrequency;
  period_start: string;
  from: string;
  to: string;
  timeframe: string;
  granularity: string;
  at: string[];
  widgets: Array<{ id: string; title: string; type: string; columns: ReportColumn[] }>;
  truncated: boolean;
}

/** The report's data: per widget, the columns it draws, one value per completed bucket. */
export function reportData(
  m: Monitor,
  plan: ReportPlan,
  text: SeriesText,
  w: { bucketsMs: number[]; endMs: number },
  period: number,
): ReportData {
  const buckets = w.bucketsMs.length;
  const widgets = widgetsOf(plan.dashboard);
  const rowsByWidget = widgets.map(rowsOf);
  const patterns = rowsByWidget.flatMap((rows) => rows.flatMap((r) => (r.kind === 'path' ? [r.path] : [])));
  const scan = scanSeries(text.values, (path) => patterns.some((p) => matches(p, path)));
  const dense = new Map<string, (number | null)[]>();
  for (const column of scan.columns) {
    const values = new Array<number | null>(buckets).fill(null);
    for (let k = 0; k < column.size; k++) values[column.index[k]!] = column.value[k]!;
    dense.set(column.path, values);
  }
  let total = 0;
  let truncated = false;
  const out: ReportData['widgets'] = [];
  widgets.forEach((widget, index) => {
    const rows = rowsByWidget[index]!;
    const columns: ReportColumn[] = [];
    // per row: its one column (an expression may use it), or null when a wildcard made it many
    const single: Array<(number | null)[] | null> = [];
    for (const row of rows) {
      let made: ReportColumn[];
      if (row.kind === 'path') {
        const paths = row.path.includes('*')
          ? [...dense.keys()].filter((p) => matches(row.path, p))
          : [row.path];
        made = paths.map((path) => ({
          name: row.label && !row.path.includes('*') ? row.label : path,
          values: dense.get(path) ?? new Array<number | null>(buckets).fill(null),
        }));
        single.push(made.length === 1 ? made[0]!.values : null);
      } else {
        const values = new Array<number | null>(buckets).fill(null);
        if (row.expr && single.every((s) => s !== null))
          for (let i = 0; i < buckets; i++)
            values[i] = evaluateWith(
              row.expr,
              single.map((s) => s![i]),
            );
        made = [{ name: row.label || row.text, values }];
        single.push(values);
      }
      if (!row.visible) continue;
      for (const column of made) {
        if (total >= MAX_REPORT_COLUMNS) {
          truncated = true;
          break;
        }
        total += 1;
        columns.push(column);
      }
    }
    out.push({
      id: typeof widget.id === 'string' ? widget.id : String(index),
      title: typeof widget.title === 'string' ? widget.title : '',
      type: typeof widget.type === 'string' ? widget.type : '',
      columns,
    });
  });
  return {
    monitor: { id: m.id, name: m.name },
    dashboard: { id: plan.dashboard.id, name: plan.dashboard.name, key: plan.dashboard.key },
    frequency: plan.frequency,
    period_start: formatTimestamp(period),
    from: formatTimestamp(w.bucketsMs[0] ?? w.endMs),
    to: formatTimestamp(w.endMs),
    timeframe: plan.timeframe,
    granularity: plan.granularity.text,
    at: text.at.slice(0, buckets),
    widgets: out,
    truncated,
  };
}

/** A CSV cell: quoted when it holds a separator, a quote or a line break; text a spreadsheet would run as a formula is prefixed with '. */
function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The report as one CSV table (RFC 4180, CRLF): `at`, then a column per widget column ("title: name"). */
export function reportCsv(data: ReportData): string {
  const header = ['at'];
  const columns: ReportColumn[] = [];
  for (const widget of data.widgets)
    for (const column of widget.columns) {
      header.push(`${widget.title || widget.id}: ${column.name}`);
      columns.push(column);
    }
  const lines = [header.map(cell).join(',')];
  data.at.forEach((at, i) => {
    const row = [cell(at)];
    for (const column of columns) {
      const v = column.values[i];
      row.push(v === null || v === undefined ? '' : String(v));
    }
    lines.push(row.join(','));
  });
  return lines.join('\r\n') + '\r\n';
}

// --- The round ----------------------------------------------------------------------------------

export interface ReporterPorts extends ReportLookups {
  monitors: MonitorsRepo;
  outbox: OutboxRepo;
  metrics: SeriesReader;
  log: { warn(message: string, fields?: Record<string, unknown>): void };
}

export interface ReportStats {
  reports: number;
  queued: number;
  errors: number;
}

/** The name of a report's files: the dashboard's name made safe, then the period's date. */
function fileName(dashboard: Dashboard, period: string, ext: string): string {
  const base = dashboard.name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'dashboard';
  return `${base.slice(0, 80)}-${period.slice(0, 16).replace(/:/g, '')}.${ext}`;
}

export function createReporter(ports: ReporterPorts) {
  /** Runs each active report monitor whose current period has not been sent. */
  async function run(
    monitors: readonly Monitor[],
    now: number,
    turn: () => Promise<void>,
  ): Promise<ReportStats> {
    const stats: ReportStats = { reports: 0, queued: 0, errors: 0 };
    for (const m of monitors) {
      await turn();
      try {
        await runOne(m, now, stats);
      } catch (err) {
        stats.errors += 1;
        ports.log.warn('report failed', { monitor_id: m.id, error: (err as Error).message });
      }
    }
    return stats;
  }

  async function runOne(m: Monitor, now: number, stats: ReportStats): Promise<void> {
    const problems: string[] = [];
    const plan = await planReport(m, ports, { add: (f, message) => problems.push(`${f} ${message}`) });
    const state = await ports.monitors.reportState(m.id);
    if (!plan) {
      await record(m, state, null, now, problems.join('; '));
      return;
    }
    const period = periodStart(plan.frequency, plan.source, now);
    if (state?.periodStart === period) return; // this period was sent
    const w = windowOf(plan.source, plan.granularity, now - plan.timeframeMs, now);
    let text: SeriesText;
    try {
      text = await ports.metrics.readSeries(plan.source, {
        key: plan.dashboard.key,
        granularity: plan.granularity,
        fromMs: w.bucketsMs[0] ?? w.fromMs,
        toMs: w.endMs - 1,
        range: { bucketsMs: w.bucketsMs },
      });
    } catch (err) {
      await record(
        m,
        state,
        null,
        now,
        `source unreachable: ${String((err as Error)?.message ?? err).slice(0, 200)}`,
      );
      stats.errors += 1;
      return;
    }
    const data = reportData(m, plan, text, w, period);
    const csv = plan.csv ? reportCsv(data) : null;
    const json = plan.json ? JSON.stringify(data) : null;
    const columns = data.widgets.reduce((n, widget) => n + widget.columns.length, 0);
    const bytes = Buffer.byteLength(csv ?? '') + Buffer.byteLength(json ?? '');
    const tooLarge = bytes > MAX_REPORT_BYTES;
    const attachments: NonNullable<OutgoingNotification['attachments']> = [];
    if (!tooLarge && csv !== null)
      attachments.push({
        filename: fileName(plan.dashboard, data.period_start, 'csv'),
        contentType: 'text/csv; charset=utf-8',
        content: csv,
      });
    if (!tooLarge && json !== null)
      attachments.push({
        filename: fileName(plan.dashboard, data.period_start, 'json'),
        contentType: 'application/json',
        content: json,
      });
    const summary =
      `${plan.dashboard.name}: ${data.widgets.length} widgets, ${columns} series, ` +
      `${data.at.length} buckets of ${plan.granularity.text} from ${data.from} to ${data.to}` +
      (data.truncated ? ` (cut at ${MAX_REPORT_COLUMNS} series)` : '') +
      (tooLarge
        ? ` (the files would be ${bytes} bytes, more than ${MAX_REPORT_BYTES}: narrow the timeframe)`
        : '');
    const rows: NewOutboxRow[] = [];
    for (const channelId of channelIdsOf(m)) {
      const idempotencyKey = createHash('sha256')
        .update(`${m.id}\u0000report\u0000${period}\u0000${channelId}`)
        .digest('hex')
        .slice(0, 40);
      const notification: OutgoingNotification = {
        idempotencyKey,
        kind: 'report',
        monitor: { id: m.id, name: m.name },
        instance: {},
        state: 'ok',
        previousState: 'ok',
        value: null,
        condition: '',
        since: data.period_start,
        durationMs: 0,
        title: `Report: ${m.name}`,
        message: summary,
        attachments,
        report: tooLarge || json === null ? undefined : data,
      };
      rows.push({
        idempotency_key: idempotencyKey,
        organization_id: m.organizationId,
        monitor_id: m.id,
        channel_id: channelId,
        notification: JSON.stringify(notification),
        created_at: now,
      });
    }
    // Queued only while the monitor is the version planned, the period still unsent and the report's
    // state the one read above (saveReport).
    const queued = await record(
      m,
      state,
      period,
      now,
      null,
      `report for ${data.period_start}: ${summary}`,
      rows,
    );
    if (queued === null) return;
    stats.queued += queued;
    stats.reports += 1;
  }

  /**
   * The run's record, and a history entry when it changes the report's state (or sends one), with
   * the notifications of a sent period; null when nothing was written. Written only while the
   * report's state is still `before`, the one this run read (saveReport): of two runs from one state
   * (two nodes), one writes, so a period's notifications and a failure's entry are written once.
   */
  async function record(
    m: Monitor,
    before: ReportState | undefined,
    period: number | null,
    now: number,
    error: string | null,
    sent?: string,
    outbox: NewOutboxRow[] = [],
  ): Promise<number | null> {
    if (error !== null && before?.error === error) return null; // the same failure again: one entry
    return ports.monitors.saveReport(m, period, {
      from: before,
      outbox,
      state: { periodStart: period ?? before?.periodStart ?? null, ranAt: now, error },
      entry: {
        at: now,
        instance: '',
        from: before?.error ? 'error' : 'ok',
        to: error ? 'error' : 'ok',
        value: null,
        summary: error ?? sent ?? '',
      },
    });
  }

  return { run };
}

export type Reporter = ReturnType<typeof createReporter>;
