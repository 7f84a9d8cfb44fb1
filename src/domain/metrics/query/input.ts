// Checks of the query body fields that belong to the query maths (SPEC 5.4). The route owns the
// 400-level checks (required fields, timestamps, granularity) and uses parseMode for `mode`;
// everything here that fails is a 422 query error.

import { queryError } from '../../../errors';

export type QueryMode = 'aggregate' | 'timeline' | 'category';
export type Aggregator = 'sum' | 'mean' | 'min' | 'max';

const MODES: readonly QueryMode[] = ['aggregate', 'timeline', 'category'];
export const AGGREGATORS: readonly Aggregator[] = ['max', 'mean', 'min', 'sum'];
const OPTIONS = `(options: ${AGGREGATORS.join(', ')})`;

/** `mode` (or its alias `format`), case-insensitive; null means the route answers 400. */
export function parseMode(raw: unknown): QueryMode | null {
  if (typeof raw !== 'string') return null;
  const mode = raw.toLowerCase();
  return MODES.find((m) => m === mode) ?? null;
}

/**
 * `slices`: absent or null -> 1; a JSON integer >= 1 or a string of digits naming one.
 * Values beyond Number.MAX_SAFE_INTEGER are refused as well (they could not be exact).
 */
export function parseSlices(raw: unknown): number {
  if (raw === undefined || raw === null) return 1;
  let n = Number.NaN;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && /^\d+$/.test(raw)) n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw queryError('slices must be a positive integer.');
  return n;
}

/** More slices than buckets would leave empty groups. */
export function checkSlicesFit(slices: number, buckets: number): void {
  if (slices > buckets) {
    throw queryError(`slices (${slices}) cannot exceed the number of buckets (${buckets}).`);
  }
}

/** The query endpoint takes one concrete path; `*` belongs to dashboards, not here. */
export function checkNoWildcard(valuePath: string): void {
  if (valuePath.includes('*')) {
    throw queryError(`Wildcards are not supported in value_path "${valuePath}"`);
  }
}

/**
 * `aggregator` for aggregate mode. Absent, null or blank -> "must be provided". Matching is
 * case-insensitive like `mode` (`SUM` is accepted and answered as `sum`); anything else -> 422
 * with `allowed`.
 */
export function parseAggregator(raw: unknown): Aggregator {
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) {
    throw queryError(`Aggregator must be provided ${OPTIONS}.`);
  }
  const allowed = { allowed: [...AGGREGATORS] };
  if (typeof raw !== 'string') throw queryError(`Aggregator must be a string ${OPTIONS}.`, allowed);
  const name = raw.toLowerCase();
  const found = AGGREGATORS.find((a) => a === name);
  if (!found) {
    const shown = raw.length > 64 ? `${raw.slice(0, 64)}...` : raw;
    throw queryError(`Unknown aggregator "${shown}" ${OPTIONS}.`, allowed);
  }
  return found;
}
