// Reading a series (SPEC 5.3): the checks of key/from/to/granularity, the bucket range, and one
// range read from the source's store. Values come back as the JSON text of each bucket, so GET can
// send them without parsing; the query maths parses them (parseSeriesValues).
import { badRequest } from '../../../errors';
import { BoundedCache } from '../../../lib/bounded-cache';
import { parseTimestamp } from '../../../shared/time';
import type { MetricStore } from '../../../drivers/types';
import type { Source } from '../../types';
import {
  bucketRange,
  formatBuckets,
  parseGranularity,
  type Granularity,
} from '../../../model/time/granularity';
import { MAX_KEY_LENGTH } from '../ingest/points';
import { SYSTEM_KEY } from '../merge';
import {
  applyToRead,
  scanWithTransponders,
  type DerivedMembers,
  type TransponderError,
} from '../../transponders/apply';
import type { SeriesData } from './query';
import type { Transponder } from '../../../storage/transponders';

export const MAX_SERIES_BUCKETS = 100_000;

export interface SeriesParams {
  key: string;
  granularity: Granularity;
  fromMs: number;
  toMs: number;
  /** bucket starts from floor(from) through floor(to), epoch ms, and their labels once made */
  range: BucketRange;
}

/** The bucket starts of a read and their labels, shared by reads of the same range (never changed). */
export interface BucketRange {
  readonly bucketsMs: readonly number[];
  at?: string[];
}

export interface SeriesText {
  /** bucket starts, RFC 3339 in the source's zone */
  at: string[];
  /** JSON text of each bucket's nested values, `{}` when empty */
  values: string[];
  /** transponders skipped by this read (SPEC 15), sent as `meta.transponder_errors`; absent when none */
  transponderErrors?: TransponderError[];
  /**
   * SPEC 15: the transponders' values, appended to each bucket's members by the writer of the
   * response (withDerived makes whole texts of them); absent when no transponder wrote any
   */
  derived?: DerivedMembers;
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
    throw badRequest(
      `granularity ${text} is not allowed for this source (allowed: ${source.granularities.join(', ')})`,
    );
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
  const range = rangeOf(source, granularity, fromMs, toMs);
  if (!range) {
    throw badRequest(
      `the range holds more than ${MAX_SERIES_BUCKETS} buckets of ${granularity.text}: narrow from..to or use a larger granularity`,
    );
  }
  return { key, granularity, fromMs, toMs, range };
}

export async function readSeriesText(
  store: MetricStore,
  source: Source,
  params: SeriesParams,
): Promise<SeriesText> {
  const { range } = params;
  const values = await store.read(
    { sourceId: source.id, key: params.key, granularity: params.granularity.text },
    range.bucketsMs,
  );
  range.at ??= formatBuckets(range.bucketsMs, source.timeZone);
  return { at: range.at, values };
}

/**
 * readSeriesText of many keys over the same range (`params.key` is ignored): one read of the store
 * when it reads many keys at once (the embedded store: one request to its writer), else key by key.
 */
export async function readSeriesTexts(
  store: MetricStore,
  source: Source,
  keys: readonly string[],
  params: Omit<SeriesParams, 'key'>,
): Promise<SeriesText[]> {
  const { range } = params;
  const granularity = params.granularity.text;
  const values = store.readMany
    ? await store.readMany({ sourceId: source.id, keys, granularity }, range.bucketsMs)
    : await Promise.all(
        keys.map((key) => store.read({ sourceId: source.id, key, granularity }, range.bucketsMs)),
      );
  range.at ??= formatBuckets(range.bucketsMs, source.timeZone);
  const at = range.at;
  return values.map((v) => ({ at, values: v }));
}

/**
 * SPEC 15: the source's enabled transponders (`enabled`, asked only when needed) applied to a read
 * of a metric key, after the read and never on the system key (a read without a key).
 */
export function applyTransponders(
  series: SeriesText,
  key: string,
  enabled: () => readonly Transponder[],
): SeriesText {
  if (key === SYSTEM_KEY) return series;
  const list = enabled();
  if (list.length === 0) return series;
  const errors: TransponderError[] = [];
  const read = applyToRead(list, key, series.values, errors);
  if (!read) return errors.length > 0 ? { ...series, transponderErrors: errors } : series;
  return {
    at: series.at,
    values: read.values,
    ...(read.derived ? { derived: read.derived } : {}),
    ...(errors.length > 0 ? { transponderErrors: errors } : {}),
  };
}

/**
 * applyTransponders for the query maths: the texts stay as stored and the query's one scan of them
 * sees the derived values (`scan`); `transponderErrors` is filled by that scan.
 */
export function applyTranspondersData(
  series: SeriesText,
  key: string,
  enabled: () => readonly Transponder[],
): SeriesData {
  if (key === SYSTEM_KEY) return series;
  const list = enabled();
  if (list.length === 0) return series;
  const errors: TransponderError[] = [];
  const scan = scanWithTransponders(list, key, series.values, errors);
  if (!scan) return errors.length > 0 ? { ...series, transponderErrors: errors } : series;
  return { at: series.at, values: series.values, transponderErrors: errors, scan };
}

/**
 * Ranges of recent reads: a dashboard's widgets read the same from..to, and a year of hourly
 * buckets and their labels cost one to two milliseconds per read to compute. Only ranges of up to
 * CACHED_RANGE_BUCKETS are kept, so the cache holds at most 100,000 buckets.
 */
const RANGE_CACHE_ENTRIES = 8;
const CACHED_RANGE_BUCKETS = 12_500;
const ranges = new BoundedCache<string, BucketRange>(RANGE_CACHE_ENTRIES);

/** The buckets of from..to for a source's calendar, or null beyond MAX_SERIES_BUCKETS. */
function rangeOf(source: Source, g: Granularity, fromMs: number, toMs: number): BucketRange | null {
  const name = `${source.timeZone} ${source.beginningOfWeek} ${g.text} ${fromMs} ${toMs}`;
  const known = ranges.get(name);
  if (known) return known;
  const cal = { timeZone: source.timeZone, beginningOfWeek: source.beginningOfWeek };
  const bucketsMs = bucketRange(fromMs, toMs, g, cal, MAX_SERIES_BUCKETS);
  if (!bucketsMs) return null;
  const range: BucketRange = { bucketsMs };
  if (bucketsMs.length <= CACHED_RANGE_BUCKETS) ranges.set(name, range);
  return range;
}
