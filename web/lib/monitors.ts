// Monitors and channels as the interface reads them (SPEC 13, /api/v1/monitors and /api/v1/channels):
// their shapes, the state a monitor shows (muted and paused win over the evaluated state), a rule's
// settings read in either spelling (ours, `value`, or Trifle App's, `threshold_value`), and the
// map from a 422's field names to the form's fields. Pure, apart from the two loaders.
import { get } from './api';
import type { WidgetMonitor } from '../widgets/types';

export type EvalState = 'ok' | 'pending' | 'firing' | 'nodata' | 'error';
export type ShownState = EvalState | 'muted' | 'paused';
export const STRATEGIES = ['threshold', 'range', 'hampel', 'cusum', 'absence', 'change'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export interface MonitorRule {
  id?: string;
  analysis_strategy: string;
  settings: Record<string, unknown>;
  status?: string;
  last_summary?: string | null;
  last_evaluated_at?: string | null;
}

export interface MonitorInstance {
  labels: Record<string, string>;
  key: string;
  state: EvalState;
  since: string | null;
  last_value: number | null;
  last_evaluated_at: string | null;
}

export interface Monitor {
  id: string;
  name: string;
  description?: string | null;
  type: string;
  status: 'active' | 'paused';
  locked?: boolean;
  source_type: 'project' | 'database';
  source_id: string;
  alert_metric_key: string;
  alert_metric_path?: string | null;
  alert_series?: unknown;
  alert_timeframe: string;
  alert_granularity: string;
  alert_notify_every?: number;
  delivery_channels?: Array<{ channel_id?: string; [k: string]: unknown }>;
  alerts: MonitorRule[];
  trigger_status?: string;
  for?: string;
  repeat_every?: string | null;
  notify_recovery?: boolean;
  notify_no_data?: boolean;
  muted_until?: string | null;
  state?: EvalState;
  instances?: MonitorInstance[];
  inserted_at?: string;
  updated_at?: string;
}

export interface HistoryEntry {
  at: string;
  instance: string | Record<string, string> | null;
  from: string;
  to: string;
  value: number | null;
  summary: string | null;
}

export interface PreviewSeries {
  key: string;
  labels: Record<string, string>;
  at: number[];
  values: Array<number | null>;
}
export interface PreviewRule {
  id?: string;
  analysis_strategy: string;
  bands: { upper?: Array<number | null>; lower?: Array<number | null> };
  fired_at: number[];
}
export interface Preview {
  series: PreviewSeries[];
  rules: PreviewRule[];
  fired_count: number;
  summary: string;
}

export type ChannelType = 'webhook' | 'ntfy' | 'gotify' | 'email';
export const CHANNEL_TYPES: ChannelType[] = ['webhook', 'ntfy', 'gotify', 'email'];
export const PRESETS = ['slack', 'discord', 'mattermost', 'teams'] as const;

export interface Channel {
  id: string;
  name: string;
  type: ChannelType;
  preset: (typeof PRESETS)[number] | null;
  settings: Record<string, unknown>;
  /** secret fields, masked: `{ token: "…a1b2" }` */
  secrets: Record<string, string>;
  inserted_at?: string;
  updated_at?: string;
}

export const loadMonitors = (signal?: AbortSignal) => get<Monitor[]>('/monitors', { signal });
export const loadChannels = (signal?: AbortSignal) => get<Channel[]>('/channels', { signal });

/** Whether a mute is in force at `now`. */
export function isMuted(m: Pick<Monitor, 'muted_until'>, now = Date.now()): boolean {
  const until = m.muted_until ? Date.parse(m.muted_until) : NaN;
  return Number.isFinite(until) && until > now;
}

/** What the badge says: paused, then muted, then the evaluated state (ok before the first round). */
export function shownState(m: Monitor, now = Date.now()): ShownState {
  if (m.status === 'paused') return 'paused';
  if (isMuted(m, now)) return 'muted';
  return m.state ?? 'ok';
}

export const STATE_LABELS: Record<ShownState, string> = {
  ok: 'OK',
  pending: 'Pending',
  firing: 'Firing',
  nodata: 'No data',
  error: 'Error',
  muted: 'Muted',
  paused: 'Paused',
};

/** Order on the list: what needs attention first. */
export const STATE_RANK: Record<ShownState, number> = {
  firing: 0,
  error: 1,
  pending: 2,
  nodata: 3,
  muted: 4,
  ok: 5,
  paused: 6,
};

/** A setting under our name or Trifle App's (`value` / `threshold_value`). */
export function setting(rule: MonitorRule | undefined, ours: string, trifles: string[] = []): unknown {
  if (!rule) return undefined;
  for (const name of [ours, ...trifles]) if (rule.settings[name] !== undefined) return rule.settings[name];
  return undefined;
}

const num = (v: unknown): number | null => {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : null;
};

/** Trifle App's setting names, by strategy and our name. */
export const TRIFLE_NAMES: Record<string, Record<string, string[]>> = {
  threshold: { direction: ['threshold_direction'], value: ['threshold_value'] },
  range: { min: ['range_min_value'], max: ['range_max_value'] },
  hampel: { window: ['hampel_window_size'], k: ['hampel_k'], floor: ['hampel_mad_floor'] },
  cusum: { k: ['cusum_k'], h: ['cusum_h'] },
  absence: {},
  change: {},
};

export function ruleSetting(rule: MonitorRule | undefined, name: string): unknown {
  return setting(rule, name, TRIFLE_NAMES[rule?.analysis_strategy ?? '']?.[name] ?? []);
}

/** The constant lines a rule draws: a threshold's value, a range's min and max. */
export function ruleLines(rule: MonitorRule | undefined): { value: number; label: string }[] {
  if (!rule) return [];
  if (rule.analysis_strategy === 'threshold') {
    const value = num(ruleSetting(rule, 'value'));
    const direction = ruleSetting(rule, 'direction') === 'below' ? 'below' : 'above';
    return value === null ? [] : [{ value, label: `${direction} ${value}` }];
  }
  if (rule.analysis_strategy === 'range') {
    const out: { value: number; label: string }[] = [];
    const min = num(ruleSetting(rule, 'min'));
    const max = num(ruleSetting(rule, 'max'));
    if (min !== null) out.push({ value: min, label: `min ${min}` });
    if (max !== null) out.push({ value: max, label: `max ${max}` });
    return out;
  }
  return [];
}

/** One line about a rule: "above 100", "outside 10..90", "Hampel window 12, k 3". */
export function describeRule(rule: MonitorRule | undefined): string {
  if (!rule) return 'no rule';
  const s = (name: string) => {
    const v = ruleSetting(rule, name);
    return v === undefined || v === null ? '?' : String(v);
  };
  switch (rule.analysis_strategy) {
    case 'threshold':
      return `${s('direction') === 'below' ? 'below' : 'above'} ${s('value')}`;
    case 'range':
      return `outside ${s('min')}..${s('max')}`;
    case 'hampel':
      return `outlier (Hampel window ${s('window')}, k ${s('k')}, floor ${s('floor')})`;
    case 'cusum':
      return `drift (CUSUM k ${s('k')}, h ${s('h')})`;
    case 'absence':
      return `no data for ${s('period')}`;
    case 'change': {
      const d = ruleSetting(rule, 'direction');
      return `changes ${d === 'up' ? 'up ' : d === 'down' ? 'down ' : ''}by ${s('percent')} %`;
    }
    default:
      return rule.analysis_strategy;
  }
}

/** An instance's labels as `host=a, disk=sda`, or its key when it has none. */
export function instanceName(labels: Record<string, string> | null | undefined, key = ''): string {
  const pairs = Object.entries(labels ?? {});
  return pairs.length ? pairs.map(([k, v]) => `${k}=${v}`).join(', ') : key;
}

/** The monitor's channel ids (our `{channel_id}` entries; Trifle App's own entries are kept aside). */
export const channelIds = (m: Pick<Monitor, 'delivery_channels'>): string[] =>
  (m.delivery_channels ?? []).flatMap((c) => (typeof c.channel_id === 'string' ? [c.channel_id] : []));

/**
 * The form field a 422 names: `alert_metric_key` -> key, `alerts[0].settings.value` -> value,
 * `alerts.0.settings.threshold_value` -> value; null when no field of the form matches.
 */
export function formFieldOf(name: string, strategy: string): string | null {
  const parts = name
    .replace(/\[(\w+)\]/g, '.$1')
    .split('.')
    .filter((p) => p && !/^\d+$/.test(p));
  const last = parts[parts.length - 1] ?? '';
  const top = parts[0] ?? '';
  const direct: Record<string, string> = {
    name: 'name',
    description: 'description',
    source: 'source',
    source_id: 'source',
    source_type: 'source',
    alert_metric_key: 'key',
    alert_metric_path: 'path',
    alert_series: 'path',
    alert_granularity: 'granularity',
    alert_timeframe: 'timeframe',
    for: 'for',
    repeat_every: 'repeat_every',
    notify_recovery: 'notify_recovery',
    notify_no_data: 'notify_no_data',
    delivery_channels: 'channels',
    channel_id: 'channels',
    analysis_strategy: 'strategy',
    treat_missing_as_zero: 'treat_missing_as_zero',
    treat_nil_as_zero: 'treat_missing_as_zero',
    muted_until: 'muted_until',
    status: 'status',
  };
  if (top !== 'alerts') return direct[top] ?? direct[last] ?? null;
  if (direct[last]) return direct[last]!;
  for (const [ours, trifles] of Object.entries(TRIFLE_NAMES[strategy] ?? {}))
    if (last === ours || trifles.includes(last)) return ours;
  const settings = SETTINGS[strategy as Strategy]?.map((f) => f.name) ?? [];
  if (settings.includes(last)) return last;
  return 'strategy';
}

export interface SettingField {
  name: string;
  label: string;
  kind: 'number' | 'span' | 'choice';
  options?: string[];
  min?: number;
  step?: string;
  placeholder?: string;
  fallback: string;
}

/** The settings of each strategy, as the form shows them. */
export const SETTINGS: Record<Strategy, SettingField[]> = {
  threshold: [
    {
      name: 'direction',
      label: 'Fires when the value is',
      kind: 'choice',
      options: ['above', 'below'],
      fallback: 'above',
    },
    { name: 'value', label: 'Threshold', kind: 'number', step: 'any', fallback: '' },
  ],
  range: [
    { name: 'min', label: 'Minimum', kind: 'number', step: 'any', fallback: '' },
    { name: 'max', label: 'Maximum', kind: 'number', step: 'any', fallback: '' },
  ],
  hampel: [
    { name: 'window', label: 'Window (buckets)', kind: 'number', min: 1, step: '1', fallback: '12' },
    { name: 'k', label: 'k (deviations)', kind: 'number', min: 0, step: 'any', fallback: '3' },
    { name: 'floor', label: 'Floor (least deviation)', kind: 'number', min: 0, step: 'any', fallback: '0' },
  ],
  cusum: [
    { name: 'k', label: 'k (slack)', kind: 'number', min: 0, step: 'any', fallback: '0.5' },
    { name: 'h', label: 'h (alarm level)', kind: 'number', min: 0, step: 'any', fallback: '5' },
  ],
  absence: [{ name: 'period', label: 'No data for', kind: 'span', placeholder: '15m', fallback: '15m' }],
  change: [
    { name: 'percent', label: 'Change of at least (%)', kind: 'number', min: 0, step: 'any', fallback: '50' },
    {
      name: 'direction',
      label: 'Direction',
      kind: 'choice',
      options: ['any', 'up', 'down'],
      fallback: 'any',
    },
  ],
};

export const STRATEGY_LABELS: Record<Strategy, string> = {
  threshold: 'Threshold: above or below a value',
  range: 'Range: outside min..max',
  hampel: 'Hampel: an outlier against the rolling median',
  cusum: 'CUSUM: a drift from the mean',
  absence: 'Absence: no data for a period',
  change: 'Change: percent against the previous window',
};

/** Whether a monitor's key (a key, or a pattern with named groups) covers a dashboard's key. */
export function keyCovers(monitorKey: string, key: string, dashboardKey: string): boolean {
  if (monitorKey === key || monitorKey === dashboardKey) return true;
  if (!/[()[\]*+?\\|^$]/.test(monitorKey)) return false;
  try {
    return new RegExp(`^(?:${monitorKey})$`).test(key);
  } catch {
    return false;
  }
}

/**
 * The monitors a dashboard marks: alert monitors of its source on its key, with a path; firing when
 * the instance on this key fires (or the monitor, when no instance names the key).
 */
export function dashboardMonitors(
  monitors: readonly Monitor[],
  sourceId: string,
  key: string,
  dashboardKey: string,
  now = Date.now(),
): WidgetMonitor[] {
  return monitors
    .filter(
      (m) =>
        m.type !== 'report' &&
        m.source_id === sourceId &&
        typeof m.alert_metric_path === 'string' &&
        m.alert_metric_path !== '' &&
        keyCovers(m.alert_metric_key, key, dashboardKey),
    )
    .map((m) => {
      const own = m.instances?.find((i) => i.key === key);
      const state = shownState(m, now);
      const firing =
        state !== 'paused' && state !== 'muted' && (own ? own.state === 'firing' : state === 'firing');
      return { id: m.id, name: m.name, path: m.alert_metric_path!, firing, lines: ruleLines(m.alerts[0]) };
    });
}

/** The fields of a saved monitor that its preview (and a write) takes: what the server answers, less its own. */
export function writableOf(m: Monitor): Record<string, unknown> {
  const fields = [
    'name',
    'description',
    'type',
    'status',
    'source_type',
    'source_id',
    'alert_metric_key',
    'alert_metric_path',
    'alert_series',
    'alert_timeframe',
    'alert_granularity',
    'alert_notify_every',
    'delivery_channels',
    'for',
    'repeat_every',
    'notify_recovery',
    'notify_no_data',
  ] as const;
  const out: Record<string, unknown> = {};
  for (const f of fields) if (m[f] !== undefined && m[f] !== null) out[f] = m[f];
  out.alerts = m.alerts.map((r) => ({
    ...(r.id ? { id: r.id } : {}),
    analysis_strategy: r.analysis_strategy,
    settings: r.settings,
  }));
  return out;
}
