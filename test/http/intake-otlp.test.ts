// OTLP/HTTP JSON on POST /v1/metrics through the real server, read back through GET /api/v1/metrics.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';

let server: TestServer;
let agent: ProjectAgent;
const T0 = Date.UTC(2026, 0, 24, 10, 0, 0);
const nanos = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
});
after(() => server.stop());

async function post(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/v1/metrics`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${agent.sourceToken}`,
      'content-type': 'application/json',
      'content-encoding': 'gzip',
      ...headers,
    },
    body: gzipSync(typeof body === 'string' ? body : JSON.stringify(body)),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function bucket(key: string): Promise<unknown> {
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

const attr = (key: string, value: Record<string, unknown>) => ({ key, value });

test('gauges, cumulative and delta sums and histograms of a gzip JSON export are stored by kind', async () => {
  const body = {
    resourceMetrics: [
      {
        resource: {
          attributes: [
            attr('service.name', { stringValue: 'proxmox-ve' }),
            attr('host.name', { stringValue: 'pve1' }),
            attr('service.instance.id', { stringValue: 'f00' }),
          ],
        },
        scopeMetrics: [
          {
            scope: { name: 'pve' },
            metrics: [
              {
                name: 'cpu',
                unit: '1',
                gauge: {
                  dataPoints: [
                    {
                      attributes: [attr('object', { stringValue: 'nodes' })],
                      timeUnixNano: nanos(T0 + 5_000),
                      asDouble: 0.25,
                    },
                    {
                      attributes: [attr('object', { stringValue: 'nodes' })],
                      timeUnixNano: nanos(T0 + 15_000),
                      asDouble: 0.75,
                    },
                  ],
                },
              },
              {
                name: 'netin_total',
                unit: 'By',
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [
                    {
                      attributes: [attr('vmid', { intValue: '100' })],
                      timeUnixNano: nanos(T0 + 5_000),
                      asInt: '123456789',
                    },
                  ],
                },
              },
              {
                name: 'requests',
                sum: {
                  aggregationTemporality: 1,
                  isMonotonic: true,
                  dataPoints: [
                    { timeUnixNano: nanos(T0 + 1_000), asInt: 3 },
                    { timeUnixNano: nanos(T0 + 2_000), asInt: '4' },
                  ],
                },
              },
              {
                name: 'latency',
                histogram: {
                  aggregationTemporality: 1,
                  dataPoints: [
                    {
                      timeUnixNano: nanos(T0 + 1_000),
                      count: '2',
                      sum: 0.5,
                      bucketCounts: ['1', '1'],
                      explicitBounds: [0.1],
                    },
                  ],
                },
              },
            ],
          },
        ],
      },
    ],
  };
  const res = await post(body);
  assert.equal(res.status, 200);
  assert.deepEqual(res.json, {});
  assert.deepEqual(await bucket('cpu,host.name=pve1,object=nodes,service.name=proxmox-ve'), {
    value: { sum: 1, count: 2, last: 0.75 },
  });
  assert.deepEqual(await bucket('netin_total,host.name=pve1,service.name=proxmox-ve,vmid=100'), {
    value: { last: 123456789 },
  });
  assert.deepEqual(await bucket('requests,host.name=pve1,service.name=proxmox-ve'), {
    value: { sum: 7, count: 2 },
  });
  assert.deepEqual(await bucket('latency,host.name=pve1,service.name=proxmox-ve'), {
    count: 2,
    sum: 0.5,
    buckets: { '0_1': 1, inf: 1 },
  });
});

test('errors: a bad shape is 400 with a Status body and stores nothing; another type 415; no token 401', async () => {
  const bad = await post({
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              { name: 'ok', gauge: { dataPoints: [{ timeUnixNano: nanos(T0), asDouble: 1 }] } },
              { name: 'bad', gauge: { dataPoints: [{ timeUnixNano: 'soon', asDouble: 1 }] } },
            ],
          },
        ],
      },
    ],
  });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.json, {
    code: 3,
    message:
      'resourceMetrics[0].scopeMetrics[0].metrics[1].gauge.dataPoints[0].timeUnixNano must be a count of nanoseconds',
  });
  assert.deepEqual(await bucket('ok'), {});
  assert.equal((await post('{not json')).status, 400);
  const xml = await post('x', { 'content-type': 'application/xml' });
  assert.equal(xml.status, 415);
  assert.match(xml.json.message, /application\/x-protobuf or application\/json/);
  const anonymous = await post({}, { authorization: '' });
  assert.equal(anonymous.status, 401);
  assert.equal(anonymous.json.code, 16);
  assert.equal((await post({})).status, 200);
});
