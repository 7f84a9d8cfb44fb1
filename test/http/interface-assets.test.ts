// Serving the web interface (docs/interface.md): index.html for every page path, hashed assets
// with long caching and precompressed bodies, the security headers, and /api/* left alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { ensureWebBuilt } from '../helpers/web';
import { isPagePath } from '../../src/http/web/serve';

/** A raw GET (fetch would decode the body and hide Content-Encoding). */
function rawGet(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      })
      .on('error', reject);
  });
}

/** A share link's page may be framed (a wall display, Home Assistant's iframe card); no other page. */
function assertSecurityHeaders(headers: http.IncomingHttpHeaders, framable = false): void {
  const csp = String(headers['content-security-policy']);
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  assert.match(csp, framable ? /frame-ancestors \*/ : /frame-ancestors 'none'/);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['referrer-policy'], 'no-referrer');
  assert.equal(headers['x-frame-options'], framable ? undefined : 'DENY');
}

describe('the web interface’s files', () => {
  let server: TestServer;
  let script = '';
  before(async () => {
    await ensureWebBuilt();
    server = await startTestServer();
  });
  after(() => server.stop());

  test('/ and every page path answer index.html, no-cache, with the security headers', async () => {
    const pages = [
      '/',
      '/signin',
      '/setup',
      '/d/0b8a7c52-8f0e-4f4e-9d0f-5d7c3bcb6f00?from=x',
      '/explore',
      '/sources',
      '/account',
      '/s/Ab_9-xZ',
    ];
    for (const page of [...pages, '/explore?kiosk']) {
      const res = await rawGet(server.url + page);
      assert.equal(res.status, 200, page);
      assert.match(String(res.headers['content-type']), /^text\/html/);
      assert.equal(res.headers['cache-control'], 'no-cache');
      assertSecurityHeaders(res.headers, page.startsWith('/s/'));
      const html = res.body.toString('utf8');
      const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
      // boot.js (a classic script that starts a dashboard's reads) and the interface's module.
      assert.equal(scripts.length, 2);
      assert.match(scripts[0]![1]!, /^ src="\/assets\/boot\.[0-9a-f]{12}\.js"$/);
      assert.match(scripts[1]![1]!, /type="module" src="\/assets\/app\.[0-9a-f]{12}\.js"/);
      for (const s of scripts) assert.equal(s[2], '', 'no inline script');
      assert.doesNotMatch(html, /https?:\/\//, 'nothing remote');
      script = /src="(\/assets\/[^"]+)"/.exec(html)![1]!;
    }
  });

  test('a path that is no page of the interface answers 404 with its page (SPEC 2)', async () => {
    const unknown = [
      '/no/such/page',
      '/definitely/not/here',
      '/API/v1/Metrics/Batch',
      '/Api/v1/no-such-route',
      '/EXPLORE',
      '/explore/',
      '/d/',
      '/d/x/y',
      '/s/a.b',
      '/index.html',
      '/favicon.ico',
    ];
    for (const page of unknown) {
      const res = await rawGet(server.url + page);
      assert.equal(res.status, 404, page);
      assert.match(String(res.headers['content-type']), /^text\/html/, page);
      assertSecurityHeaders(res.headers);
      assert.match(res.body.toString('utf8'), /<script type="module" src="\/assets\/app\./, page);
    }
    const head = await request(server, 'HEAD', '/definitely/not/here');
    assert.equal(head.status, 404);
    // the API's routes still take the spellings the router accepts (test/http/metrics.test.ts)
    assert.equal((await request(server, 'GET', '/API/v1/Health')).status, 200);
  });

  test('the server knows every page path web/app.tsx routes', () => {
    const app = readFileSync(new URL('../../web/app.tsx', import.meta.url), 'utf8');
    const literals = [...app.matchAll(/path === '([^']+)'/g)].map((m) => m[1]!);
    const patterns = [
      ...app.matchAll(/\/\^(\\\/[a-z]+)\\\/\(\[[^\]]+\]\+\)\$\/\.exec\((?:loc\.)?path\)/g),
    ].map((m) => m[1]!.replace(/\\/g, ''));
    assert.deepEqual(
      new Set(patterns),
      new Set(['/d', '/s', '/monitors']),
      'the parameterised pages found in web/app.tsx',
    );
    assert.ok(literals.length >= 6, `page paths found in web/app.tsx: ${literals.join(' ')}`);
    for (const page of [...literals, ...patterns.map((p) => `${p}/abc`)]) assert.ok(isPagePath(page), page);
  });

  test('hashed assets: immutable, brotli or gzip by Accept-Encoding, identity otherwise', async () => {
    const plain = await rawGet(server.url + script, { 'accept-encoding': 'identity' });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(plain.headers['content-type']), /^text\/javascript/);
    assert.equal(plain.headers['content-encoding'], undefined);
    assertSecurityHeaders(plain.headers);
    const br = await rawGet(server.url + script, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.deepEqual(brotliDecompressSync(br.body), plain.body);
    const gz = await rawGet(server.url + script, { 'accept-encoding': 'gzip' });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.deepEqual(gunzipSync(gz.body), plain.body);
    assert.match(String(gz.headers.vary), /accept-encoding/i);
  });

  test('API paths and unknown assets stay JSON 404s; other methods on pages are not the interface', async () => {
    const api = await request(server, 'GET', '/api/v1/no-such-route');
    assert.equal(api.status, 404);
    assert.deepEqual(api.body, { errors: { detail: 'Not found' } });
    assert.equal((await request(server, 'GET', '/api')).status, 404);
    assert.notEqual(
      (await request(server, 'GET', '/metrics')).headers.get('content-type')?.startsWith('text/html'),
      true,
      '/metrics is never the interface',
    );
    const asset = await request(server, 'GET', '/assets/app.000000000000.js');
    assert.equal(asset.status, 404);
    assert.deepEqual(asset.body, { errors: { detail: 'Not found' } });
    const post = await request(server, 'POST', '/explore', {});
    assert.equal(post.status, 404);
    const head = await request(server, 'HEAD', '/explore');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
    assert.match(head.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    const health = await request(server, 'GET', '/api/v1/health');
    assert.equal(health.status, 200);
  });
});
