// range: violated where the value is outside min..max (both included in the range).
import type { RuleSeries, StrategyResult } from './series';

export function range(s: RuleSeries, min: number, max: number): StrategyResult {
  return {
    violating: s.values.map((x) => x !== null && (x < min || x > max)),
    upper: s.values.map(() => max),
    lower: s.values.map(() => min),
  };
}
