// OpenTelemetry metrics over HTTP in the JSON encoding (OTLP/HTTP JSON, `POST /v1/metrics`): what
// Proxmox VE 9 sends, and what OpenTelemetry SDKs and the Collector send with `http/json`.
//
// Mapping (docs/intake.md, "OpenTelemetry"): key = the metric name with the data point's attributes,
// and the resource's `service.name` and `host.name`, in series-key form; then by kind:
// - gauge:                   track {value: {sum: v, count: 1}}, assert {value: {last: v}}
// - sum, delta temporality:  track {value: {sum: v, count: 1}} (value.sum: the increase in the bucket)
// - sum, cumulative:         assert {value: {last: v}} (a counter's reading; rates come from its change)
// - histogram, delta:        track {count: n, sum: s, buckets};  cumulative: assert {count: n, sum: s, buckets}
// - summary:                 assert {count: n, sum: s}
// - histogram bucket counts:  {buckets: {<upper bound>: n}} with the point (`0.25` → `0_25`, the last `inf`)
// Attribute values are written as text; quantiles are not kept.
import {
  acceptedTime,
  gaugePoints,
  keyProblem,
  seriesKey,
  type IntakePoint,
  type MappedBody,
} from './mapping';

export class OtlpError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OtlpError';
  }
}

const DELTA = 1; // AGGREGATION_TEMPORALITY_DELTA
const RESOURCE_TAGS = ['service.name', 'host.name'];

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(v: unknown, what: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new OtlpError(`${what} must be an array`);
  return v;
}

/** An AnyValue as text (arrays and maps as JSON). */
function anyValueText(v: unknown): string | null {
  if (!isObject(v)) return null;
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (typeof v.boolValue === 'boolean') return String(v.boolValue);
  if (typeof v.intValue === 'string' || typeof v.intValue === 'number') return String(v.intValue);
  if (typeof v.doubleValue === 'number') return String(v.doubleValue);
  if (v.arrayValue !== undefined || v.kvlistValue !== undefined)
    return JSON.stringify(v.arrayValue ?? v.kvlistValue);
  if (typeof v.bytesValue === 'string') return v.bytesValue;
  return null;
}

function attributes(v: unknown, what: string): Array<[string, string]> {
  const out = new Map<string, string>();
  for (const kv of list(v, what)) {
    if (!isObject(kv) || typeof kv.key !== 'string')
      throw new OtlpError(`${what} must hold {key, value} pairs`);
    const text = anyValueText(kv.value);
    if (text !== null && kv.key !== '' && text !== '') out.set(kv.key, text);
  }
  return [...out];
}

/** Epoch ms of a `timeUnixNano` (a decimal string or a number), or null when absent or 0. */
function nanosToMs(v: unknown, what: string): number | null {
  if (v === undefined || v === null || v === '0' || v === 0) return null;
  const text = typeof v === 'number' && Number.isSafeInteger(v) ? String(v) : v;
  if (typeof text !== 'string' || !/^\d{1,20}$/.test(text))
    throw new OtlpError(`${what} must be a count of nanoseconds`);
  return text.length > 6 ? Number(text.slice(0, -6)) : 0;
}

function numberOf(v: unknown, what: string): number | null {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^-?\d+$/.test(v)) return Number(v); // int64 as a string
  if (v === undefined || v === null) return null;
  throw new OtlpError(`${what} must be a number`);
}

/** A NumberDataPoint's value (asDouble or asInt), or null. */
function pointValue(dp: Json, what: string): number | null {
  return numberOf(dp.asDouble ?? dp.asInt, `${what}.asDouble/asInt`);
}

/** The most buckets a histogram point keeps (a point holds at most 1,000 leaves). */
const MAX_BUCKETS = 500;

/** A bucket's upper bound as a path segment: `0.25` → `0_25` (a dot would nest), the last one `inf`. */
export function bucketName(bound: number | null): string {
  return bound === null ? 'inf' : String(bound).replace(/\./g, '_');
}

/**
 * `{<upper bound>: n}` of a histogram point: the count of values in (previous bound, bound], as
 * OTLP gives them (not cumulative). Null when the point has no buckets or more than MAX_BUCKETS.
 */
function histogramBuckets(dp: Json, at: string): Record<string, number> | null {
  const counts = list(dp.bucketCounts, `${at}.bucketCounts`);
  if (counts.length === 0 || counts.length > MAX_BUCKETS) return null;
  const bounds = list(dp.explicitBounds, `${at}.explicitBounds`);
  if (bounds.length !== counts.length - 1)
    throw new OtlpError(`${at}.bucketCounts must hold one count more than explicitBounds`);
  const out = Object.create(null) as Record<string, number>;
  counts.forEach((c, i) => {
    const n = numberOf(c, `${at}.bucketCounts[${i}]`) ?? 0;
    const bound = i < bounds.length ? numberOf(bounds[i], `${at}.explicitBounds[${i}]`) : null;
    if (!Number.isFinite(n) || (bound !== null && !Number.isFinite(bound))) return;
    const name = bucketName(bound);
    out[name] = (out[name] ?? 0) + n;
  });
  return out;
}

/** The points of an ExportMetricsServiceRequest in its JSON encoding. Throws OtlpError on a bad shape. */
export function mapOtlpJson(body: unknown, options: { nowMs: number; keyPrefix?: string }): MappedBody {
  if (!isObject(body)) throw new OtlpError('the body must be an ExportMetricsServiceRequest object');
  const result: MappedBody = { points: [], samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
  const prefix = options.keyPrefix ?? '';
  const rms = list(body.resourceMetrics, 'resourceMetrics');
  rms.forEach((rm, r) => {
    if (!isObject(rm)) throw new OtlpError(`resourceMetrics[${r}] must be an object`);
    const resource = isObject(rm.resource)
      ? attributes(rm.resource.attributes, `resourceMetrics[${r}].resource.attributes`)
      : [];
    const resourceTags = resource.filter(([k]) => RESOURCE_TAGS.includes(k));
    list(rm.scopeMetrics, `resourceMetrics[${r}].scopeMetrics`).forEach((sm, s) => {
      if (!isObject(sm)) throw new OtlpError(`resourceMetrics[${r}].scopeMetrics[${s}] must be an object`);
      list(sm.metrics, `resourceMetrics[${r}].scopeMetrics[${s}].metrics`).forEach((metric, m) => {
        const where = `resourceMetrics[${r}].scopeMetrics[${s}].metrics[${m}]`;
        if (!isObject(metric) || typeof metric.name !== 'string' || metric.name === '')
          throw new OtlpError(`${where}.name is required`);
        const kind = ['gauge', 'sum', 'histogram', 'summary', 'exponentialHistogram'].find((k) =>
          isObject(metric[k]),
        );
        if (!kind) return; // no data of a kind this service reads
        const data = metric[kind] as Json;
        const delta =
          data.aggregationTemporality === DELTA ||
          data.aggregationTemporality === 'AGGREGATION_TEMPORALITY_DELTA';
        list(data.dataPoints, `${where}.${kind}.dataPoints`).forEach((dp, d) => {
          const at = `${where}.${kind}.dataPoints[${d}]`;
          if (!isObject(dp)) throw new OtlpError(`${at} must be an object`);
          result.samples++;
          const tags = new Map([...resourceTags, ...attributes(dp.attributes, `${at}.attributes`)]);
          const key = prefix + seriesKey(metric.name as string, [...tags]);
          const problem = keyProblem(key);
          if (problem) throw new OtlpError(`${at}: ${problem}`);
          const ms = nanosToMs(dp.timeUnixNano, `${at}.timeUnixNano`) ?? options.nowMs;
          const time = acceptedTime(ms);
          if (time === null)
            throw new OtlpError(`${at}.timeUnixNano is outside the accepted range (1970 to 9999)`);
          if (kind === 'gauge' || kind === 'sum') {
            const value = pointValue(dp, at);
            if (value === null) return;
            if (!Number.isFinite(value)) {
              result.skippedNonFinite++;
              return;
            }
            if (kind === 'gauge') gaugePoints(key, time, [['value', value]], result.points);
            else if (delta)
              result.points.push({
                key,
                at: time,
                operation: 'track',
                values: { value: { sum: value, count: 1 } },
              });
            else
              result.points.push({ key, at: time, operation: 'assert', values: { value: { last: value } } });
            return;
          }
          const count = numberOf(dp.count, `${at}.count`) ?? 0;
          const sum = numberOf(dp.sum, `${at}.sum`);
          const values: Record<string, unknown> = { count };
          if (sum !== null && Number.isFinite(sum)) values.sum = sum;
          if (kind === 'histogram') {
            const buckets = histogramBuckets(dp, at);
            if (buckets) values.buckets = buckets;
          }
          if (!Number.isFinite(count)) {
            result.skippedNonFinite++;
            return;
          }
          const point: IntakePoint = {
            key,
            at: time,
            operation: delta && kind !== 'summary' ? 'track' : 'assert',
            values,
          };
          result.points.push(point);
        });
      });
    });
  });
  return result;
}
