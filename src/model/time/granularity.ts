// Granularities and time buckets (SPEC 5.1). Pure functions.
//
// Flooring happens on the calendar's local wall clock: segments restart at each parent unit
// (Ns in the minute, Nm in the hour, Nh in the day, Nd by day of year, Nw from the first week start
// of the year with the days before it in a bucket from 1 January, Nmo from January, Nq in 3N-month
// steps from January, Ny = floor(year / N) * N). Calendar steps are done on local dates (never as
// 86,400 s); the zone's UTC offset at each instant comes from luxon (model/time/zone-clock.ts).
//
// Daylight saving time and other offset changes (DST decisions):
// - s, m, h: a bucket starts at every instant whose local clock reads a segment boundary. On fall
//   back the repeated hour is read twice, so 1h gives two buckets at 02:00 (+02:00, then +01:00):
//   real elapsed hours, none missing or doubled. A boundary skipped by spring forward gives no
//   bucket; if the jump passes a boundary in the middle of a segment (2h in New York: 00:00 ->
//   02:00 is skipped), the bucket starts at the jump and is labelled with the time after it
//   (03:00-04:00). A segment that the fall back re-enters without reading a boundary (5h: 00:00 to
//   05:00) stays one longer bucket (6 real hours). :30 and :45 zones floor to local hour starts.
// - d, w, mo, q, y: a bucket starts where the local clock first reaches its boundary (local
//   midnight of its first day) and runs to the first reach of the next one: a 23- or 25-hour day is
//   one bucket, also when clocks go back at midnight (Asia/Beirut: the repeated 23:00 hour stays in
//   the day already open). Where midnight itself is skipped (America/Santiago), the day starts at
//   the jump, labelled 01:00.
// - Every bucket is a contiguous real-time interval [start, next start): floor is monotonic and
//   ranges strictly increase. Labels carry the zone's offset at the bucket's start instant.
// - Time zones: IANA names luxon knows; letter case is ignored as luxon and ICU do ('utc' = 'UTC').
//   Fixed offsets ('+01:00') and luxon's non-IANA spellings ('local', 'UTC+1') are refused.

import { formatTimestamp, timestampFormatter } from '../../shared/time';
import { BucketEngine } from './bucket-engine';
import { MINUTE_MS, nominalMaxMs } from './calendar';
import { ZoneClock, isIanaZone, offsetMinutes, resolveZone } from './zone-clock';

export type GranularityUnit = 's' | 'm' | 'h' | 'd' | 'w' | 'mo' | 'q' | 'y';
export interface Granularity {
  readonly text: string;
  readonly n: number;
  readonly unit: GranularityUnit;
}
/** IANA zone; beginningOfWeek 1 = Monday .. 7 = Sunday. */
export interface Calendar {
  readonly timeZone: string;
  readonly beginningOfWeek: number;
}

/** Largest N accepted in a granularity ("100000s"); anything bigger is refused as absurd. */
const MAX_GRANULARITY_N = 100_000;
const GRANULARITY = /^(\d{1,6})(s|m|h|d|w|mo|q|y)$/;
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/;

export function parseGranularity(text: unknown): Granularity | null {
  if (typeof text !== 'string') return null;
  const match = GRANULARITY.exec(text);
  if (!match) return null;
  const n = Number(match[1]);
  if (n < 1 || n > MAX_GRANULARITY_N) return null;
  return { text, n, unit: match[2] as GranularityUnit };
}

export function isValidTimeZone(zone: unknown): boolean {
  return typeof zone === 'string' && ZONE_NAME.test(zone) && isIanaZone(zone);
}

export function floorToBucket(atMs: number, g: Granularity, cal: Calendar): number {
  return new BucketEngine(g, cal).floor(atMs);
}

/** Start of the bucket after the one holding `bucketStartMs`. */
export function nextBucket(bucketStartMs: number, g: Granularity, cal: Calendar): number {
  const engine = new BucketEngine(g, cal);
  return engine.next(engine.floor(bucketStartMs));
}

/**
 * Bucket starts from floor(from) through floor(to), both included, oldest first; [] when from is
 * after to; null when there are more than maxBuckets (found without walking past the limit).
 */
export function bucketRange(
  fromMs: number,
  toMs: number,
  g: Granularity,
  cal: Calendar,
  maxBuckets: number,
): number[] | null {
  const engine = new BucketEngine(g, cal);
  const starts: number[] = [];
  if (!(toMs >= fromMs)) return starts;
  const last = engine.floor(toMs);
  for (let start = engine.floor(fromMs); start <= last; start = engine.next(start)) {
    if (starts.length >= maxBuckets) return null;
    starts.push(start);
  }
  return starts;
}

/** Number of buckets bucketRange would return, or maxBuckets + 1 when that is more than maxBuckets. */
export function countBuckets(
  fromMs: number,
  toMs: number,
  g: Granularity,
  cal: Calendar,
  maxBuckets: number,
): number {
  if (!(toMs >= fromMs)) return 0;
  if (lowerBoundOfCount(toMs - fromMs, g) > maxBuckets) return maxBuckets + 1;
  const engine = new BucketEngine(g, cal);
  const last = engine.floor(toMs);
  let count = 0;
  for (let start = engine.floor(fromMs); start <= last; start = engine.next(start)) {
    if (++count > maxBuckets) return count;
  }
  return count;
}

/**
 * Fewest buckets a span can hold: each bucket is at most its nominal length plus the backward
 * jumps of the clock inside it; allow one day of jumps per week of span, and two more days.
 */
function lowerBoundOfCount(spanMs: number, g: Granularity): number {
  const jumps = (spanMs / 7 + 2 * 86_400_000) * 1.01;
  return Math.floor((spanMs - jumps) / nominalMaxMs(g));
}

/** RFC 3339 to the second with the zone's offset at that instant ('Z' for zero). */
export function formatBucket(ms: number, timeZone: string): string {
  const zone = resolveZone(timeZone);
  if (!zone) throw new RangeError(`Unknown time zone: ${timeZone}`);
  return formatTimestamp(ms, offsetMinutes(zone, ms));
}

/**
 * formatBucket for many instants. The offsets come from one zone clock, which asks luxon once per
 * UTC day (and at offset changes) instead of once per label: a year of hourly labels in a zone
 * with daylight saving time took about 100 ms through luxon alone.
 */
export function formatBuckets(list: readonly number[], timeZone: string): string[] {
  const clock = new ZoneClock(timeZone);
  const format = timestampFormatter();
  return list.map((ms) => format(ms, Math.round(clock.offsetAt(ms) / MINUTE_MS)));
}

/** Entries of a bucketer's cache of whole seconds or minutes (a power of two). */
const UNIT_CACHE = 4096;

/**
 * floorToBucket for one granularity and calendar, for the ingest hot path. It remembers the last
 * bucket [start, next), so clustered timestamps cost two comparisons, and its zone clock keeps the
 * offsets it has looked up, so a miss costs arithmetic and map look-ups rather than luxon calls.
 * Sub-day granularities also remember the bucket of recent whole UTC seconds (s) or minutes (m, h):
 * timestamps spread over an hour in random order then rarely compute a floor. An entry is taken
 * only when the whole second or minute lies in one bucket.
 */
export function createBucketer(g: Granularity, cal: Calendar): (atMs: number) => number {
  const engine = new BucketEngine(g, cal);
  let start = NaN;
  let end = NaN;
  const unitMs = g.unit === 's' ? 1000 : g.unit === 'm' || g.unit === 'h' ? MINUTE_MS : 0;
  const units = unitMs > 0 ? new Float64Array(UNIT_CACHE).fill(NaN) : null;
  const starts = unitMs > 0 ? new Float64Array(UNIT_CACHE) : null;
  return (atMs: number): number => {
    if (atMs >= start && atMs < end) return start;
    if (units !== null) {
      const unit = Math.floor(atMs / unitMs);
      const slot = unit & (UNIT_CACHE - 1);
      if (units[slot] === unit) return starts![slot]!;
      const first = engine.floor(unit * unitMs);
      if (first === engine.floor(unit * unitMs + unitMs - 1) && !Number.isNaN(first)) {
        units[slot] = unit;
        starts![slot] = first;
        return first;
      }
    }
    const floored = engine.floor(atMs);
    if (Number.isNaN(floored)) return floored;
    start = floored;
    end = engine.next(floored);
    return start;
  };
}
