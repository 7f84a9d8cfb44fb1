// A rule's settings, read from either spelling: Trifle App's (`threshold_value`, `range_min_value`,
// `hampel_window_size`, `treat_nil_as_zero`, ...) or this service's shorter one (`value`, `min`,
// `window`, `treat_missing_as_zero`, ...). Numbers may arrive as numeric strings, as Trifle App's
// forms send them. Problems are reported under `<field>.<name>` in the bag (422 naming the field).
import type { Strategy } from '../../../model/monitor';
import { spanMs } from '../../../shared/spans';

export interface Bag {
  add(field: string, message: string): void;
}

export type RuleSettings =
  | { strategy: 'threshold'; direction: 'above' | 'below'; value: number; treatMissingAsZero: boolean }
  | { strategy: 'range'; min: number; max: number; treatMissingAsZero: boolean }
  | { strategy: 'hampel'; window: number; k: number; floor: number; treatMissingAsZero: boolean }
  | { strategy: 'cusum'; k: number; h: number; treatMissingAsZero: boolean }
  | { strategy: 'absence'; periodMs: number; period: string; treatMissingAsZero: boolean }
  | {
      strategy: 'change';
      percent: number;
      direction: 'up' | 'down' | 'any';
      window: number;
      treatMissingAsZero: boolean;
    };

type Raw = Record<string, unknown>;

/** The first of `names` present (not undefined, null or ""), with the name it was found under. */
function pick(raw: Raw, names: readonly string[]): [string, unknown] | null {
  for (const name of names) {
    const value = raw[name];
    if (value !== undefined && value !== null && value !== '') return [name, value];
  }
  return null;
}

function toNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' && /^\s*-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?\s*$/i.test(value))
    return Number(value);
  return null;
}

interface NumberRule {
  names: readonly string[];
  min?: number;
  above?: number;
  integer?: boolean;
  fallback?: number;
}

function number(raw: Raw, rule: NumberRule, field: string, bag: Bag): number {
  const found = pick(raw, rule.names);
  const name = rule.names[0]!;
  if (!found) {
    if (rule.fallback !== undefined) return rule.fallback;
    bag.add(`${field}.${name}`, 'is required');
    return NaN;
  }
  const n = toNumber(found[1]);
  const at = `${field}.${found[0]}`;
  if (n === null) bag.add(at, 'must be a number');
  else if (rule.integer && !Number.isInteger(n)) bag.add(at, 'must be a whole number');
  else if (rule.min !== undefined && n < rule.min) bag.add(at, `must be ${rule.min} or more`);
  else if (rule.above !== undefined && n <= rule.above) bag.add(at, `must be more than ${rule.above}`);
  else return n;
  return NaN;
}

function choice<T extends string>(
  raw: Raw,
  names: readonly string[],
  values: readonly T[],
  fallback: T,
  field: string,
  bag: Bag,
): T {
  const found = pick(raw, names);
  if (!found) return fallback;
  if (typeof found[1] === 'string' && (values as readonly string[]).includes(found[1])) return found[1] as T;
  bag.add(`${field}.${found[0]}`, `must be one of ${values.join(', ')}`);
  return fallback;
}

function flag(raw: Raw, field: string, bag: Bag): boolean {
  const found = pick(raw, ['treat_missing_as_zero', 'treat_nil_as_zero']);
  if (!found) return false;
  if (typeof found[1] === 'boolean') return found[1];
  if (found[1] === 'true' || found[1] === 'false') return found[1] === 'true';
  bag.add(`${field}.${found[0]}`, 'must be true or false');
  return false;
}

/** The normalised settings, or null when any was reported to the bag. */
export function parseRuleSettings(
  strategy: Strategy,
  raw: Raw,
  field: string,
  bag: Bag,
): RuleSettings | null {
  let problems = 0;
  const counting: Bag = {
    add(f, m) {
      problems += 1;
      bag.add(f, m);
    },
  };
  const treatMissingAsZero = flag(raw, field, counting);
  let settings: RuleSettings;
  switch (strategy) {
    case 'threshold':
      settings = {
        strategy,
        direction: choice(
          raw,
          ['direction', 'threshold_direction'],
          ['above', 'below'],
          'above',
          field,
          counting,
        ),
        value: number(raw, { names: ['value', 'threshold_value'] }, field, counting),
        treatMissingAsZero,
      };
      break;
    case 'range': {
      const min = number(raw, { names: ['min', 'range_min_value'] }, field, counting);
      const max = number(raw, { names: ['max', 'range_max_value'] }, field, counting);
      if (Number.isFinite(min) && Number.isFinite(max) && max <= min) {
        const name = pick(raw, ['max', 'range_max_value'])![0];
        counting.add(`${field}.${name}`, 'must be greater than the minimum');
      }
      settings = { strategy, min, max, treatMissingAsZero };
      break;
    }
    case 'hampel':
      settings = {
        strategy,
        window: number(
          raw,
          { names: ['window', 'hampel_window_size'], integer: true, above: 0 },
          field,
          counting,
        ),
        k: number(raw, { names: ['k', 'hampel_k'], above: 0 }, field, counting),
        floor: number(raw, { names: ['floor', 'hampel_mad_floor'], min: 0, fallback: 0 }, field, counting),
        treatMissingAsZero,
      };
      if (settings.window > 1000) counting.add(`${field}.window`, 'must be at most 1000');
      break;
    case 'cusum':
      settings = {
        strategy,
        k: number(raw, { names: ['k', 'cusum_k'], min: 0 }, field, counting),
        h: number(raw, { names: ['h', 'cusum_h'], above: 0 }, field, counting),
        treatMissingAsZero,
      };
      break;
    case 'absence': {
      const found = pick(raw, ['period']);
      const periodMs = found && typeof found[1] === 'string' ? spanMs(found[1], 'typical') : null;
      if (!found) counting.add(`${field}.period`, 'is required');
      else if (periodMs === null || periodMs <= 0)
        counting.add(`${field}.period`, 'must be a count and a unit such as 10m, 2h or 1d');
      settings = {
        strategy,
        periodMs: periodMs ?? NaN,
        period: String(found?.[1] ?? ''),
        treatMissingAsZero,
      };
      break;
    }
    case 'change':
      settings = {
        strategy,
        percent: number(raw, { names: ['percent'], above: 0 }, field, counting),
        direction: choice(raw, ['direction'], ['up', 'down', 'any'], 'any', field, counting),
        window: number(raw, { names: ['window'], integer: true, above: 0, fallback: 1 }, field, counting),
        treatMissingAsZero,
      };
      if (settings.window > 1000) counting.add(`${field}.window`, 'must be at most 1000');
      break;
  }
  return problems === 0 ? settings : null;
}

/**
 * The settings a monitor shows: what was sent, plus both spellings of every normalised value, so that
 * Trifle App's clients and this service's interface each find their names.
 */
export function presentRuleSettings(settings: RuleSettings | null, raw: Raw): Record<string, unknown> {
  if (!settings) return raw;
  const both: Record<string, unknown> = { treat_missing_as_zero: settings.treatMissingAsZero };
  switch (settings.strategy) {
    case 'threshold':
      Object.assign(both, {
        direction: settings.direction,
        value: settings.value,
        threshold_direction: settings.direction,
        threshold_value: settings.value,
        treat_nil_as_zero: settings.treatMissingAsZero,
      });
      break;
    case 'range':
      Object.assign(both, {
        min: settings.min,
        max: settings.max,
        range_min_value: settings.min,
        range_max_value: settings.max,
        treat_nil_as_zero: settings.treatMissingAsZero,
      });
      break;
    case 'hampel':
      Object.assign(both, {
        window: settings.window,
        k: settings.k,
        floor: settings.floor,
        hampel_window_size: settings.window,
        hampel_k: settings.k,
        hampel_mad_floor: settings.floor,
        treat_nil_as_zero: settings.treatMissingAsZero,
      });
      break;
    case 'cusum':
      Object.assign(both, {
        k: settings.k,
        h: settings.h,
        cusum_k: settings.k,
        cusum_h: settings.h,
        treat_nil_as_zero: settings.treatMissingAsZero,
      });
      break;
    case 'absence':
      Object.assign(both, { period: settings.period });
      break;
    case 'change':
      Object.assign(both, {
        percent: settings.percent,
        direction: settings.direction,
        window: settings.window,
      });
      break;
  }
  return { ...raw, ...both };
}

/** Human text of the condition ("above 90", "outside 10..20"), for notifications and summaries. */
export function describeRule(s: RuleSettings): string {
  switch (s.strategy) {
    case 'threshold':
      return `${s.direction} ${s.value}`;
    case 'range':
      return `outside ${s.min}..${s.max}`;
    case 'hampel':
      return `outlier against the median of ${s.window} buckets (k ${s.k})`;
    case 'cusum':
      return `drift (cusum k ${s.k}, h ${s.h})`;
    case 'absence':
      return `no data for ${s.period}`;
    case 'change':
      return `${s.direction === 'any' ? 'changed' : s.direction === 'up' ? 'rose' : 'fell'} by ${s.percent}% or more`;
  }
}
