// The time settings every source carries (SPEC section 4, POST /projects): time zone, start of the
// week, allowed granularities and the dashboard defaults. Parsers return a Parsed value instead of
// throwing so the HTTP schema can report every field of a body at once.
import { isValidTimeZone, parseGranularity } from '../model/time/granularity';

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };
export const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const fail = <T = never>(message: string): Parsed<T> => ({ ok: false, message });

export const DEFAULT_TIME_ZONE = 'UTC';
export const DEFAULT_GRANULARITIES: readonly string[] = ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'];
export const DEFAULT_TIMEFRAME = '24h';
export const DEFAULT_BEGINNING_OF_WEEK = 1;
export const MAX_GRANULARITIES = 50;

export interface SourceSettings {
  timeZone: string;
  beginningOfWeek: number;
  granularities: string[];
  defaultTimeframe: string;
  defaultGranularity: string;
}

/**
 * `<n><unit>` with n >= 1 and unit one of s, m, h, d, w, mo, q, y: a granularity or a timeframe,
 * in the one grammar the metrics endpoints parse (so a source never allows what reads refuse).
 */
export function isSpanText(text: string): boolean {
  return parseGranularity(text) !== null;
}

/** A whole number given as a JSON integer or a string of digits (forms send strings). */
export function wholeNumber(input: unknown): number | null {
  if (typeof input === 'number') return Number.isSafeInteger(input) ? input : null;
  if (typeof input === 'string' && /^\s*\d{1,15}\s*$/.test(input)) return Number(input);
  return null;
}

/** An IANA zone name, returned in its canonical spelling (`europe/berlin` -> `Europe/Berlin`). */
export function parseTimeZone(input: unknown): Parsed<string> {
  if (input === undefined || input === null) return ok(DEFAULT_TIME_ZONE);
  if (typeof input !== 'string') return fail('must be a string');
  const name = input.trim();
  if (!isValidTimeZone(name)) return fail('is not a valid IANA time zone');
  return ok(new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone);
}

export function parseBeginningOfWeek(input: unknown): Parsed<number> {
  if (input === undefined || input === null) return ok(DEFAULT_BEGINNING_OF_WEEK);
  const n = wholeNumber(input);
  if (n === null || n < 1 || n > 7) return fail('must be an integer from 1 (Monday) to 7 (Sunday)');
  return ok(n);
}

/** A list of granularity texts or one comma-separated string; duplicates are refused. */
export function parseGranularities(input: unknown): Parsed<string[]> {
  if (input === undefined || input === null) return ok([...DEFAULT_GRANULARITIES]);
  let items: unknown[];
  if (typeof input === 'string') items = input.split(',');
  else if (Array.isArray(input)) items = input;
  else return fail('must be a list of granularities or a comma-separated string');
  if (items.length > MAX_GRANULARITIES) return fail(`must hold at most ${MAX_GRANULARITIES} granularities`);
  const list: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string') return fail('must contain only strings');
    const text = item.trim();
    if (!isSpanText(text))
      return fail(`contains an invalid granularity: ${JSON.stringify(text.slice(0, 20))}`);
    if (list.includes(text)) return fail(`contains ${text} more than once`);
    list.push(text);
  }
  if (list.length === 0) return fail("can't be blank");
  return ok(list);
}

/** An optional granularity text (membership in the list is checked with the whole body). */
export function parseGranularityText(input: unknown): Parsed<string | null> {
  if (input === undefined || input === null) return ok(null);
  if (typeof input !== 'string') return fail('must be a string');
  const text = input.trim();
  return isSpanText(text) ? ok(text) : fail('is not a valid granularity (like 1m, 1h, 1d)');
}

export function parseTimeframe(input: unknown): Parsed<string> {
  if (input === undefined || input === null) return ok(DEFAULT_TIMEFRAME);
  if (typeof input !== 'string') return fail('must be a string');
  const text = input.trim();
  return isSpanText(text) ? ok(text) : fail('is not a valid timeframe (like 24h, 7d)');
}

/** Seconds to keep data, or null to keep it forever. */
export function parseExpireAfter(input: unknown): Parsed<number | null> {
  if (input === undefined || input === null) return ok(null);
  const n = wholeNumber(input);
  if (n === null || n < 1) return fail('must be a positive integer (seconds) or null');
  return ok(n);
}

/** default_granularity must be one of the granularities; it defaults to the first. */
export function pickDefaultGranularity(
  granularities: readonly string[],
  given: string | null,
): Parsed<string> {
  if (given === null) return ok(granularities[0]!);
  return granularities.includes(given) ? ok(given) : fail('must be one of the granularities');
}
