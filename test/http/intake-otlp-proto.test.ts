// OTLP/HTTP protobuf on POST /v1/metrics through the real server, driven by the official
// OpenTelemetry JS SDK and its exporters (http/protobuf and http/json), read back through
// GET /api/v1/metrics with exact values; and hand-built protobuf bodies for the error answers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  AggregationTemporality,
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from '@opentelemetry/sdk-metrics';
import { OTLPMetricExporter as ProtoExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as JsonExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { ProtoReader, ProtoWriter } from '../../src/intake/protobuf';

let server: TestServer;
let agent: ProjectAgent;

before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
});
after(() => server.stop());

/** The one non-empty 1m bucket of a key between `from` and now. */
async function onlyBucket(key: string, fromMs: number): Promise<any> {
  const minute = (ms: number) => new Date(Math.floor(ms / 60_000) * 60_000).toISOString();
  const q = new URLSearchParams({ key, from: minute(fromMs), to: minute(Date.now()), granularity: '1m' });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: agent.sourceToken,
    sourceId: agent.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  const filled = (res.body.data.values as object[]).filter((v) => Object.keys(v).length > 0);
  assert.equal(filled.length, 1, `${key}: ${JSON.stringify(res.body.data.values)}`);
  return filled[0];
}

/** Records a gauge, a counter and a histogram once and exports them through `exporter`; returns the export result codes. */
async function exportOnce(exporter: PushMetricExporter, service: string): Promise<number[]> {
  const codes: number[] = [];
  const exportVia = exporter.export.bind(exporter);
  exporter.export = (metrics, done) =>
    exportVia(metrics, (result) => {
      codes.push(result.code);
      if (result.error) codes.push(-1);
      done(result);
    });
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({
    resource: resourceFromAttributes({
      'service.name': service,
      'host.name': 'h1',
      'service.instance.id': 'abc',
    }),
    readers: [reader],
  });
  const meter = provider.getMeter('intake-test');
  meter.createGauge('room.temp').record(21.5, { room: 'kitchen' });
  const orders = meter.createCounter('orders');
  orders.add(3, { shop: 'a' });
  orders.add(4, { shop: 'a' });
  const latency = meter.createHistogram('latency', { advice: { explicitBucketBoundaries: [0.1, 0.5] } });
  for (const v of [0.25, 0.5, 2]) latency.record(v);
  await provider.shutdown(); // one collection and export (a forceFlush before it would export a cumulative gauge twice)
  return codes;
}

test('the SDK exporting http/protobuf with delta temporality: gauge, delta sum and histogram with buckets', async () => {
  const from = Date.now();
  const exporter = new ProtoExporter({
    url: `${server.url}/v1/metrics`,
    headers: { Authorization: `Bearer ${agent.sourceToken}` },
    temporalityPreference: AggregationTemporality.DELTA,
  });
  assert.deepEqual(await exportOnce(exporter, 'shop'), [0]); // ExportResultCode.SUCCESS
  assert.deepEqual(await onlyBucket('room.temp,host.name=h1,room=kitchen,service.name=shop', from), {
    value: { sum: 21.5, count: 1, last: 21.5 },
  });
  assert.deepEqual(await onlyBucket('orders,host.name=h1,service.name=shop,shop=a', from), {
    value: { sum: 7, count: 1 },
  });
  assert.deepEqual(await onlyBucket('latency,host.name=h1,service.name=shop', from), {
    count: 3,
    sum: 2.75,
    buckets: { '0_1': 0, '0_5': 2, inf: 1 },
  });
});

test('the SDK exporting http/json with cumulative temporality: sums and histograms asserted', async () => {
  const from = Date.now();
  const exporter = new JsonExporter({
    url: `${server.url}/v1/metrics`,
    headers: { Authorization: `Bearer ${agent.sourceToken}` },
  });
  assert.deepEqual(await exportOnce(exporter, 'shop-json'), [0]);
  assert.deepEqual(await onlyBucket('room.temp,host.name=h1,room=kitchen,service.name=shop-json', from), {
    value: { sum: 21.5, count: 1, last: 21.5 },
  });
  assert.deepEqual(await onlyBucket('orders,host.name=h1,service.name=shop-json,shop=a', from), {
    value: { last: 7 },
  });
  assert.deepEqual(await onlyBucket('latency,host.name=h1,service.name=shop-json', from), {
    count: 3,
    sum: 2.75,
    buckets: { '0_1': 0, '0_5': 2, inf: 1 },
  });
});

test('the SDK gets 401 from a wrong token and reports the export as failed', async () => {
  const exporter = new ProtoExporter({
    url: `${server.url}/v1/metrics`,
    headers: { Authorization: 'Bearer nope' },
  });
  const codes = await exportOnce(exporter, 'nope');
  assert.equal(codes[0], 1); // ExportResultCode.FAILED
});

async function bucketAt10(key: string): Promise<unknown> {
  const q = new URLSearchParams({
    key,
    from: '2026-01-24T10:00:00Z',
    to: '2026-01-24T10:00:00Z',
    granularity: '1m',
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: agent.sourceToken,
    sourceId: agent.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data.values[0];
}

async function postProto(body: Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/v1/metrics`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${agent.sourceToken}`,
      'content-type': 'application/x-protobuf',
      ...headers,
    },
    body,
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: Buffer.from(await res.arrayBuffer()),
  };
}

function status(body: Buffer): { code: number; message: string } {
  const r = new ProtoReader(body);
  const out = { code: 0, message: '' };
  while (r.more()) {
    const { field, wire } = r.tag();
    if (field === 1) out.code = r.varint();
    else if (field === 2) out.message = r.string();
    else r.skip(wire);
  }
  return out;
}

test('protobuf errors answer a protobuf Status naming the member; nothing of a refused body is stored', async () => {
  const T0 = Date.UTC(2026, 0, 24, 10, 0, 0);
  const point = (ms: number, v: number) => new ProtoWriter().fixed64(3, ms * 1_000_000).double(4, v);
  const gauge = (name: string, dp: ProtoWriter) =>
    new ProtoWriter().string(1, name).message(5, new ProtoWriter().message(1, dp));
  const exportRequest = (...metrics: ProtoWriter[]) => {
    const sm = new ProtoWriter();
    for (const m of metrics) sm.message(2, m);
    return new ProtoWriter().message(1, new ProtoWriter().message(2, sm)).finish();
  };
  const ok = await postProto(exportRequest(gauge('proto_ok', point(T0 + 1_000, 2.5))));
  assert.equal(ok.status, 200);
  assert.equal(ok.type, 'application/x-protobuf');
  assert.equal(ok.body.length, 0); // an empty ExportMetricsServiceResponse
  assert.deepEqual(await bucketAt10('proto_ok'), { value: { sum: 2.5, count: 1, last: 2.5 } });

  const tooLate = await postProto(exportRequest(gauge('proto_first', point(T0, 1)), gauge('', point(T0, 1))));
  assert.equal(tooLate.status, 400);
  assert.equal(tooLate.type, 'application/x-protobuf');
  assert.deepEqual(status(tooLate.body), {
    code: 3,
    message: 'resourceMetrics[0].scopeMetrics[0].metrics[1].name is required',
  });
  assert.deepEqual(await bucketAt10('proto_first'), {});

  const cut = await postProto(exportRequest(gauge('proto_cut', point(T0, 1))).subarray(0, 12));
  assert.equal(cut.status, 400);
  assert.match(status(cut.body).message, /^the body is not a valid ExportMetricsServiceRequest: protobuf: /);

  const anonymous = await postProto(Buffer.alloc(0), { authorization: '' });
  assert.equal(anonymous.status, 401);
  assert.equal(status(anonymous.body).code, 16);
  assert.equal((await postProto(Buffer.alloc(0))).status, 200);
});
