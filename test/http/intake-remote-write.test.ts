// Prometheus remote write 1.0 on POST /api/v1/write through the real server, read back through
// GET /api/v1/metrics; and the real vmagent (Debian's victoria-metrics package, extracted into
// .cache/ by .ci/run) scraping a small Prometheus text endpoint and remote-writing to the service.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { ProtoWriter } from '../../src/intake/protobuf';
import { snappyLiteralBlock } from '../../src/intake/snappy';

const MAX_BODY = 262_144;
let server: TestServer;
let agent: ProjectAgent;
const T0 = Date.UTC(2026, 0, 24, 10, 0, 0);

before(async () => {
  server = await startTestServer({ SERVICE_MAX_BODY_BYTES: String(MAX_BODY) });
  agent = await createProjectWithToken(server);
});
after(() => server.stop());

type Series = { labels: Record<string, string>; samples: Array<[number, number]> };

function writeRequest(series: Series[]): Buffer {
  const w = new ProtoWriter();
  for (const s of series) {
    const ts = new ProtoWriter();
    for (const [k, v] of Object.entries(s.labels)) ts.message(1, new ProtoWriter().string(1, k).string(2, v));
    for (const [value, at] of s.samples) ts.message(2, new ProtoWriter().double(1, value).varint(2, at));
    w.message(1, ts);
  }
  return w.finish();
}

async function post(body: Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/api/v1/write`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${agent.sourceToken}`,
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
      ...headers,
    },
    body,
  });
  return { status: res.status, text: await res.text() };
}

async function bucket(key: string, from = '2026-01-24T10:00:00Z'): Promise<unknown> {
  const q = new URLSearchParams({ key, from, to: from, granularity: '1m' });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: agent.sourceToken,
    sourceId: agent.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data.values[0];
}

test('gauges are tracked and asserted, counters and histogram series asserted as last', async () => {
  const job = { job: 'node', instance: 'pve1:9100' };
  const body = writeRequest([
    {
      labels: { __name__: 'node_load1', ...job },
      samples: [
        [0.5, T0 + 5_000],
        [1.5, T0 + 20_000],
      ],
    },
    {
      labels: { __name__: 'node_network_receive_bytes_total', device: 'eth0', ...job },
      samples: [
        [1000, T0 + 5_000],
        [4000, T0 + 20_000],
      ],
    },
    { labels: { __name__: 'http_duration_seconds_bucket', le: '0.5', ...job }, samples: [[7, T0 + 5_000]] },
    { labels: { __name__: 'http_duration_seconds_count', ...job }, samples: [[9, T0 + 5_000]] },
    { labels: { __name__: 'http_duration_seconds_sum', ...job }, samples: [[2.25, T0 + 5_000]] },
    {
      labels: { __name__: 'stale', ...job, empty: '' },
      samples: [
        [NaN, T0 + 5_000],
        [3, T0 + 6_000],
      ],
    },
  ]);
  const res = await post(snappyLiteralBlock(body));
  assert.equal(res.status, 204, res.text);
  assert.equal(res.text, '');
  assert.deepEqual(await bucket('node_load1,instance=pve1:9100,job=node'), {
    value: { sum: 2, count: 2, last: 1.5 },
  });
  assert.deepEqual(await bucket('node_network_receive_bytes_total,device=eth0,instance=pve1:9100,job=node'), {
    value: { last: 4000 },
  });
  assert.deepEqual(await bucket('http_duration_seconds_bucket,instance=pve1:9100,job=node,le=0.5'), {
    value: { last: 7 },
  });
  assert.deepEqual(await bucket('http_duration_seconds_count,instance=pve1:9100,job=node'), {
    value: { last: 9 },
  });
  assert.deepEqual(await bucket('http_duration_seconds_sum,instance=pve1:9100,job=node'), {
    value: { last: 2.25 },
  });
  // the NaN (a stale marker) is skipped, the empty label dropped
  assert.deepEqual(await bucket('stale,instance=pve1:9100,job=node'), {
    value: { sum: 3, count: 1, last: 3 },
  });
});

test('credentials: Basic with the token as password works; none, unknown and user tokens do not', async () => {
  const body = snappyLiteralBlock(
    writeRequest([{ labels: { __name__: 'basic_gauge' }, samples: [[5, T0]] }]),
  );
  const basic = `Basic ${Buffer.from(`prometheus:${agent.sourceToken}`).toString('base64')}`;
  assert.equal((await post(body, { authorization: basic })).status, 204);
  assert.deepEqual(await bucket('basic_gauge'), { value: { sum: 5, count: 1, last: 5 } });
  assert.equal((await post(body, { authorization: '' })).status, 401);
  assert.equal((await post(body, { authorization: 'Bearer nope' })).status, 401);
  assert.equal((await post(body, { authorization: `Bearer ${agent.userToken}` })).status, 403);
});

test('bad bodies are 400 with a text message naming the series; nothing of them is stored', async () => {
  const noName = writeRequest([
    { labels: { __name__: 'bad_first_ok' }, samples: [[1, T0]] },
    { labels: { job: 'x' }, samples: [[1, T0]] },
  ]);
  let res = await post(snappyLiteralBlock(noName));
  assert.equal(res.status, 400);
  assert.equal(res.text, 'timeseries[1] has no __name__ label\n');
  assert.deepEqual(await bucket('bad_first_ok'), {});

  res = await post(
    snappyLiteralBlock(writeRequest([{ labels: { __name__: 'k'.repeat(300) }, samples: [[1, T0]] }])),
  );
  assert.equal(res.status, 400);
  assert.match(res.text, /^timeseries\[0\]: key "k+"\.\.\. is longer than 255 characters/);

  res = await post(
    snappyLiteralBlock(
      writeRequest([{ labels: { __name__: 'future' }, samples: [[1, 260_000_000_000_000]] }]),
    ),
  );
  assert.equal(res.status, 400);
  assert.match(res.text, /outside the accepted range/);

  res = await post(Buffer.from([0x05, 0x10, 0x61])); // a literal of 5 bytes with one present
  assert.equal(res.status, 400);
  assert.equal(res.text, 'snappy: a literal runs past the end of the body\n');

  res = await post(snappyLiteralBlock(Buffer.from([0x0a, 0x05, 0x0a]))); // a series cut short
  assert.equal(res.status, 400);
  assert.match(res.text, /^timeseries\[0\]: protobuf: a field runs past the end of its message/);
});

test('a snappy bomb is refused by its declared length before inflating; wrong type or encoding is 415', async () => {
  // declares 1 GiB in 5 bytes of length and a few copies
  const bomb = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x04, 0x00, 0x61, 0xfe, 0x01, 0x00]);
  let res = await post(bomb);
  assert.equal(res.status, 413);
  assert.equal(res.text, `Request body inflates to 1073741824 bytes, over the limit of ${MAX_BODY} bytes\n`);
  // just over the limit, honestly compressed
  res = await post(snappyLiteralBlock(Buffer.alloc(MAX_BODY + 1)));
  assert.equal(res.status, 413);
  const ok = snappyLiteralBlock(writeRequest([{ labels: { __name__: 'x' }, samples: [[1, T0]] }]));
  assert.equal((await post(ok, { 'content-encoding': 'gzip' })).status, 415);
  assert.equal((await post(ok, { 'content-encoding': '' })).status, 415);
  assert.equal((await post(ok, { 'content-type': 'application/json' })).status, 415);
  const get = await fetch(`${server.url}/api/v1/write`);
  assert.equal(get.status, 405);
  assert.equal(get.headers.get('allow'), 'POST');
});

test('a snappy block with overlapping back-references inflates exactly', async () => {
  // "gauge_run" as a WriteRequest whose value bytes are written with copies: build the plain bytes,
  // then compress the run of eight 0x00 bytes of the double 0 as a literal plus an overlapping copy.
  const plain = writeRequest([{ labels: { __name__: 'zero_gauge' }, samples: [[0, T0]] }]);
  const zeros = plain.indexOf(Buffer.alloc(8));
  assert.ok(zeros > 0);
  const head = plain.subarray(0, zeros + 1); // up to and including the first zero byte
  const tail = plain.subarray(zeros + 8);
  const lit = (b: Buffer) => Buffer.concat([Buffer.from([(b.length - 1) << 2]), b]);
  const block = Buffer.concat([
    Buffer.from([plain.length]),
    lit(head),
    Buffer.from([0x01 | (3 << 2), 0x01]),
    lit(tail),
  ]); // copy 7 from offset 1
  const res = await post(block);
  assert.equal(res.status, 204, res.text);
  assert.deepEqual(await bucket('zero_gauge'), { value: { sum: 0, count: 1, last: 0 } });
});

const VMAGENT = process.env.VMAGENT_BIN ?? join(process.cwd(), '.cache/victoria-metrics/usr/bin/vmagent');

test(
  'vmagent scrapes a Prometheus text endpoint and remote-writes to the service',
  {
    skip: existsSync(VMAGENT)
      ? false
      : `vmagent not found at ${VMAGENT} (.ci/run extracts Debian's victoria-metrics package there)`,
  },
  async () => {
    const target = createServer((req, res) => {
      res.setHeader('content-type', 'text/plain; version=0.0.4');
      res.end(
        '# TYPE room_temperature gauge\nroom_temperature{room="kitchen"} 21.5\n# TYPE app_requests_total counter\napp_requests_total{code="200"} 42\n',
      );
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'vmagent-'));
    writeFileSync(
      join(dir, 'scrape.yml'),
      `global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: lab\n    static_configs:\n      - targets: ['127.0.0.1:${port}']\n`,
    );
    const child = spawn(
      VMAGENT,
      [
        `-promscrape.config=${join(dir, 'scrape.yml')}`,
        `-remoteWrite.url=${server.url}/api/v1/write`,
        `-remoteWrite.bearerToken=${agent.sourceToken}`,
        `-remoteWrite.tmpDataPath=${join(dir, 'queue')}`,
        '-remoteWrite.flushInterval=500ms',
        '-httpListenAddr=127.0.0.1:0',
        '-loggerLevel=ERROR',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const instance = `127.0.0.1:${port}`;
    try {
      const deadline = Date.now() + 30_000;
      let gauge: any;
      let counter: any;
      let from = '';
      while (Date.now() < deadline) {
        from = new Date(Math.floor(Date.now() / 60_000) * 60_000).toISOString();
        gauge = await bucket(`room_temperature,instance=${instance},job=lab,room=kitchen`, from);
        counter = await bucket(`app_requests_total,code=200,instance=${instance},job=lab`, from);
        if (gauge?.value && counter?.value) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.ok(
        gauge?.value && counter?.value,
        `nothing arrived from vmagent in 30 s; its log: ${stderr.slice(0, 2000)}`,
      );
      assert.equal(gauge.value.last, 21.5);
      assert.ok(gauge.value.count >= 1);
      assert.equal(gauge.value.sum, 21.5 * gauge.value.count);
      assert.deepEqual(counter, { value: { last: 42 } });
      const up = await bucket(`up,instance=${instance},job=lab`, from);
      assert.equal((up as any)?.value?.last, 1);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      target.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
