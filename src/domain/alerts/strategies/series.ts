// The input and output of every strategy: a series of completed buckets (starts in epoch ms, the end
// of the last one, a value or null per bucket) and, per bucket, whether the rule is violated there,
// with the bands a chart may draw (null where a band is not defined).

export interface RuleSeries {
  /** bucket starts, oldest first (from the source's calendar: a DST day is 23 or 25 hours) */
  at: readonly number[];
  /** the end of the last bucket (the start of the bucket being filled) */
  end: number;
  values: readonly (number | null)[];
}

export interface StrategyResult {
  violating: boolean[];
  upper?: (number | null)[];
  lower?: (number | null)[];
}

/** The end of bucket i: the next bucket's start, or the series' end for the last one. */
export const bucketEnd = (s: RuleSeries, i: number): number => (i + 1 < s.at.length ? s.at[i + 1]! : s.end);

export function median(sorted: readonly number[]): number {
  const n = sorted.length;
  const mid = n >> 1;
  return n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
