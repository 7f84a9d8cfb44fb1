// Stacking and normalizing for time charts: stacked series are drawn as running totals (the last
// one on top); normalized series are each bucket's share of the bucket's total, in percent.

type Column = Array<number | null>;

/** Running totals across series, bucket by bucket (nulls count as 0 and stay null). */
export function stackSeries(series: readonly Column[]): Column[] {
  const totals: number[] = [];
  return series.map((values) =>
    values.map((v, i) => {
      totals[i] = (totals[i] ?? 0) + (v ?? 0);
      return v === null ? null : totals[i]!;
    }),
  );
}

/** Each value as a percentage of its bucket's total over all series (a zero total gives 0). */
export function normalizeSeries(series: readonly Column[]): Column[] {
  const width = Math.max(0, ...series.map((s) => s.length));
  const totals = Array.from({ length: width }, (_, i) => series.reduce((sum, s) => sum + Math.abs(s[i] ?? 0), 0));
  return series.map((values) => values.map((v, i) => (v === null ? null : totals[i] ? (v / totals[i]!) * 100 : 0)));
}
