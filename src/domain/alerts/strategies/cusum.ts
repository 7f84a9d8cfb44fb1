// cusum: drift of the mean. Values are standardised against a reference: the mean and standard
// deviation of the first half of the window's values (1 when they are all equal); two cumulative sums S+ = max(0, S+ + z - k) and
// S- = max(0, S- - z - k) grow while values stay above (below) the mean by more than k standard
// deviations; a bucket where either passes h is violated. Missing buckets leave the sums as they are.
import type { RuleSeries, StrategyResult } from './series';

export function cusum(s: RuleSeries, k: number, h: number): StrategyResult {
  const present = s.values.filter((x): x is number => x !== null);
  const n = s.values.length;
  const violating = new Array<boolean>(n).fill(false);
  if (present.length < 2) return { violating };
  const reference = present.slice(0, Math.max(2, Math.ceil(present.length / 2)));
  const mean = reference.reduce((a, b) => a + b, 0) / reference.length;
  const variance = reference.reduce((a, b) => a + (b - mean) ** 2, 0) / (reference.length - 1);
  const sd = variance > 0 ? Math.sqrt(variance) : 1;
  let high = 0;
  let low = 0;
  for (let i = 0; i < n; i++) {
    const x = s.values[i];
    if (x === null || x === undefined) continue;
    const z = (x - mean) / sd;
    high = Math.max(0, high + z - k);
    low = Math.max(0, low - z - k);
    violating[i] = high > h || low > h;
  }
  return { violating };
}
