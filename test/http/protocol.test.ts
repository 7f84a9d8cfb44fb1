// HTTP-level behaviour shared by every endpoint: health, unknown routes, methods, bodies, limits.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import net from 'node:net';
import { request, startTestServer, type TestServer } from '../helpers/server';

const SIGNUP = '/api/v1/bootstrap/signup';

describe('HTTP protocol', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SERVICE_MAX_BODY_BYTES: '2048' });
  });
  after(() => server.stop());

  test('health answers without auth and outside the data wrapper', async () => {
    const res = await request(server, 'GET', '/api/v1/health');
    assert.equal(res.status, 200);
    assert.equal(res.body.status, 'ok');
    assert.equal(res.body.api_version, 'v1');
    assert.match(res.body.timestamp, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    assert.equal(typeof res.body.server_version, 'string');
    assert.ok(res.headers.get('x-request-id'));
  });

  test('unknown routes are 404 with the SPEC body', async () => {
    // `/` and other paths outside /api are the web interface (docs/interface.md).
    for (const path of ['/api/v1', '/api/v2/health', '/api/v1/nothing', '/api/v1/health/extra']) {
      const res = await request(server, 'GET', path);
      assert.equal(res.status, 404, path);
      assert.deepEqual(res.body, { errors: { detail: 'Not found' } });
    }
  });

  test('a wrong method on a known path is 405 with Allow', async () => {
    const res = await request(server, 'DELETE', '/api/v1/health');
    assert.equal(res.status, 405);
    assert.deepEqual(res.body, { errors: { detail: 'Method not allowed' } });
    assert.match(res.headers.get('allow') ?? '', /GET/);
    const get = await request(server, 'GET', SIGNUP);
    assert.equal(get.status, 405);
    assert.match(get.headers.get('allow') ?? '', /POST/);
  });

  test('malformed JSON is 400', async () => {
    for (const raw of ['{bad', '{"a":', 'nul', '\u0000']) {
      const res = await request(server, 'POST', SIGNUP, undefined, {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400, raw);
      assert.deepEqual(res.body, { errors: { detail: 'Malformed JSON body' } });
    }
  });

  test('bodies that are not JSON objects are 400', async () => {
    for (const raw of ['[]', '"text"', 'null', '42', 'true']) {
      const res = await request(server, 'POST', SIGNUP, undefined, {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 400, raw);
      assert.equal(typeof res.body.errors.detail, 'string');
    }
  });

  test('unsupported content types and encodings are 415', async () => {
    const text = await request(server, 'POST', SIGNUP, undefined, {
      raw: '{}',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(text.status, 415);
    assert.match(text.body.errors.detail, /Content-Type/);
    const form = await request(server, 'POST', SIGNUP, undefined, {
      raw: 'a=b',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(form.status, 415);
    const br = await request(server, 'POST', SIGNUP, undefined, {
      raw: '{}',
      headers: { 'content-type': 'application/json', 'content-encoding': 'br' },
    });
    assert.equal(br.status, 415);
    assert.match(br.body.errors.detail, /Content-Encoding/);
  });

  test('a body over the limit is 413, also when it only grows past it while inflating', async () => {
    const big = JSON.stringify({ email: 'x'.repeat(4000) });
    const plain = await request(server, 'POST', SIGNUP, undefined, {
      raw: big,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(plain.status, 413);
    assert.match(plain.body.errors.detail, /2048/);
    // 10 MB of zeros compresses to ~10 KB: the reader must stop at 2 KB of inflated output.
    const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20));
    const gz = await request(server, 'POST', SIGNUP, undefined, {
      raw: bomb,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.equal(gz.status, 413);
  });

  test('gzip bodies are inflated; broken gzip is 400', async () => {
    const ok = await request(server, 'POST', SIGNUP, undefined, {
      raw: gzipSync(Buffer.from('[1,2]')),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    // The body was read and parsed: an array is refused as "not an object", not as bad gzip.
    assert.equal(ok.status, 400);
    assert.match(ok.body.errors.detail, /JSON object/);
    const broken = await request(server, 'POST', SIGNUP, undefined, {
      raw: Buffer.from('definitely not gzip'),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.equal(broken.status, 400);
    assert.match(broken.body.errors.detail, /gzip/);
  });

  test('oversized headers are 431 with the JSON error body', async () => {
    const res = await rawRequest(
      server.port,
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20000)}\r\n\r\n`,
    );
    assert.match(res, /^HTTP\/1\.1 431/);
    assert.match(res, /\{"errors":\{"detail":"[^"]+"\}\}/);
  });

  test('a garbage request line is answered with 400 and the server stays healthy', async () => {
    const res = await rawRequest(server.port, 'NOT HTTP AT ALL\r\n\r\n');
    assert.match(res, /^HTTP\/1\.1 400/);
    const health = await request(server, 'GET', '/api/v1/health');
    assert.equal(health.status, 200);
  });

  test('OPTIONS on a known path lists the allowed methods', async () => {
    const res = await request(server, 'OPTIONS', '/api/v1/dashboards');
    assert.equal(res.status, 204);
    assert.match(res.headers.get('allow') ?? '', /GET/);
    assert.match(res.headers.get('allow') ?? '', /POST/);
  });
});

function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
    let data = '';
    socket.on('data', (chunk) => (data += chunk.toString()));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(data);
    });
  });
}
