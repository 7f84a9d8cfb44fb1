// Serving the web interface (docs/interface.md): index.html for every page path, hashed assets
// with long caching and precompressed bodies, the security headers, and /api/* left alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createProjectWithToken, request, startTestServer, type TestServer } from '../helpers/server';
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

/** The CSP source of an inline script's text. */
const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/**
 * A share link's page may be framed (a wall display, Home Assistant's iframe card); no other page.
 * Scripts: the server's own files and the one inline script of index.html, by its hash.
 */
function assertSecurityHeaders(headers: http.IncomingHttpHeaders, framable = false): void {
  const csp = String(headers['content-security-policy']);
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/]{43}='(;|$)/);
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
      // web/boot.ts inline (it starts a dashboard's reads), before the stylesheet, then the module.
      assert.equal(scripts.length, 2);
      assert.equal(scripts[0]![1], '');
      assert.ok(
        html.indexOf(scripts[0]![0]) < html.indexOf('<link rel="stylesheet"'),
        'boot before the stylesheet',
      );
      assert.match(scripts[1]![1]!, /type="module" src="\/assets\/app\.[0-9a-f]{12}\.js"/);
      assert.equal(scripts[1]![2], '');
      const csp = String(res.headers['content-security-policy']);
      assert.equal(
        /script-src ([^;]*)/.exec(csp)![1],
        `'self' ${hashOf(scripts[0]![2]!)}`,
        'that script, no other',
      );
      assert.doesNotMatch(html, /https?:\/\//, 'nothing remote');
      assert.doesNotMatch(html, /<script type="application\/json"/, 'no data without a session');
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

describe('a dashboard page carries its data for a signed-in browser', () => {
  let server: TestServer;
  before(async () => {
    await ensureWebBuilt();
    server = await startTestServer();
  });
  after(() => server.stop());

  /** A session cookie of the user of `userToken`, as sign-in sets it. */
  async function sessionOf(userToken: string): Promise<string> {
    const res = await request(server, 'POST', '/api/v1/session', undefined, {
      token: userToken,
      headers: { 'x-service-csrf': '1' },
    });
    const pair = res.headers
      .getSetCookie()
      .find((c) => c.startsWith('svc_session='))
      ?.split(';')[0];
    assert.ok(res.status === 201 && pair, res.text);
    return pair;
  }

  const dataOf = (html: string) => {
    const m = /<script type="application\/json" id="svc-page-data">([^<]*)<\/script>/.exec(html);
    return m ? JSON.parse(m[1]!) : null;
  };

  test('its dashboard and source as the API presents them, only to who may read them', async () => {
    const owner = await createProjectWithToken(server, { name: 'Shop' });
    const created = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      {
        name: 'Sales <b>&</b>',
        key: 'shop::orders',
        source: { type: 'project', id: owner.sourceId },
        payload: { grid: [] },
      },
      { token: owner.userToken },
    );
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id as string;
    const cookie = await sessionOf(owner.userToken);

    const page = await rawGet(`${server.url}/d/${id}`, { cookie, 'accept-encoding': 'br' });
    assert.equal(page.status, 200);
    assert.equal(page.headers['content-encoding'], 'br');
    assert.equal(page.headers['cache-control'], 'private, no-cache');
    assert.match(String(page.headers.vary), /cookie/i);
    assertSecurityHeaders(page.headers);
    const html = brotliDecompressSync(page.body).toString('utf8');
    assert.doesNotMatch(html, /<b>/, 'the name is escaped inside the data block');
    const data = dataOf(html);
    const shown = await request(server, 'GET', `/api/v1/dashboards/${id}`, undefined, {
      token: owner.userToken,
    });
    const sources = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, {
      token: owner.userToken,
    });
    assert.deepEqual(data, {
      dashboard: { id, data: shown.body.data, source: sources.body.data.projects[0] },
    });
    assert.ok(!html.includes(cookie.split('=')[1]!) && !html.includes(owner.userToken), 'no credential');
    const gz = await rawGet(`${server.url}/d/${id}`, { cookie, 'accept-encoding': 'gzip' });
    assert.deepEqual(dataOf(gunzipSync(gz.body).toString('utf8')), data);

    // Without a session, with another organization's, a broken one, a bearer token, or a
    // dashboard that is not there: the plain page, which reads (and reports) on its own.
    const stranger = await createProjectWithToken(server, { name: 'Elsewhere' });
    const strangerCookie = await sessionOf(stranger.userToken);
    const plain: [string, Record<string, string>][] = [
      [`/d/${id}`, {}],
      [`/d/${id}`, { cookie: strangerCookie }],
      [`/d/${id}`, { cookie: 'svc_session=not-a-session' }],
      [`/d/${id}`, { cookie, authorization: `Bearer ${owner.userToken}` }],
      ['/d/0b8a7c52-8f0e-4f4e-9d0f-5d7c3bcb6f00', { cookie }],
      ['/d/%E0%A4%A', { cookie }],
      ['/', { cookie }],
    ];
    for (const [p, headers] of plain) {
      const res = await rawGet(server.url + p, headers);
      assert.equal(res.status, 200, p);
      assert.equal(dataOf(res.body.toString('utf8')), null, `${p} ${JSON.stringify(headers)}`);
      assert.equal(res.headers['cache-control'], 'no-cache');
    }
  });
});
