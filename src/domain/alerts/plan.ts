// What a monitor evaluates, compiled once from its fields: the source, the key (or key pattern with
// named groups), the series (one path, or series rows with expressions: the last visible row is
// watched), the window (timeframe and granularity of the source's calendar) and the rules with their
// settings normalised. The CRUD rules compile a monitor to check it; the evaluator and the preview
// compile it to run it.
import type { AlertRule, Monitor } from '../../model/monitor';
import type { Source } from '../types';
import { type Expr, parseExpression } from '../../shared/expression';
import { isPattern, patternProblem } from '../../shared/key-pattern';
import { parseGranularity, countBuckets, type Granularity } from '../../model/time/granularity';
import { spanMs } from '../../shared/spans';
import { type RuleSettings, parseRuleSettings, type Bag } from './strategies/settings';
import { MAX_WINDOW_BUCKETS } from './limits';

export type SeriesRow =
  { kind: 'path'; path: string; visible: boolean } | { kind: 'expression'; expr: Expr; visible: boolean };

export interface CompiledRule {
  rule: AlertRule;
  settings: RuleSettings;
}

export interface MonitorPlan {
  key: string;
  /** set when the key is a pattern: matched against the whole key, named groups become labels */
  pattern: RegExp | null;
  rows: SeriesRow[];
  /** the row whose values the rules judge */
  watched: number;
  granularity: Granularity;
  timeframe: string;
  timeframeMs: number;
  rules: CompiledRule[];
}

/** A key with a named group (`cpu,host=(?<host>[^,]+)`) or `^`/`$` is a pattern, as transponders'. */
export const isKeyPattern = (key: string): boolean => isPattern(key) || /\(\?<[A-Za-z_]/.test(key);

/** The source of a key pattern's expression: anchored at both ends unless it starts with ^ or ends with $. */
export const patternSource = (key: string): string =>
  key.startsWith('^') || key.endsWith('$') ? key : `^(?:${key})$`;

/** The regular expression of a key pattern. */
export const keyPatternRegExp = (key: string): RegExp => new RegExp(patternSource(key), 'u');

/** The labels of `key` under `pattern` (its named groups), or null when it does not match. */
export function matchKey(pattern: RegExp, key: string): Record<string, string> | null {
  const m = pattern.exec(key);
  if (!m) return null;
  const labels: Record<string, string> = {};
  for (const [name, value] of Object.entries(m.groups ?? {})) if (value !== undefined) labels[name] = value;
  return labels;
}

const PLAIN_PATH = /^[^.*\s][^*]*$/;

/**
 * Compiles a monitor against its source; every problem goes to `bag` under the field it is about.
 * Returns null when anything was wrong.
 */
export function compileMonitor(m: Monitor, source: Source, bag: Bag): MonitorPlan | null {
  let problems = 0;
  const add = (field: string, message: string) => {
    problems += 1;
    bag.add(field, message);
  };
  const key = m.alertMetricKey ?? '';
  let pattern: RegExp | null = null;
  if (key === '') add('alert_metric_key', 'is required for alert monitors');
  else if (isKeyPattern(key)) {
    const problem = patternProblem(patternSource(key));
    if (problem) add('alert_metric_key', `as a key pattern ${problem}`);
    else pattern = keyPatternRegExp(key);
  }
  const rows = compileRows(m, add);
  const granularityText = m.alertGranularity ?? source.defaultGranularity;
  const granularity = parseGranularity(granularityText);
  if (!granularity || !source.granularities.includes(granularityText))
    add('alert_granularity', `must be one of the source's granularities: ${source.granularities.join(', ')}`);
  const timeframe = m.alertTimeframe ?? source.defaultTimeframe;
  const timeframeMs = spanMs(timeframe, 'typical') ?? 0;
  if (granularity && timeframeMs > 0) {
    const cal = { timeZone: source.timeZone, beginningOfWeek: source.beginningOfWeek };
    const buckets = countBuckets(0, timeframeMs, granularity, cal, MAX_WINDOW_BUCKETS);
    const granularityMs = spanMs(granularityText, 'typical') ?? 0;
    if (timeframeMs < granularityMs)
      add('alert_timeframe', `must span at least one bucket of ${granularityText}`);
    else if (buckets > MAX_WINDOW_BUCKETS)
      add('alert_timeframe', `must hold at most ${MAX_WINDOW_BUCKETS} buckets of ${granularityText}`);
  }
  const rules: CompiledRule[] = [];
  m.alerts.forEach((rule, index) => {
    const field = `alerts[${index}].settings`;
    const settings = parseRuleSettings(rule.analysis_strategy, rule.settings, field, { add });
    if (!settings) return;
    if (settings.strategy === 'absence' && settings.periodMs > timeframeMs)
      add(`${field}.period`, `must be at most the monitor's alert_timeframe (${timeframe})`);
    rules.push({ rule, settings });
  });
  if (m.type === 'alert' && m.alerts.length === 0)
    add('alerts', 'must hold at least one rule for an alert monitor');
  if (problems > 0 || !granularity) return null;
  const watched = lastVisible(rows);
  return { key, pattern, rows, watched, granularity, timeframe, timeframeMs, rules };
}

function compileRows(m: Monitor, add: (field: string, message: string) => void): SeriesRow[] {
  const sent = m.alertSeries.filter(
    (row): row is Record<string, unknown> => typeof row === 'object' && row !== null,
  );
  if (sent.length === 0) {
    const path = m.alertMetricPath ?? '';
    if (path === '') add('alert_metric_path', 'is required for alert monitors (or alert_series)');
    else if (!PLAIN_PATH.test(path) || path.split('.').some((s) => s === ''))
      add('alert_metric_path', 'must be a dot path to one value such as count or duration.p95 (no *)');
    return [{ kind: 'path', path, visible: true }];
  }
  const rows: SeriesRow[] = [];
  sent.forEach((row, index) => {
    const at = `alert_series[${index}]`;
    const visible = row.visible !== false;
    if (row.kind === 'expression') {
      try {
        rows.push({
          kind: 'expression',
          expr: parseExpression(String(row.expression ?? ''), index),
          visible,
        });
      } catch (err) {
        add(`${at}.expression`, (err as Error).message);
      }
      return;
    }
    const path = typeof row.path === 'string' ? row.path.trim() : '';
    if (path === '' || !PLAIN_PATH.test(path) || path.split('.').some((s) => s === ''))
      add(`${at}.path`, 'must be a dot path to one value such as count or duration.p95 (no *)');
    rows.push({ kind: 'path', path, visible });
  });
  return rows;
}

function lastVisible(rows: SeriesRow[]): number {
  for (let i = rows.length - 1; i >= 0; i--) if (rows[i]!.visible) return i;
  return rows.length - 1;
}
