// hampel: an outlier against the rolling median. At each bucket, the median m of the `window` values
// before it (missing ones skipped) and their scaled median absolute deviation (MAD x 1.4826, at least
// `floor`) give a band m +- k x MAD; a value outside it is violated. Fewer than 3 earlier values:
// no band, no violation.
import { type RuleSeries, type StrategyResult, median } from './series';

const MAD_SCALE = 1.4826;

export function hampel(s: RuleSeries, window: number, k: number, floor: number): StrategyResult {
  const n = s.values.length;
  const violating = new Array<boolean>(n).fill(false);
  const upper = new Array<number | null>(n).fill(null);
  const lower = new Array<number | null>(n).fill(null);
  const recent: number[] = [];
  for (let i = 0; i < n; i++) {
    if (recent.length >= 3) {
      const sorted = [...recent].sort((a, b) => a - b);
      const m = median(sorted);
      const deviations = sorted.map((x) => Math.abs(x - m)).sort((a, b) => a - b);
      const scale = Math.max(median(deviations) * MAD_SCALE, floor);
      upper[i] = m + k * scale;
      lower[i] = m - k * scale;
      const x = s.values[i];
      violating[i] = x !== null && x !== undefined && (x > upper[i]! || x < lower[i]!);
    }
    const x = s.values[i];
    if (x !== null && x !== undefined) {
      recent.push(x);
      if (recent.length > window) recent.shift();
    }
  }
  return { violating, upper, lower };
}
