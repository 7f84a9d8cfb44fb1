// threshold: violated where the value is above (or below) a value. Missing buckets never violate.
import type { RuleSeries, StrategyResult } from './series';

export function threshold(s: RuleSeries, direction: 'above' | 'below', value: number): StrategyResult {
  const violating = s.values.map((x) => x !== null && (direction === 'above' ? x > value : x < value));
  const band = s.values.map(() => value);
  return direction === 'above' ? { violating, upper: band } : { violating, lower: band };
}
