// Heatmap cells. Two shapes, chosen by the data: when the path's children are maps themselves
// (Trifle's 3d distribution: x bucket → y bucket → count), a matrix of x × y summed over the range;
// when they are numbers, time buckets across and the children down.
import { bucketLabels, compareBucketLabels } from './buckets';
import type { Entry } from './rows';

export interface HeatmapGrid {
  xLabels: string[];
  yLabels: string[];
  /** cells[y][x] */
  cells: number[][];
  max: number;
  /** x labels are bucket start times (epoch ms) when true */
  timeAxis: boolean;
}

/** Columns a time heatmap draws at most (one SVG cell each per row). */
export const HEATMAP_MAX_COLUMNS = 240;

/** x × y matrix from totals entries whose bindings are `x.y`. */
export function matrixGrid(entries: readonly Entry[]): HeatmapGrid {
  const sums = new Map<string, number>();
  const xs = new Set<string>();
  const ys = new Set<string>();
  for (const e of entries) {
    const dot = e.binding.indexOf('.');
    const [x, y] = dot < 0 ? [e.binding, 'total'] : [e.binding.slice(0, dot), e.binding.slice(dot + 1)];
    xs.add(x);
    ys.add(y);
    sums.set(`${x}\u0000${y}`, (sums.get(`${x}\u0000${y}`) ?? 0) + (e.values[0] ?? 0));
  }
  const xLabels = bucketLabels(xs);
  const yLabels = bucketLabels(ys).reverse(); // larger y at the top, as on a chart
  const cells = yLabels.map((y) => xLabels.map((x) => sums.get(`${x}\u0000${y}`) ?? 0));
  return { xLabels, yLabels, cells, max: maxOf(cells), timeAxis: false };
}

/**
 * Children down, buckets across, from timeline entries. Past `limit` rows only the largest (by
 * total) are kept, in their original order, so labels stay readable; `total` says how many there were.
 */
export function timeGrid(
  entries: readonly Entry[],
  at: readonly number[],
  limit = 24,
  maxColumns = HEATMAP_MAX_COLUMNS,
): HeatmapGrid & { total: number; perColumn: number } {
  const sum = (e: Entry) => e.values.reduce<number>((s, v) => s + (v ?? 0), 0);
  const keep = new Set([...entries].sort((a, b) => sum(b) - sum(a)).slice(0, limit));
  let shown = entries.filter((e) => keep.has(e));
  // Children that are all histogram buckets ("50", "100", "1000+") go in numeric order, larger on
  // top as in the matrix shape; other children keep their order.
  const label = (e: Entry) => e.binding || e.name;
  if (shown.length > 1 && shown.every((e) => /^-?\d+(\.\d+)?\+?$/.test(label(e)))) {
    shown = [...shown].sort((a, b) => compareBucketLabels(label(b), label(a)));
  }
  // More buckets than columns: adjacent buckets are summed into one column (counts add up), labelled
  // by the first bucket's start. Thousands of cells per row neither read nor draw well.
  const perColumn = Math.max(1, Math.ceil(at.length / maxColumns));
  const columns = Math.ceil(at.length / perColumn);
  const xLabels: string[] = [];
  for (let c = 0; c < columns; c++) xLabels.push(String(at[c * perColumn]));
  const cells = shown.map((e) => {
    const row = new Array<number>(columns).fill(0);
    for (let i = 0; i < at.length; i++) row[Math.floor(i / perColumn)]! += e.values[i] ?? 0;
    return row;
  });
  return { xLabels, yLabels: shown.map(label), cells, max: maxOf(cells), timeAxis: true, total: entries.length, perColumn };
}

/** True when the entries' bindings are two levels deep (x.y), the matrix shape. */
export function isMatrix(entries: readonly Entry[]): boolean {
  return entries.length > 0 && entries.every((e) => e.binding.includes('.'));
}

function maxOf(cells: number[][]): number {
  let max = 0;
  for (const row of cells) for (const v of row) if (v > max) max = v;
  return max;
}

/** 0..1 intensity of a cell; a square-root scale keeps small counts visible beside a few large ones. */
export function intensity(value: number, max: number): number {
  if (max <= 0 || value <= 0) return 0;
  return Math.sqrt(Math.min(value, max) / max);
}
