// Retention rules of project sources (SPEC section 11): which bucket starts are old enough to go.
// `expire_after` (seconds) applies to every granularity; `retention` names a timeframe per
// granularity and wins over expire_after for that granularity, so fine buckets can expire early
// while coarse ones stay (or stay longer than expire_after). Pure: the sweeper supplies `now`.
import { DateTime } from 'luxon';
import { parseGranularity, type GranularityUnit } from '../model/time/granularity';
import { fail, ok, type Parsed } from './source-settings';

export interface RetentionRules {
  timeZone: string;
  expireAfter: number | null;
  retention: Record<string, string> | null;
}

const LUXON_UNIT: Record<GranularityUnit, string> = {
  s: 'seconds',
  m: 'minutes',
  h: 'hours',
  d: 'days',
  w: 'weeks',
  mo: 'months',
  q: 'quarters',
  y: 'years',
};

/** Largest number of granularities a retention map may name (the same bound as granularities). */
const MAX_ENTRIES = 50;

/**
 * Epoch ms before which buckets of `granularity` expire, or null to keep them. Calendar units
 * move by calendar in the source's zone (`1mo` before 31 March is 28/29 February).
 */
export function expiryCutoffMs(rules: RetentionRules, granularity: string, nowMs: number): number | null {
  const span = rules.retention?.[granularity];
  if (span !== undefined) {
    const g = parseGranularity(span);
    if (g === null) return null; // validated on the way in; an unreadable rule keeps data
    return DateTime.fromMillis(nowMs, { zone: rules.timeZone })
      .minus({ [LUXON_UNIT[g.unit]]: g.n })
      .toMillis();
  }
  return rules.expireAfter === null ? null : nowMs - rules.expireAfter * 1000;
}

/**
 * A `retention` field: null/absent (none) or an object from one of the project's granularities
 * to a timeframe like `7d`. Messages name the offending entry, for the 422.
 */
export function parseRetention(
  input: unknown,
  granularities: readonly string[],
): Parsed<Record<string, string> | null> {
  if (input === undefined || input === null) return ok(null);
  if (typeof input !== 'object' || Array.isArray(input)) {
    return fail('must be an object from granularity to timeframe, like {"1m": "7d"}');
  }
  const entries = Object.entries(input as Record<string, unknown>);
  if (entries.length > MAX_ENTRIES) return fail(`must name at most ${MAX_ENTRIES} granularities`);
  const out: Record<string, string> = {};
  for (const [granularity, span] of entries) {
    const name = JSON.stringify(granularity.slice(0, 20));
    if (!granularities.includes(granularity))
      return fail(`names ${name}, which is not one of the project's granularities`);
    if (typeof span !== 'string' || parseGranularity(span.trim()) === null) {
      return fail(`${name} must be a timeframe like 7d, 90d or 1y`);
    }
    out[granularity] = span.trim();
  }
  return ok(entries.length === 0 ? null : out);
}
