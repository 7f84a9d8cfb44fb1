// Connection time-outs and the server-wide cap on body bytes in flight (SPEC 9), with short limits
// from config. Issue 9: unfinished bodies held their connection (and memory) for 300 s.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { connect, firstResponse, postHead, sleep } from '../helpers/raw-http';

const TIMEOUT = { errors: { detail: 'Request timeout: headers or body not received in time' } };
const BUSY = { errors: { detail: 'Too many request bodies in flight, retry later' } };
const AT = '2026-01-24T10:00:00Z';

describe('connection time-outs', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({
      SERVICE_HEADERS_TIMEOUT_MS: '400',
      SERVICE_REQUEST_TIMEOUT_MS: '1000',
      SERVICE_KEEP_ALIVE_TIMEOUT_MS: '300',
    });
  });
  after(() => server.stop());

  /** Milliseconds until the server closes `conn`, failing past `limit`. */
  async function closesWithin(
    conn: Awaited<ReturnType<typeof connect>>,
    limit: number,
  ): Promise<[number, string]> {
    const started = Date.now();
    const raw = await Promise.race([conn.closed, sleep(limit).then(() => null)]);
    assert.notEqual(raw, null, `the server kept the connection open for ${limit} ms`);
    return [Date.now() - started, raw!];
  }

  test('headers not finished in time: 408 with the JSON body, connection closed', async () => {
    const conn = await connect(server.url);
    conn.socket.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n');
    const [ms, raw] = await closesWithin(conn, 3_000);
    assert.ok(ms >= 300, `closed after ${ms} ms`);
    assert.deepEqual(firstResponse(raw)?.body, TIMEOUT);
    assert.equal(firstResponse(raw)?.status, 408);
  });

  test('a connection that sends nothing is closed', async () => {
    const conn = await connect(server.url);
    await closesWithin(conn, 3_000);
  });

  test('a body not finished in time: 408, connection closed', async () => {
    const agent = await createProjectWithToken(server);
    const conn = await connect(server.url);
    conn.socket.write(
      postHead('/api/v1/metrics', 200, {
        Authorization: `Bearer ${agent.sourceToken}`,
        'X-Service-Source-Id': agent.sourceId,
      }),
    );
    conn.socket.write('{"key":"slow",');
    const [ms, raw] = await closesWithin(conn, 4_000);
    assert.ok(ms >= 600, `closed after ${ms} ms`);
    assert.equal(firstResponse(raw)?.status, 408, raw);
  });

  test('a slow body trickling a byte at a time is still cut at the request time-out', async () => {
    const conn = await connect(server.url);
    conn.socket.write(postHead('/api/v1/bootstrap/login', 10_000));
    const drip = setInterval(() => conn.socket.writable && conn.socket.write(' '), 100);
    try {
      const [ms] = await closesWithin(conn, 4_000);
      assert.ok(ms < 3_000, `closed after ${ms} ms`);
    } finally {
      clearInterval(drip);
    }
  });

  test('an idle keep-alive connection is closed after its time-out', async () => {
    const conn = await connect(server.url);
    conn.socket.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
    const [ms, raw] = await closesWithin(conn, 3_000);
    assert.equal(firstResponse(raw)?.status, 200);
    assert.ok(ms < 2_000, `closed after ${ms} ms`);
  });

  test('an Expect header other than 100-continue is 417 with the JSON error body', async () => {
    const conn = await connect(server.url);
    conn.socket.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n');
    const raw = await conn.closed;
    assert.deepEqual(
      [firstResponse(raw)?.status, firstResponse(raw)?.body],
      [417, { errors: { detail: 'Unsupported Expect header (only 100-continue)' } }],
    );
  });

  test('the server still answers afterwards', async () => {
    assert.equal((await request(server, 'GET', '/api/v1/health')).status, 200);
  });
});

describe('body bytes in flight are capped server-wide', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  const auth = () => ({
    Authorization: `Bearer ${agent.sourceToken}`,
    'X-Service-Source-Id': agent.sourceId,
  });
  before(async () => {
    server = await startTestServer({
      SERVICE_BODY_BYTES_IN_FLIGHT: String(512 * 1024),
      SERVICE_MAX_BODY_BYTES: '450000',
      SERVICE_REQUEST_TIMEOUT_MS: '5000',
    });
    agent = await createProjectWithToken(server);
  });
  after(() => server.stop());

  test('past the cap a request is 503 + Retry-After; once the held bodies go, requests pass again', async () => {
    // Two unfinished 300 KB bodies: the first is held, the second passes the 512 KiB cap.
    const held = await connect(server.url);
    held.socket.write(postHead('/api/v1/metrics', 400_000, auth()));
    held.socket.write(' '.repeat(300_000));
    await sleep(200);
    const refused = await connect(server.url);
    refused.socket.write(postHead('/api/v1/metrics', 400_000, auth()));
    refused.socket.write(' '.repeat(300_000));
    await sleep(300);
    const answer = firstResponse(refused.received());
    assert.deepEqual([answer?.status, answer?.body], [503, BUSY]);
    assert.match(answer!.headers, /retry-after: 1/i);
    // A small request still fits beside the held body.
    const point = { key: 'fits', at: AT, values: { n: 1 } };
    const small = await request(server, 'POST', '/api/v1/metrics', point, {
      token: agent.sourceToken,
      sourceId: agent.sourceId,
    });
    assert.equal(small.status, 201, small.text);
    held.socket.destroy();
    refused.socket.destroy();
    await sleep(100);
    const big = { key: 'after', at: AT, values: { n: 1 }, pad: 'x'.repeat(400_000) };
    const res = await request(server, 'POST', '/api/v1/metrics', big, {
      token: agent.sourceToken,
      sourceId: agent.sourceId,
    });
    assert.equal(
      res.status,
      201,
      `the bytes of the closed requests were given back: ${res.text.slice(0, 100)}`,
    );
  });

  test('unfinished gzip bodies are charged too (inflated bytes and a share per stream)', async () => {
    const inflated = gzipSync(Buffer.from(' '.repeat(900_000)));
    const conns = [];
    for (let i = 0; i < 12; i++) {
      const conn = await connect(server.url);
      conn.socket.write(
        postHead('/api/v1/metrics', inflated.length + 10, { ...auth(), 'Content-Encoding': 'gzip' }),
      );
      conn.socket.write(inflated.subarray(0, inflated.length - 8)); // never ends
      conns.push(conn);
    }
    await sleep(500);
    const statuses = conns.map((c) => firstResponse(c.received())?.status ?? 'held');
    assert.ok(statuses.includes(503), `some are refused: ${statuses.join(',')}`);
    assert.ok(
      statuses.filter((s) => s === 'held').length <= 1,
      `at most one 900 KB body fits: ${statuses.join(',')}`,
    );
    for (const c of conns) c.socket.destroy();
    assert.equal((await request(server, 'GET', '/api/v1/health')).status, 200);
  });
});
