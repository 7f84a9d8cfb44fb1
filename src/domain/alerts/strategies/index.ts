// Runs one rule over a series of completed buckets (pure): applies "treat missing as zero", asks the
// strategy which buckets violate it, and derives what the evaluator and the preview need: whether it
// holds now (at the last bucket that has a value; for absence at the last bucket), the value there,
// and the buckets where it began to hold (where a rule "would have fired").
import { absence } from './absence';
import { change } from './change';
import { cusum } from './cusum';
import { hampel } from './hampel';
import { range } from './range';
import type { RuleSeries, StrategyResult } from './series';
import type { RuleSettings } from './settings';
import { threshold } from './threshold';

export type { RuleSeries, StrategyResult } from './series';
export { parseRuleSettings, presentRuleSettings, describeRule, type RuleSettings } from './settings';

export interface RuleOutcome {
  result: StrategyResult;
  /** the rule holds at the latest judged bucket */
  firing: boolean;
  /** the value at that bucket (null when missing) */
  value: number | null;
  /** the bucket judged, null when there was nothing to judge (no value in the window) */
  at: number | null;
  /** starts of the buckets where the rule began to hold */
  firedAt: number[];
}

export function strategyResult(s: RuleSeries, settings: RuleSettings): StrategyResult {
  switch (settings.strategy) {
    case 'threshold':
      return threshold(s, settings.direction, settings.value);
    case 'range':
      return range(s, settings.min, settings.max);
    case 'hampel':
      return hampel(s, settings.window, settings.k, settings.floor);
    case 'cusum':
      return cusum(s, settings.k, settings.h);
    case 'absence':
      return absence(s, settings.periodMs);
    case 'change':
      return change(s, settings.percent, settings.direction, settings.window);
  }
}

export function runRule(series: RuleSeries, settings: RuleSettings): RuleOutcome {
  // Absence is about missing data, so a missing bucket stays missing for it.
  const filled =
    settings.treatMissingAsZero && settings.strategy !== 'absence'
      ? { ...series, values: series.values.map((x) => x ?? 0) }
      : series;
  const result = strategyResult(filled, settings);
  const firedAt: number[] = [];
  result.violating.forEach((v, i) => {
    if (v && !result.violating[i - 1]) firedAt.push(filled.at[i]!);
  });
  let judged = filled.values.length - 1;
  if (settings.strategy !== 'absence') {
    while (judged >= 0 && filled.values[judged] === null) judged -= 1;
  }
  if (judged < 0) return { result, firing: false, value: null, at: null, firedAt };
  return {
    result,
    firing: result.violating[judged] === true,
    value: filled.values[judged] ?? null,
    at: filled.at[judged]!,
    firedAt,
  };
}
