// POST /monitors/preview: an unsaved monitor run over a past range (default the last 7 days, fewer
// when that would pass MAX_PREVIEW_BUCKETS of its granularity): the series it watches, each rule's
// bands and the buckets where it would have begun to fire, and a sentence saying how often. The
// pending period is not applied (it depends on when rounds run); reminders are not counted.
import type { Monitor } from '../../model/monitor';
import type { Source } from '../types';
import type { MonitorPlan } from './plan';
import { RoundReader, type SeriesReader, windowOf } from './reader';
import { runRule } from './strategies';
import { spanMs } from '../../shared/spans';

export const MAX_PREVIEW_BUCKETS = 10_080; // 7 days of minutes
/** keys of a pattern a preview draws */
export const MAX_PREVIEW_SERIES = 20;
const DEFAULT_RANGE_MS = 7 * 86_400_000;

export interface PreviewAnswer {
  from: number;
  to: number;
  series: Array<{
    key: string;
    labels: Record<string, string>;
    at: number[];
    values: (number | null)[];
    fired_at: number[];
  }>;
  rules: Array<{
    id: string;
    analysis_strategy: string;
    bands: { upper?: (number | null)[]; lower?: (number | null)[] };
    fired_at: number[];
  }>;
  fired_count: number;
  summary: string;
}

export async function previewMonitor(
  metrics: SeriesReader,
  monitor: Monitor,
  source: Source,
  plan: MonitorPlan,
  now: number,
  range: { from?: number; to?: number },
): Promise<PreviewAnswer> {
  const to = Math.min(range.to ?? now, now);
  const bucketMs = spanMs(plan.granularity.text, 'typical') ?? 60_000;
  const longest = bucketMs * MAX_PREVIEW_BUCKETS;
  const wanted = range.from ?? to - Math.max(DEFAULT_RANGE_MS, plan.timeframeMs);
  const from = Math.max(wanted, to - longest);
  const w = windowOf(source, plan.granularity, from, to);
  const reader = new RoundReader(metrics);
  const keys = (await reader.keys(source, plan, w)).slice(0, MAX_PREVIEW_SERIES);
  const series: PreviewAnswer['series'] = [];
  const rules: PreviewAnswer['rules'] = plan.rules.map(({ rule }) => ({
    id: rule.id,
    analysis_strategy: rule.analysis_strategy,
    bands: {},
    fired_at: [],
  }));
  let firedCount = 0;
  for (const [n, { key, labels }] of keys.entries()) {
    const values = await reader.series(source, plan, key, w);
    const input = { at: w.bucketsMs, end: w.endMs, values };
    const any = new Array<boolean>(values.length).fill(false);
    plan.rules.forEach(({ settings }, r) => {
      const outcome = runRule(input, settings);
      outcome.result.violating.forEach((v, i) => (any[i] = any[i] || v));
      rules[r]!.fired_at.push(...outcome.firedAt);
      if (n === 0) {
        if (outcome.result.upper) rules[r]!.bands.upper = outcome.result.upper;
        if (outcome.result.lower) rules[r]!.bands.lower = outcome.result.lower;
      }
    });
    const firedAt = w.bucketsMs.filter((_, i) => any[i] && !any[i - 1]);
    firedCount += firedAt.length;
    series.push({ key, labels, at: w.bucketsMs, values, fired_at: firedAt });
  }
  for (const rule of rules) rule.fired_at.sort((a, b) => a - b);
  void monitor;
  return {
    from,
    to,
    series,
    rules,
    fired_count: firedCount,
    summary: summaryOf(firedCount, to - from, keys.length),
  };
}

function spanText(ms: number): string {
  const days = ms / 86_400_000;
  if (days >= 1 && Number.isInteger(Math.round(days * 10) / 10)) {
    const d = Math.round(days);
    return d === 1 ? 'the last day' : `the last ${d} days`;
  }
  const hours = Math.max(1, Math.round(ms / 3_600_000));
  return hours === 1 ? 'the last hour' : `the last ${hours} hours`;
}

export function summaryOf(count: number, spanMs: number, keys: number): string {
  const over = spanText(spanMs);
  if (keys === 0) return `no matching data in ${over}`;
  if (count === 0) return `would not have fired in ${over}`;
  return `would have fired ${count === 1 ? 'once' : count === 2 ? 'twice' : `${count} times`} in ${over}`;
}
