// The official InfluxDB 2 JavaScript client (@influxdata/influxdb-client) writing to /api/v2/write
// as its users configure it (org, bucket, a token, nanosecond precision, gzip), read back exactly
// through GET /api/v1/metrics. A small proxy in front of the server records what the client sent, so
// the test sees the gzip it asked for.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { InfluxDB, Point, HttpError } from '@influxdata/influxdb-client';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';

let server: TestServer;
let agent: ProjectAgent;
let proxy: Server;
let proxyUrl: string;
const seen: Array<{ method: string; url: string; encoding: string | undefined; auth: string | undefined }> =
  [];

const T0 = Date.UTC(2026, 0, 24, 10, 0, 0); // 2026-01-24T10:00:00Z

before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
  const target = new URL(server.url);
  proxy = createServer((req, res) => {
    seen.push({
      method: req.method!,
      url: req.url!,
      encoding: req.headers['content-encoding'],
      auth: req.headers.authorization,
    });
    const out = httpRequest(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const address = proxy.address() as { port: number };
  proxyUrl = `http://127.0.0.1:${address.port}`;
});
after(async () => {
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await server.stop();
});

async function bucket(key: string, at = '2026-01-24T10:00:00Z'): Promise<unknown> {
  const q = new URLSearchParams({ key, from: at, to: at, granularity: '1m' });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: agent.sourceToken,
    sourceId: agent.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data.values[0];
}

test('the client writes points over the v2 API with gzip, and they read back exactly', async () => {
  const client = new InfluxDB({ url: proxyUrl, token: agent.sourceToken });
  // gzipThreshold 0: every body is gzipped (the default gzips bodies of 1000 bytes and more)
  const writer = client.getWriteApi('homelab', 'proxmox', 'ns', { gzipThreshold: 0, maxRetries: 0 });
  writer.useDefaultTags({ host: 'pve1' });
  writer.writePoint(
    new Point('cpu')
      .tag('cpu', 'cpu-total')
      .floatField('usage_idle', 97.5)
      .floatField('usage_user', 1.25)
      .timestamp(new Date(T0 + 5000)),
  );
  writer.writePoint(
    new Point('cpu')
      .tag('cpu', 'cpu-total')
      .floatField('usage_idle', 96.5)
      .floatField('usage_user', 2.25)
      .timestamp(new Date(T0 + 15_000)),
  );
  writer.writePoint(
    new Point('mem')
      .intField('used', 4_294_967_296)
      .uintField('total', 17_179_869_184)
      .booleanField('swap_on', true)
      .stringField('note', 'a "quoted", text') // skipped by the mapping
      .timestamp(`${BigInt(T0 + 20_000) * 1_000_000n + 123_456n}`), // a nanosecond string
  );
  writer.writePoint(
    new Point('net io') // an escaped measurement and tag value
      .tag('interface', 'eth 0,a=b')
      .floatField('bytes recv', 1024)
      .timestamp(new Date(T0 + 30_000)),
  );
  await writer.close();

  const writes = seen.filter((r) => r.url.startsWith('/api/v2/write'));
  assert.ok(writes.length >= 1);
  for (const w of writes) {
    assert.equal(w.encoding, 'gzip');
    assert.equal(w.auth, `Token ${agent.sourceToken}`);
    assert.match(w.url, /org=homelab/);
    assert.match(w.url, /bucket=proxmox/);
    assert.match(w.url, /precision=ns/);
  }

  assert.deepEqual(await bucket('cpu,cpu=cpu-total,host=pve1'), {
    usage_idle: { sum: 194, count: 2, last: 96.5 },
    usage_user: { sum: 3.5, count: 2, last: 2.25 },
  });
  assert.deepEqual(await bucket('mem,host=pve1'), {
    used: { sum: 4_294_967_296, count: 1, last: 4_294_967_296 },
    total: { sum: 17_179_869_184, count: 1, last: 17_179_869_184 },
    swap_on: { sum: 1, count: 1, last: 1 },
  });
  assert.deepEqual(await bucket('net\\ io,host=pve1,interface=eth\\ 0\\,a\\=b'), {
    'bytes recv': { sum: 1024, count: 1, last: 1024 }, // only a dot in a field name is replaced
  });
});

test('the client reports a wrong token as its HttpError 401, and /health answers its ping', async () => {
  const client = new InfluxDB({ url: proxyUrl, token: 'not-a-token' });
  const writer = client.getWriteApi('homelab', 'proxmox', 'ns', { maxRetries: 0 });
  writer.writeRecord(`cpu usage_idle=1 ${BigInt(T0) * 1_000_000n}`);
  await assert.rejects(writer.close(), (err: unknown) => {
    assert.ok(err instanceof HttpError, String(err));
    assert.equal(err.statusCode, 401);
    return true;
  });
  const health = await fetch(`${proxyUrl}/health`);
  assert.equal(health.status, 200);
  assert.equal(((await health.json()) as { status: string }).status, 'pass');
});
