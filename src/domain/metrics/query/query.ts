// The maths of POST /api/v1/metrics/query (SPEC 5.4): aggregate, timeline and category views over
// a series already read from the store. Pure: no HTTP, no SQL; failures are thrown as query errors.
//
// Decisions where SPEC is silent:
// - aggregate takes one leaf: a value_path naming a map is an unknown path. timeline and category
//   expand a map path to every leaf below it (any depth); a leaf path gives itself.
// - `available_paths` and `matched_paths` cover the whole range, dropped buckets included; so does
//   `table` (one row per bucket of the range), while values/result cover the sliced groups only.
// - category answers every matched path in every slice (0 where a slice has no value).
// - sums use Neumaier compensation; a figure that overflows to a non-finite number is null.
// - checks run in this order: slices syntax, wildcard, aggregator, slices vs buckets, paths.

import { queryError } from '../../../errors';
import { formatTimestamp } from '../../../shared/time';
import {
  type Column,
  type Scan,
  type SlicePlan,
  denseValues,
  finiteOrNull,
  groupStats,
  planSlices,
  scanSeries,
} from './columns';
import { pathSelector } from '../../../model/paths';
import {
  type Aggregator,
  type QueryMode,
  checkNoWildcard,
  checkSlicesFit,
  parseAggregator,
  parseSlices,
} from './input';

export { flattenLeaves } from '../../../model/paths';
export { parseMode, type Aggregator, type QueryMode } from './input';

export interface QueryRequest {
  key: string;
  fromMs: number;
  toMs: number;
  granularity: string;
  mode: QueryMode;
  valuePath: string;
  aggregator: unknown;
  slices: unknown;
}

/**
 * One entry per bucket, oldest first; `at` formatted in the source zone; `{}` when empty. Values
 * are the stores' JSON texts (scanned without parsing where they allow it, domain/metrics/query/columns.ts) or maps.
 */
export interface SeriesData {
  at: string[];
  values: ReadonlyArray<string | Record<string, unknown>>;
  /** transponders skipped by the read (SPEC 15), sent as `meta.transponder_errors` */
  transponderErrors?: ReadonlyArray<unknown>;
  /** scans `values` with the transponders' responses seen as stored (SPEC 15); scanSeries when absent */
  scan?: (selects: (path: string) => boolean) => Scan;
}

/**
 * Timeline results and the table hold one cell per bucket and matched path; above this many the
 * query is refused (422) rather than building an answer of unbounded size.
 */
export const MAX_QUERY_CELLS = 2_000_000;

const UNITS: ReadonlyArray<[string, number]> = [
  ['d', 86_400],
  ['h', 3_600],
  ['m', 60],
  ['s', 1],
];

/** The span `to - from` in the largest whole unit (`1d`, `25h`, `90m`), else `custom`. */
export function timeframeLabel(fromMs: number, toMs: number): string {
  const spanMs = toMs - fromMs;
  if (!Number.isFinite(spanMs) || spanMs <= 0 || spanMs % 1000 !== 0) return 'custom';
  const seconds = spanMs / 1000;
  for (const [unit, size] of UNITS) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return 'custom';
}

interface Context {
  req: QueryRequest;
  series: SeriesData;
  plan: SlicePlan;
  availablePaths: string[];
  columns: Column[];
}

/**
 * A query's answer as the endpoint writes it: every member of `data` but `table`, which comes last
 * and is left as its columns (http/present/metrics.ts writes it as text, without building a row
 * array per bucket).
 */
export interface QueryAnswer {
  body: Record<string, unknown>;
  table: QueryTable;
}

/** One row per bucket of the whole range (dropped ones too), a cell per matched path, null where absent. */
export interface QueryTable {
  at: readonly string[];
  columns: readonly Column[];
}

/** The answer as one object, `table` built as rows (the endpoint's JSON has the same members). */
export function runQuery(req: QueryRequest, series: SeriesData): Record<string, unknown> {
  const { body, table } = answerQuery(req, series);
  return { ...body, table: buildTable(table.at, table.columns) };
}

export function answerQuery(req: QueryRequest, series: SeriesData): QueryAnswer {
  if (series.at.length !== series.values.length) {
    throw new Error('series.at and series.values differ in length');
  }
  const slices = parseSlices(req.slices);
  checkNoWildcard(req.valuePath);
  const aggregator = req.mode === 'aggregate' ? parseAggregator(req.aggregator) : null;
  const buckets = series.at.length;
  checkSlicesFit(slices, buckets);
  // Aggregate works on one leaf; timeline and category expand a map path to the leaves below it.
  const selects = pathSelector(req.valuePath, req.mode !== 'aggregate');
  const scan = series.scan ? series.scan(selects) : scanSeries(series.values, selects);
  const ctx: Context = { req, series, plan: planSlices(buckets, slices), ...scan };
  checkMatched(ctx);
  const body = aggregator
    ? aggregateBody(ctx, aggregator)
    : req.mode === 'timeline'
      ? timelineBody(ctx)
      : categoryBody(ctx);
  return { body, table: { at: series.at, columns: ctx.columns } };
}

function checkMatched(ctx: Context): void {
  const { req, columns, availablePaths } = ctx;
  if (columns.length === 0 && req.mode === 'aggregate') {
    throw queryError(`Unknown path(s): ${req.valuePath}`, {
      missing_paths: [req.valuePath],
      available_paths: availablePaths,
    });
  }
  if (columns.length === 0) {
    const message = `No matching data found for path ${req.valuePath} in the selected timeframe.`;
    throw queryError(message, { available_paths: availablePaths });
  }
  const cells = columns.length * ctx.series.at.length;
  if (cells > MAX_QUERY_CELLS) {
    const over = `${columns.length} paths over ${ctx.series.at.length} buckets`;
    throw queryError(
      `value_path ${req.valuePath} matches ${over}, more than ${MAX_QUERY_CELLS} values; ` +
        'narrow value_path or the timeframe.',
      { matched_count: columns.length, limit: MAX_QUERY_CELLS },
    );
  }
}

function commonHead(ctx: Context): Record<string, unknown> {
  return { metric_key: ctx.req.key, value_path: ctx.req.valuePath, slices: ctx.plan.slices };
}

function commonTail(ctx: Context): Record<string, unknown> {
  return {
    available_paths: ctx.availablePaths,
    matched_paths: ctx.columns.map((c) => c.path),
  };
}

function timeframe(req: QueryRequest): Record<string, string> {
  return {
    from: formatTimestamp(req.fromMs, 0),
    to: formatTimestamp(req.toMs, 0),
    label: timeframeLabel(req.fromMs, req.toMs),
    granularity: req.granularity,
  };
}

function aggregateBody(ctx: Context, aggregator: Aggregator): Record<string, unknown> {
  const stats = groupStats(ctx.columns[0]!, ctx.plan);
  const values: Array<number | null> = [];
  for (let g = 0; g < ctx.plan.slices; g++) {
    const n = stats.count[g]!;
    if (aggregator === 'sum') values.push(finiteOrNull(stats.sum[g]!));
    else if (n === 0) values.push(null);
    else if (aggregator === 'mean') values.push(finiteOrNull(stats.sum[g]! / n));
    else values.push(aggregator === 'min' ? stats.min[g]! : stats.max[g]!);
  }
  const { metric_key, value_path, slices } = commonHead(ctx);
  return {
    status: 'ok',
    aggregator,
    metric_key,
    value_path,
    slices,
    ...(ctx.plan.slices === 1 ? { value: values[0] } : {}),
    values,
    count: values.length,
    timeframe: timeframe(ctx.req),
    ...commonTail(ctx),
  };
}

function timelineBody(ctx: Context): Record<string, unknown> {
  const { at } = ctx.series;
  const { slices, size, drop } = ctx.plan;
  const result: Record<string, unknown> = {};
  for (const column of ctx.columns) {
    const dense = denseValues(column, at.length);
    const points = (start: number, end: number) => {
      const out: Array<{ at: string; value: number }> = new Array(end - start);
      for (let i = start; i < end; i++) out[i - start] = { at: at[i]!, value: dense[i]! };
      return out;
    };
    if (slices === 1) result[column.path] = points(0, at.length);
    else {
      result[column.path] = Array.from({ length: slices }, (_, g) =>
        points(drop + g * size, drop + (g + 1) * size),
      );
    }
  }
  return formatted(ctx, 'timeline', result);
}

function categoryBody(ctx: Context): Record<string, unknown> {
  const groups: Array<Record<string, number | null>> = Array.from({ length: ctx.plan.slices }, () => ({}));
  for (const column of ctx.columns) {
    const { sum } = groupStats(column, ctx.plan);
    groups.forEach((group, g) => (group[column.path] = finiteOrNull(sum[g]!)));
  }
  return formatted(ctx, 'category', ctx.plan.slices === 1 ? groups[0] : groups);
}

function formatted(ctx: Context, formatter: string, result: unknown): Record<string, unknown> {
  const head = { status: 'ok', formatter, ...commonHead(ctx), timeframe: timeframe(ctx.req) };
  return { ...head, result, ...commonTail(ctx) };
}

/** One row per bucket of the whole range (dropped ones too), null where a path is absent. */
function buildTable(at: readonly string[], columns: readonly Column[]) {
  const header = ['at', ...columns.map((c) => c.path)];
  if (columns.length === 1) return { columns: header, rows: singleColumnRows(at, columns[0]!) };
  const cursor = new Array<number>(columns.length).fill(0);
  const rows: Array<Array<string | number | null>> = new Array(at.length);
  for (let i = 0; i < at.length; i++) {
    const row: Array<string | number | null> = new Array(columns.length + 1);
    row[0] = at[i]!;
    for (let c = 0; c < columns.length; c++) {
      const column = columns[c]!;
      const k = cursor[c]!;
      if (k < column.size && column.index[k] === i) {
        row[c + 1] = column.value[k]!;
        cursor[c] = k + 1;
      } else row[c + 1] = null;
    }
    rows[i] = row;
  }
  return { columns: header, rows };
}

/** The common one-path table, built with row literals (about twice as fast on long ranges). */
function singleColumnRows(at: readonly string[], column: Column): Array<[string, number | null]> {
  const rows: Array<[string, number | null]> = new Array(at.length);
  let k = 0;
  for (let i = 0; i < at.length; i++) {
    if (k < column.size && column.index[k] === i) rows[i] = [at[i]!, column.value[k++]!];
    else rows[i] = [at[i]!, null];
  }
  return rows;
}
