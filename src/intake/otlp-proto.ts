// OTLP/HTTP protobuf (`POST /v1/metrics` with `Content-Type: application/x-protobuf`, the
// OpenTelemetry SDKs' default): the ExportMetricsServiceRequest is decoded into the shape of its
// JSON encoding and mapped by the same code (otlp.ts), so both encodings store exactly the same
// points and refuse the same bodies with the same member names. Fields this service does not read
// (descriptions, exemplars, exponential histograms' buckets, flags) are skipped on the wire.
import { ProtoReader, ProtoWriter, ProtobufError } from './protobuf';
import { OtlpError } from './otlp';

type Json = Record<string, unknown>;

function anyValue(r: ProtoReader): Json {
  const out: Json = {};
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 2) out.stringValue = r.string();
    else if (field === 2 && wire === 0) out.boolValue = r.varint() !== 0;
    else if (field === 3 && wire === 0) out.intValue = String(r.int64());
    else if (field === 4 && wire === 1) out.doubleValue = r.double();
    else if (field === 7 && wire === 2) {
      const [s, e] = r.bytes();
      out.bytesValue = r.buf.toString('base64', s, e);
    } else r.skip(wire); // arrays and maps are not written as tags
  }
  return out;
}

function keyValue(r: ProtoReader): Json {
  const out: Json = { key: '' };
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 2) out.key = r.string();
    else if (field === 2 && wire === 2) out.value = anyValue(r.sub());
    else r.skip(wire);
  }
  return out;
}

function attributesHolder(r: ProtoReader, attributesField: number): Json {
  const attributes: Json[] = [];
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === attributesField && wire === 2) attributes.push(keyValue(r.sub()));
    else r.skip(wire);
  }
  return { attributes };
}

/** NumberDataPoint, HistogramDataPoint and SummaryDataPoint share times; the rest by kind. */
function dataPoint(r: ProtoReader, kind: string): Json {
  const dp: Json = {};
  const attributes: Json[] = [];
  const bucketCounts: number[] = [];
  const explicitBounds: number[] = [];
  const attributesField = kind === 'histogram' ? 9 : 7;
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === attributesField && wire === 2) attributes.push(keyValue(r.sub()));
    else if (field === 3 && wire === 1) dp.timeUnixNano = r.fixed64String();
    else if (kind === 'gauge' || kind === 'sum') {
      if (field === 4 && wire === 1) dp.asDouble = r.double();
      else if (field === 6 && wire === 1) dp.asInt = r.sfixed64();
      else r.skip(wire);
    } else if (field === 4 && wire === 1) dp.count = r.fixed64();
    else if (field === 5 && wire === 1) dp.sum = r.double();
    else if (kind === 'histogram' && field === 6 && (wire === 2 || wire === 1))
      r.repeated(wire, (x) => x.fixed64(), bucketCounts);
    else if (kind === 'histogram' && field === 7 && (wire === 2 || wire === 1))
      r.repeated(wire, (x) => x.double(), explicitBounds);
    else r.skip(wire);
  }
  dp.attributes = attributes;
  if (kind === 'histogram') {
    dp.bucketCounts = bucketCounts;
    dp.explicitBounds = explicitBounds;
  }
  return dp;
}

const KINDS: Record<number, string> = {
  5: 'gauge',
  7: 'sum',
  9: 'histogram',
  10: 'exponentialHistogram',
  11: 'summary',
};

function metricData(r: ProtoReader, kind: string): Json {
  const data: Json = {};
  const dataPoints: Json[] = [];
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 2) {
      if (kind === 'exponentialHistogram') {
        r.skip(wire); // not read (docs/intake.md)
      } else dataPoints.push(dataPoint(r.sub(), kind));
    } else if (field === 2 && wire === 0 && (kind === 'sum' || kind === 'histogram'))
      data.aggregationTemporality = r.varint();
    else if (field === 3 && wire === 0 && kind === 'sum') data.isMonotonic = r.varint() !== 0;
    else r.skip(wire);
  }
  data.dataPoints = dataPoints;
  return data;
}

function metric(r: ProtoReader): Json {
  const out: Json = {};
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 2) out.name = r.string();
    else if (KINDS[field] && wire === 2) out[KINDS[field]!] = metricData(r.sub(), KINDS[field]!);
    else r.skip(wire);
  }
  return out;
}

function scopeMetrics(r: ProtoReader): Json {
  const metrics: Json[] = [];
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 2 && wire === 2) metrics.push(metric(r.sub()));
    else r.skip(wire);
  }
  return { metrics };
}

function resourceMetrics(r: ProtoReader): Json {
  const out: Json = {};
  const sms: Json[] = [];
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 1 && wire === 2) out.resource = attributesHolder(r.sub(), 1);
    else if (field === 2 && wire === 2) sms.push(scopeMetrics(r.sub()));
    else r.skip(wire);
  }
  out.scopeMetrics = sms;
  return out;
}

/** An ExportMetricsServiceRequest in protobuf, as the object its JSON encoding parses into. */
export function decodeOtlpProtobuf(body: Buffer): Json {
  const r = new ProtoReader(body);
  const rms: Json[] = [];
  try {
    while (r.more()) {
      const { field, wire } = r.tag();
      if (field === 1 && wire === 2) rms.push(resourceMetrics(r.sub()));
      else r.skip(wire);
    }
  } catch (err) {
    if (err instanceof ProtobufError)
      throw new OtlpError(`the body is not a valid ExportMetricsServiceRequest: ${err.message}`);
    throw err;
  }
  return { resourceMetrics: rms };
}

/** ExportMetricsServiceResponse accepting everything: an empty message. */
export const EXPORT_RESPONSE = new ProtoWriter().finish();

/** google.rpc.Status { int32 code = 1; string message = 2; }, OTLP's error body in protobuf. */
export function statusProtobuf(code: number, message: string): Buffer {
  return new ProtoWriter().varint(1, code).string(2, message).finish();
}
