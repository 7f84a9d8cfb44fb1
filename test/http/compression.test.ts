// API answers are compressed when the client accepts it (SPEC 10): a long series read goes out as br or
// gzip, decodes to exactly the uncompressed JSON, and small answers and clients without
// Accept-Encoding get plain JSON.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  startTestServer,
} from '../helpers/server';

interface RawReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

function rawGet(url: string, headers: Record<string, string>): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

describe('compressed API answers', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  let seriesUrl: string;
  let auth: Record<string, string>;

  before(async () => {
    server = await startTestServer();
    agent = await createProjectWithToken(server, { granularities: '1h' });
    const points = [];
    for (let h = 0; h < 24 * 30; h++) {
      points.push({
        at: new Date(Date.UTC(2026, 2, 1) + h * 3_600_000).toISOString(),
        key: 'web',
        values: { requests: h % 17, bytes: { in: h * 3, out: h * 5 } },
      });
    }
    const res = await request(
      server,
      'POST',
      '/api/v1/metrics/batch',
      { points },
      { token: agent.sourceToken, sourceId: agent.sourceId },
    );
    assert.ok(res.status < 300, res.text);
    const q = new URLSearchParams({
      key: 'web',
      from: '2026-03-01T00:00:00Z',
      to: '2026-03-31T00:00:00Z',
      granularity: '1h',
    });
    seriesUrl = `${server.url}/api/v1/metrics?${q}`;
    auth = { Authorization: `Bearer ${agent.sourceToken}`, 'X-Service-Source-Id': agent.sourceId };
  });
  after(() => server?.stop());

  test('a long read is sent as br and as gzip, and decodes to the plain answer', async () => {
    const plain = await rawGet(seriesUrl, auth);
    assert.equal(plain.status, 200, plain.bytes.toString());
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.ok(plain.bytes.length > 20_000, `plain answer is ${plain.bytes.length} bytes`);
    const expected = JSON.parse(plain.bytes.toString());

    const br = await rawGet(seriesUrl, { ...auth, 'Accept-Encoding': 'gzip, deflate, br' });
    assert.equal(br.status, 200);
    assert.equal(br.headers['content-encoding'], 'br');
    assert.match(String(br.headers['content-type']), /application\/json/);
    assert.match(String(br.headers.vary), /Accept-Encoding/i);
    assert.ok(br.bytes.length * 4 < plain.bytes.length, `br ${br.bytes.length} vs ${plain.bytes.length}`);
    assert.deepEqual(JSON.parse(brotliDecompressSync(br.bytes).toString()), expected);

    const gz = await rawGet(seriesUrl, { ...auth, 'Accept-Encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(gz.bytes.length * 4 < plain.bytes.length, `gzip ${gz.bytes.length} vs ${plain.bytes.length}`);
    assert.deepEqual(JSON.parse(gunzipSync(gz.bytes).toString()), expected);

    const refused = await rawGet(seriesUrl, { ...auth, 'Accept-Encoding': 'br;q=0, gzip;q=0' });
    assert.equal(refused.headers['content-encoding'], undefined);
    assert.deepEqual(JSON.parse(refused.bytes.toString()), expected);
  });

  test('small answers and errors stay plain', async () => {
    const health = await rawGet(`${server.url}/api/v1/health`, { 'Accept-Encoding': 'br, gzip' });
    assert.equal(health.status, 200);
    assert.equal(health.headers['content-encoding'], undefined);
    JSON.parse(health.bytes.toString());
    const denied = await rawGet(seriesUrl, { 'Accept-Encoding': 'br, gzip', Authorization: 'Bearer nope' });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers['content-encoding'], undefined);
    assert.ok(JSON.parse(denied.bytes.toString()).errors, denied.bytes.toString());
  });
});
