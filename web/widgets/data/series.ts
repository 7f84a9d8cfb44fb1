// From the dashboard's one series to what a widget draws: per-bucket values of each row (timeline),
// or each row's totals over the range, and the four aggregation functions.
// A bucket without a matched leaf counts as 0, as in Trifle App's timelines (SPEC 5.4: missing → 0):
// metrics are mostly counters, and an empty bucket means nothing happened.
import type { SeriesData } from '../types';
import { effectivePattern, leaves, matchPaths } from './paths';
import { resolveRows, widgetRows, type PathSource, type ResolvedRow, type SeriesRow } from './rows';

export type AggregateFunction = 'sum' | 'mean' | 'min' | 'max';

/** sum, mean, min, max of the non-null values; null when there are none. */
export function aggregate(values: ReadonlyArray<number | null>, fn: AggregateFunction): number | null {
  const nums = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (nums.length === 0) return null;
  switch (fn) {
    case 'sum':
      return nums.reduce((a, b) => a + b, 0);
    case 'mean':
      return nums.reduce((a, b) => a + b, 0) / nums.length;
    case 'min':
      return Math.min(...nums);
    case 'max':
      return Math.max(...nums);
  }
}

export function toFunction(raw: unknown): AggregateFunction {
  const fn = String(raw ?? 'mean').toLowerCase();
  if (fn === 'avg') return 'mean';
  return fn === 'sum' || fn === 'min' || fn === 'max' ? fn : 'mean';
}

interface LeafIndex {
  /** sorted leaf paths of the whole series */
  paths: string[];
  /** per bucket: leaf path → value */
  buckets: Array<Map<string, number>>;
}

// Every widget of a dashboard reads the same series object, so its leaves are walked once.
const indexes = new WeakMap<SeriesData, LeafIndex>();

function leafIndex(series: SeriesData): LeafIndex {
  let index = indexes.get(series);
  if (!index) {
    const buckets = series.values.map((bucket) => new Map(leaves(bucket)));
    const paths = [...new Set(buckets.flatMap((b) => [...b.keys()]))].sort();
    index = { paths, buckets };
    indexes.set(series, index);
  }
  return index;
}

/** Per-bucket values: one column per bucket of the series. */
export function timelineSource(series: SeriesData): PathSource {
  const { paths, buckets } = leafIndex(series);
  return (pattern) =>
    matchPaths(paths, effectivePattern(series, pattern)).map(({ path, binding }) => ({
      path,
      binding,
      values: buckets.map((bucket) => bucket.get(path) ?? 0),
    }));
}

/** Totals over the range: one column, the sum of each matched leaf. */
export function totalsSource(series: SeriesData): PathSource {
  const timeline = timelineSource(series);
  return (pattern) =>
    timeline(pattern).map(({ path, binding, values }) => ({ path, binding, values: [aggregate(values, 'sum') ?? 0] }));
}

export interface WidgetData {
  rows: SeriesRow[];
  resolved: ResolvedRow[];
}

export function widgetTimeline(widget: Record<string, unknown>, series: SeriesData): WidgetData {
  const rows = widgetRows(widget);
  return { rows, resolved: resolveRows(rows, timelineSource(series), series.values.length) };
}

export function widgetTotals(widget: Record<string, unknown>, series: SeriesData): WidgetData {
  const rows = widgetRows(widget);
  return { rows, resolved: resolveRows(rows, totalsSource(series), 1) };
}
