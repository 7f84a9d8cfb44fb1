// Reading a series (SPEC 5.3): the checks of key/from/to/granularity, the bucket range, and one
// range read from the source's store. Values come back as the JSON text of each bucket, so GET can
// send them without parsing; the query maths parses them (parseSeriesValues).
import { badRequest } from '../../errors';
import { parseTimestamp } from '../../lib/time';
import type { MetricStore } from '../../drivers/types';
import type { Source } from '../types';
import { bucketRange, formatBuckets, parseGranularity, type Granularity } from './granularity';
import { MAX_KEY_LENGTH } from './ingest';
import { SYSTEM_KEY } from './merge';

export const MAX_SERIES_BUCKETS = 100_000;

export interface SeriesParams {
  key: string;
  granularity: Granularity;
  fromMs: number;
  toMs: number;
  /** bucket starts from floor(from) through floor(to), epoch ms */
  bucketsMs: number[];
}

export interface SeriesText {
  /** bucket starts, RFC 3339 in the source's zone */
  at: string[];
  /** JSON text of each bucket's nested values, `{}` when empty */
  values: string[];
}

/** A single string parameter (a repeated query parameter arrives as an array). */
function single(name: string, raw: unknown): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') throw badRequest(`${name} must be given once, as a string`);
  return raw;
}

function parseKey(raw: unknown, required: boolean): string {
  const key = single('key', raw);
  if (key === undefined) {
    if (required) throw badRequest('key is required');
    return SYSTEM_KEY;
  }
  if (key.trim() === '') throw badRequest('key must not be blank');
  if (key.length > MAX_KEY_LENGTH && [...key].length > MAX_KEY_LENGTH) {
    throw badRequest(`key must be at most ${MAX_KEY_LENGTH} characters`);
  }
  return key;
}

function parseInstant(name: 'from' | 'to', raw: unknown): number {
  const text = single(name, raw);
  if (text === undefined || text === '') throw badRequest(`${name} is required`);
  const ms = parseTimestamp(text);
  if (ms === null) throw badRequest(`${name} must be an RFC 3339 timestamp with a time zone offset`);
  return ms;
}

function parseSourceGranularity(source: Source, raw: unknown): Granularity {
  const text = single('granularity', raw);
  if (text === undefined || text === '') throw badRequest('granularity is required');
  const g = parseGranularity(text);
  if (!g) throw badRequest(`granularity ${JSON.stringify(text)} is invalid (expected e.g. 1m, 1h, 1d)`);
  if (!source.granularities.includes(text)) {
    throw badRequest(`granularity ${text} is not allowed for this source (allowed: ${source.granularities.join(', ')})`);
  }
  return g;
}

/**
 * key (default the system key, unless `keyRequired`), from, to and granularity; every failure is
 * a 400 naming the parameter.
 */
export function parseSeriesParams(
  source: Source,
  input: Record<string, unknown>,
  options: { keyRequired: boolean },
): SeriesParams {
  const key = parseKey(input.key, options.keyRequired);
  const fromMs = parseInstant('from', input.from);
  const toMs = parseInstant('to', input.to);
  const granularity = parseSourceGranularity(source, input.granularity);
  if (fromMs > toMs) throw badRequest('from must not be after to');
  const bucketsMs = rangeOf(source, granularity, fromMs, toMs)?.bucketsMs;
  if (!bucketsMs) {
    throw badRequest(`the range holds more than ${MAX_SERIES_BUCKETS} buckets of ${granularity.text}: narrow from..to or use a larger granularity`);
  }
  return { key, granularity, fromMs, toMs, bucketsMs };
}

export async function readSeriesText(store: MetricStore, source: Source, params: SeriesParams): Promise<SeriesText> {
  const values = await store.read(
    { sourceId: source.id, key: params.key, granularity: params.granularity.text },
    params.bucketsMs,
  );
  const range = rangeOf(source, params.granularity, params.fromMs, params.toMs)!;
  range.at ??= formatBuckets(range.bucketsMs, source.timeZone);
  return { at: range.at, values };
}

/** The bucket starts of a read and their labels, shared by reads of the same range (never changed). */
interface Range {
  bucketsMs: number[];
  at?: string[];
}

/**
 * Ranges of recent reads, most recent last, holding at most RANGE_CACHE_BUCKETS buckets in all:
 * a dashboard's widgets read the same from..to, and computing a year of hourly buckets and their
 * labels costs about a millisecond per read.
 */
const ranges = new Map<string, Range>();
const RANGE_CACHE_BUCKETS = 100_000;
let rangeBuckets = 0;

/** The buckets of from..to for a source's calendar, or null beyond MAX_SERIES_BUCKETS. */
function rangeOf(source: Source, g: Granularity, fromMs: number, toMs: number): Range | null {
  const name = `${source.timeZone} ${source.beginningOfWeek} ${g.text} ${fromMs} ${toMs}`;
  let range = ranges.get(name);
  if (range) {
    ranges.delete(name); // to the most recent end
  } else {
    const cal = { timeZone: source.timeZone, beginningOfWeek: source.beginningOfWeek };
    const bucketsMs = bucketRange(fromMs, toMs, g, cal, MAX_SERIES_BUCKETS);
    if (!bucketsMs) return null;
    range = { bucketsMs };
    rangeBuckets += bucketsMs.length;
  }
  ranges.set(name, range);
  for (const [oldest, old] of ranges) {
    if (rangeBuckets <= RANGE_CACHE_BUCKETS || old === range) break;
    ranges.delete(oldest);
    rangeBuckets -= old.bucketsMs.length;
  }
  return range;
}


