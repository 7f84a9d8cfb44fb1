// absence: no data for a period. A bucket is violated when no bucket ending after (its end - period)
// holds a value, measured in time rather than in buckets, so a 23-hour DST day counts as 23 hours.
// Buckets whose period reaches back before the window are not judged (the data may be there).
import { type RuleSeries, type StrategyResult, bucketEnd } from './series';

export function absence(s: RuleSeries, periodMs: number): StrategyResult {
  const n = s.values.length;
  const violating = new Array<boolean>(n).fill(false);
  let lastPresentEnd = -Infinity;
  for (let i = 0; i < n; i++) {
    const end = bucketEnd(s, i);
    if (s.values[i] !== null) lastPresentEnd = end;
    const since = end - periodMs;
    if (since < (s.at[0] ?? end)) continue;
    violating[i] = lastPresentEnd <= since;
  }
  return { violating };
}
