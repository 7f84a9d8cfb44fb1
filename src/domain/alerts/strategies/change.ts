// change: percent change against the previous window. At each bucket, the sum of the last `window`
// buckets is compared with the sum of the `window` buckets before them; a change of `percent` or more
// (up, down or either way) is violated. A previous window summing to 0, or with no value at all, gives
// no baseline and no violation. With window 1 the bands are the previous value +- percent.
import type { RuleSeries, StrategyResult } from './series';

export function change(
  s: RuleSeries,
  percent: number,
  direction: 'up' | 'down' | 'any',
  window: number,
): StrategyResult {
  const n = s.values.length;
  const violating = new Array<boolean>(n).fill(false);
  const upper = new Array<number | null>(n).fill(null);
  const lower = new Array<number | null>(n).fill(null);
  const sum = (from: number, to: number): number | null => {
    let total = 0;
    let any = false;
    for (let j = Math.max(from, 0); j < to; j++) {
      const x = s.values[j];
      if (x !== null && x !== undefined) {
        total += x;
        any = true;
      }
    }
    return any ? total : null;
  };
  for (let i = 2 * window - 1; i < n; i++) {
    const current = sum(i - window + 1, i + 1);
    const previous = sum(i - 2 * window + 1, i - window + 1);
    if (previous === null || previous === 0) continue;
    if (window === 1) {
      upper[i] = previous + Math.abs(previous) * (percent / 100);
      lower[i] = previous - Math.abs(previous) * (percent / 100);
    }
    if (current === null) continue;
    const pct = ((current - previous) / Math.abs(previous)) * 100;
    violating[i] =
      direction === 'up' ? pct >= percent : direction === 'down' ? pct <= -percent : Math.abs(pct) >= percent;
  }
  return window === 1 ? { violating, upper, lower } : { violating };
}
