// A dashboard's (or explore's) view state and its URL form, so that a copied URL reproduces the
// view: `range=24h` (a preset, relative to now) or `from`/`to` (RFC 3339), `g` (granularity),
// `refresh`, and `s.<segment>` per segment value. Pure functions.
import { spanMs as sharedSpanMs, UNIT_SPANS } from '../../src/shared/spans';

export const PRESETS = ['5m', '15m', '1h', '6h', '24h', '7d', '30d', '90d', '1y'] as const;
export const REFRESH = ['off', '10s', '30s', '1m', '5m'] as const;
/** Auto-refresh intervals in ms (off: none). */
export const REFRESH_MS: Record<string, number | null> = {
  off: null,
  '10s': 10_000,
  '30s': 30_000,
  '1m': 60_000,
  '5m': 300_000,
};
/** More buckets than this in one read is too slow to draw; a finer granularity gives way to a coarser
 * (with a notice). 2,500 keeps 90 days and more at 1h (2,160). */
export const MAX_BUCKETS = 2500;

/** Milliseconds of `24h`, `7d`, `1mo` ... (a month as 30 days, a quarter as 91), or null. */
export function spanMs(text: string | null | undefined): number | null {
  return sharedSpanMs(text, 'typical');
}

export interface ViewState {
  preset: string | null;
  from: number | null;
  to: number | null;
  granularity: string | null;
  refresh: string;
  segments: Record<string, string>;
}

const parseTime = (text: string | null): number | null => {
  if (!text) return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
};

export function parseView(query: URLSearchParams): ViewState {
  const from = parseTime(query.get('from'));
  const to = parseTime(query.get('to'));
  const custom = from !== null && to !== null && from < to;
  const range = query.get('range');
  const segments: Record<string, string> = {};
  for (const [k, v] of query) if (k.startsWith('s.')) segments[k.slice(2)] = v;
  const refresh = query.get('refresh') ?? 'off';
  return {
    preset: custom ? null : spanMs(range) ? range : null,
    from: custom ? from : null,
    to: custom ? to : null,
    granularity: query.get('g'),
    refresh: (REFRESH as readonly string[]).includes(refresh) ? refresh : 'off',
    segments,
  };
}

export const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The query parameters of a view (merge with the page's own, e.g. kiosk). */
export function viewParams(view: ViewState): Record<string, string | null> {
  const params: Record<string, string | null> = {
    range: view.preset,
    from: view.from !== null ? isoSeconds(view.from) : null,
    to: view.to !== null ? isoSeconds(view.to) : null,
    g: view.granularity,
    refresh: view.refresh === 'off' ? null : view.refresh,
  };
  for (const [name, value] of Object.entries(view.segments)) if (value !== '') params[`s.${name}`] = value;
  return params;
}

/** The view's range and granularity from a query string (what a link to the same data carries). */
export function rangeParams(search: string): Record<string, string> {
  const query = new URLSearchParams(search);
  const kept: Record<string, string> = {};
  for (const name of ['range', 'from', 'to', 'g']) {
    const value = query.get(name);
    if (value) kept[name] = value;
  }
  return kept;
}

/** The absolute range of a view: a preset ends now; without either, the fallback preset. */
export function resolveRange(view: ViewState, now: number, fallback: string): { from: number; to: number } {
  if (view.from !== null && view.to !== null) return { from: view.from, to: view.to };
  const span = spanMs(view.preset) ?? spanMs(fallback) ?? UNIT_SPANS.d.typical;
  return { from: now - span, to: now };
}

/** Back (-1) or forward (+1) by the window's own span: the result is a fixed range. */
export function shiftView(view: ViewState, direction: -1 | 1, now: number, fallback: string): ViewState {
  const { from, to } = resolveRange(view, now, fallback);
  const span = to - from;
  return { ...view, preset: null, from: from + direction * span, to: to + direction * span };
}

/**
 * The granularity to read: the wanted one when the range has at most maxBuckets of it, else the
 * finest allowed one that does, else the coarsest allowed.
 */
export function fitGranularity(
  allowed: string[],
  wanted: string | null,
  rangeMs: number,
  maxBuckets = MAX_BUCKETS,
): string {
  const sorted = [...allowed].sort((a, b) => (spanMs(a) ?? 0) - (spanMs(b) ?? 0));
  const fits = (g: string) => rangeMs / (spanMs(g) ?? 1) <= maxBuckets;
  if (wanted && allowed.includes(wanted) && fits(wanted)) return wanted;
  return sorted.find(fits) ?? sorted[sorted.length - 1] ?? wanted ?? '1h';
}
