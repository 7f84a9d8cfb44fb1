// Explore's arithmetic: key counts from the system key's buckets, and a series as CSV. Pure.
import type { SeriesData } from '../widgets/types';
import { leaf } from './series';

/** Every numeric leaf of a nested map, by dot path. */
function leaves(node: unknown, prefix: string, out: Map<string, number>): void {
  if (typeof node === 'number') out.set(prefix, (out.get(prefix) ?? 0) + node);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) leaves(v, prefix ? `${prefix}.${k}` : k, out);
  }
}

export interface KeyCounts {
  /** every event of the source in the range (the system key's `count`) */
  total: number;
  /** keys with their event counts, most events first */
  keys: { key: string; count: number }[];
}

/** Keys with their event counts over the series of `__system__key__`. */
export function keyCounts(system: SeriesData): KeyCounts {
  const counts = new Map<string, number>();
  let total = 0;
  for (const bucket of system.values) {
    leaves(bucket.keys, '', counts);
    if (typeof bucket.count === 'number') total += bucket.count;
  }
  const keys = [...counts]
    .map(([key, count]) => ({ key, count }))
    .sort((a, b) => b.count - a.count || a.key.localeCompare(b.key));
  return { total, keys };
}

const csvCell = (text: string) => (/[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

/** `at,<path>...` then one row per bucket; an empty cell where a bucket has no value. */
export function seriesCsv(series: SeriesData, paths: string[]): string {
  const rows = [['at', ...paths].map(csvCell).join(',')];
  series.atText.forEach((at, i) => {
    const values = paths.map((p) => {
      const v = leaf(series.values[i] ?? {}, p);
      return v === null ? '' : String(v);
    });
    rows.push([csvCell(at), ...values].join(','));
  });
  return `${rows.join('\n')}\n`;
}
