// From parsed samples to the points POST /api/v1/metrics/batch takes (docs/intake.md, "Mapping").
//
// - key: the measurement with its tags in InfluxDB's series-key form, tags sorted by key
//   (`cpu,cpu=cpu-total,host=pve1`), with InfluxDB's escapes, so one series is one key and a
//   dashboard key pattern such as `cpu,cpu=cpu-total,host=(?<host>[^,]+)` picks hosts;
// - a numeric field (float, integer, unsigned, boolean as 1/0) is a gauge: one `track` point adds
//   `{<field>: {sum: v, count: 1}}` (every granularity then holds a true mean, sum/count) and one
//   `assert` point sets `{<field>: {last: v}}` (the latest sample of the bucket). One point may
//   not be both operations, so each line gives a pair of points with the same key and time;
// - string fields and non-finite numbers are skipped and counted, never an error;
// - everything that would make the write path refuse a point (a key too long or blank, a time
//   outside the accepted range) is found here first, naming the line, so a body is refused
//   whole before any of it is written.
import { LineError } from './line-error';
import type { FieldValue, LineSample } from './line-protocol';
import { SLICE_SAMPLES, nextTurn } from './slices';

/** What a point of POST /api/v1/metrics/batch holds. */
export interface IntakePoint {
  key: string;
  at: string;
  operation: 'track' | 'assert';
  values: Record<string, unknown>;
}

export interface MappedBody {
  points: IntakePoint[];
  /** samples read (lines with at least one field) */
  samples: number;
  /** string fields skipped */
  skippedStrings: number;
  /** NaN and infinite values skipped */
  skippedNonFinite: number;
}

export class MappingError extends LineError {}

export interface MappingOptions {
  /** epoch ms given to samples without a timestamp (the time the body arrived) */
  nowMs: number;
  /** put before every key (a per-source prefix); default none */
  keyPrefix?: string;
}

/** The write path's limits on a point (SPEC 5.2), checked here so that a body fails before any write. */
export const MAX_KEY_LENGTH = 255;
const MAX_LEAVES = 1000;
/** Earliest and latest accepted times: 1970-01-01T00:00:00Z .. 9999-12-31T23:59:59.999Z. */
export const MIN_TIME_MS = 0;
export const MAX_TIME_MS = 253_402_300_799_999;

const SYSTEM_KEY = '__system__key__';

const escapeMeasurement = (s: string) => s.replace(/[\\, ]/g, (c) => `\\${c}`);
const escapeTagPart = (s: string) => s.replace(/[\\,= ]/g, (c) => `\\${c}`);

/** `measurement,k1=v1,k2=v2` with tags sorted by key (code unit order, as InfluxDB sorts them). */
export function seriesKey(measurement: string, tags: ReadonlyArray<readonly [string, string]>): string {
  let key = escapeMeasurement(measurement);
  const sorted = tags.length > 1 ? [...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) : tags;
  for (const [k, v] of sorted) key += `,${escapeTagPart(k)}=${escapeTagPart(v)}`;
  return key;
}

/**
 * A field name as a path segment: dots nest paths in stored values (`a.b` is `b` inside `a`), so a
 * field `x.sum` would collide with the `sum` of field `x`; dots become underscores.
 */
/**
 * A field's number as stored (a boolean is 1 or 0), or null for a string or a value that is not
 * finite, counted in `skipped` (SPEC 12: both are skipped, the rest of the line is kept).
 */
export function fieldNumber(
  field: FieldValue,
  skipped: { skippedStrings: number; skippedNonFinite: number },
): number | null {
  if (field.type === 'string') {
    skipped.skippedStrings++;
    return null;
  }
  const value = field.type === 'boolean' ? (field.value ? 1 : 0) : field.value;
  if (!Number.isFinite(value)) {
    skipped.skippedNonFinite++;
    return null;
  }
  return value;
}

export function fieldSegment(name: string): string {
  return name.includes('.') ? name.replace(/\./g, '_') : name;
}

const BLANK = /^[\s\u180e\u200b-\u200d\u2060]*$/;

/** Why a key cannot be written, or null. */
export function keyProblem(key: string): string | null {
  // UTF-16 units are at least the code points: only a long key needs counting them
  if (key.length > MAX_KEY_LENGTH && [...key].length > MAX_KEY_LENGTH)
    return `key ${JSON.stringify(key.slice(0, 60))}... is longer than ${MAX_KEY_LENGTH} characters`;
  if (BLANK.test(key)) return 'key is blank';
  if (key === SYSTEM_KEY) return `key must not be the system key ${SYSTEM_KEY}`;
  return null;
}

/** RFC 3339 of an accepted time, or null when it is outside the accepted range. */
export function acceptedTime(ms: number): string | null {
  if (!(ms >= MIN_TIME_MS && ms <= MAX_TIME_MS)) return null;
  return new Date(ms).toISOString();
}

function nullObject(): Record<string, unknown> {
  return Object.create(null) as Record<string, unknown>;
}

/**
 * The track and assert points of gauge values under one key at one time. At most MAX_LEAVES
 * leaves go in one point: fields past that start another pair.
 */
export function gaugePoints(
  key: string,
  at: string,
  gauges: ReadonlyArray<readonly [string, number]>,
  out: IntakePoint[],
): void {
  const perPoint = MAX_LEAVES / 2; // sum and count
  for (let from = 0; from < gauges.length; from += perPoint) {
    const track = nullObject();
    const assert = nullObject();
    for (const [name, value] of gauges.slice(from, from + perPoint)) {
      track[name] = { sum: value, count: 1 };
      assert[name] = { last: value };
    }
    out.push(
      { key, at, operation: 'track', values: track },
      { key, at, operation: 'assert', values: assert },
    );
  }
}

/** The points of a line protocol body, or MappingError naming the first line that cannot be stored. */
export function mapLineSamples(samples: readonly LineSample[], options: MappingOptions): MappedBody {
  const result: MappedBody = { points: [], samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
  const prefix = options.keyPrefix ?? '';
  const nowAt = acceptedTime(options.nowMs);
  for (const sample of samples) {
    result.samples++;
    const gauges = new Map<string, number>(); // a later field of the same name wins, as repeated fields do
    for (const [name, field] of sample.fields) {
      const value = fieldNumber(field, result);
      if (value === null) continue;
      gauges.set(fieldSegment(name), value);
    }
    if (gauges.size === 0) continue;
    const key = prefix + seriesKey(sample.measurement, sample.tags);
    const problem = keyProblem(key);
    if (problem) throw new MappingError(sample.line, problem);
    const at = sample.timeMs === null ? nowAt : acceptedTime(sample.timeMs);
    if (at === null) {
      throw new MappingError(
        sample.line,
        'timestamp is outside the accepted range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z); is the precision right?',
      );
    }
    gaugePoints(key, at, [...gauges], result.points);
  }
  return result;
}

/** mapLineSamples in slices of SLICE_SAMPLES samples, the event loop free between them (large bodies). */
export async function mapLineSamplesSliced(
  samples: readonly LineSample[],
  options: MappingOptions,
): Promise<MappedBody> {
  const result: MappedBody = { points: [], samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
  for (let from = 0; from < samples.length; from += SLICE_SAMPLES) {
    if (from > 0) await nextTurn();
    const part = mapLineSamples(samples.slice(from, from + SLICE_SAMPLES), options);
    for (const point of part.points) result.points.push(point);
    result.samples += part.samples;
    result.skippedStrings += part.skippedStrings;
    result.skippedNonFinite += part.skippedNonFinite;
  }
  return result;
}
