// Dashboard document limits and the paged list (SPEC 6). Issue 9: a payload or segments nested
// 5,000+ levels deep answered 500 (RangeError in JSON.stringify) on POST and PUT, and 560 dashboards
// of ~1 MB made GET /dashboards answer 500 after RSS reached 1.6 GB.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { createDashboard, dashboardBody, setupOrganization, type DashboardOrg } from '../helpers/dashboards';

const DEPTH = 'must be nested at most 32 levels deep';

/** `{"a":{"a":...{}}}` nested `levels` deep (`{}` is one level). */
function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = {};
  for (let i = 1; i < levels; i++) value = { a: value };
  return value;
}

/** A deep payload as JSON text, built without JSON.stringify (which would overflow on it). */
const deepText = (levels: number) => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
const deepList = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

const textWidgets = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `t${i}`, type: 'text', title: 'x', x: 0, y: i, w: 1, h: 1 }));

describe('dashboard limits', () => {
  let server: TestServer;
  let org: DashboardOrg;
  const call = (method: string, path: string, body?: unknown) =>
    request(server, method, path, body, { token: org.userToken });
  const send = (method: string, path: string, text: string) =>
    request(server, method, path, undefined, {
      token: org.userToken,
      raw: text,
      headers: { 'content-type': 'application/json' },
    });

  before(async () => {
    server = await startTestServer();
    org = await setupOrganization(server);
  });
  after(() => server.stop());

  async function assertHealthy() {
    const health = await request(server, 'GET', '/api/v1/health');
    assert.equal(health.status, 200);
  }

  test('a payload or segments nested 5,000+ levels deep is 422 on POST and PUT, never 500', async () => {
    const victim = await createDashboard(server, org.userToken, dashboardBody(org, { name: 'Victim' }));
    const base = JSON.stringify(dashboardBody(org)).slice(0, -1);
    for (const levels of [5_000, 100_000]) {
      const post = await send('POST', '/api/v1/dashboards', `${base},"payload":${deepText(levels)}}`);
      assert.deepEqual(
        [post.status, post.body],
        [422, { errors: { payload: [DEPTH] } }],
        `POST payload ${levels}`,
      );
      const segs = await send('POST', '/api/v1/dashboards', `${base},"segments":${deepList(levels)}}`);
      assert.deepEqual(
        [segs.status, segs.body],
        [422, { errors: { segments: [DEPTH] } }],
        `POST segments ${levels}`,
      );
      const put = await send(
        'PUT',
        `/api/v1/dashboards/${victim.id}`,
        `{"payload":${deepText(levels)},"segments":${deepList(levels)}}`,
      );
      assert.deepEqual(
        [put.status, put.body],
        [422, { errors: { payload: [DEPTH], segments: [DEPTH] } }],
        `PUT ${levels}`,
      );
      const wrapped = await send(
        'PUT',
        `/api/v1/dashboards/${victim.id}`,
        `{"dashboard":{"payload":${deepText(levels)}}}`,
      );
      assert.equal(wrapped.status, 422, `PUT under dashboard ${levels}`);
    }
    const after = await call('GET', `/api/v1/dashboards/${victim.id}`);
    assert.deepEqual(after.body.data, victim, 'the dashboard is unchanged');
    await assertHealthy();
  });

  test('32 levels are accepted, 33 are not', async () => {
    const ok = await call('POST', '/api/v1/dashboards', dashboardBody(org, { payload: nested(32) }));
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.body.data.payload, nested(32));
    const deep = await call('POST', '/api/v1/dashboards', dashboardBody(org, { payload: nested(33) }));
    assert.deepEqual([deep.status, deep.body], [422, { errors: { payload: [DEPTH] } }]);
  });

  test('a ~1 MB dashboard (issue 9 made 560 of them) is refused with 422 on payload', async () => {
    const res = await call(
      'POST',
      '/api/v1/dashboards',
      dashboardBody(org, { payload: { grid: [], blob: 'b'.repeat(1_000_000) } }),
    );
    assert.deepEqual([res.status, Object.keys(res.body.errors)], [422, ['payload']]);
  });

  test('payload and segments together are at most 256 KiB of JSON; the error names the larger sent field', async () => {
    const big = await call(
      'POST',
      '/api/v1/dashboards',
      dashboardBody(org, { payload: { notes: 'x'.repeat(300 * 1024) } }),
    );
    assert.equal(big.status, 422);
    assert.deepEqual(Object.keys(big.body.errors), ['payload']);
    assert.match(big.body.errors.payload[0], /at most 262144 bytes/);
    const segments = [{ name: 'country', groups: [{ label: 'x'.repeat(100 * 1024), items: [] }] }];
    const together = await call(
      'POST',
      '/api/v1/dashboards',
      dashboardBody(org, { payload: { notes: 'y'.repeat(200 * 1024) }, segments }),
    );
    assert.deepEqual([together.status, Object.keys(together.body.errors)], [422, ['payload']]);
    // A PUT of segments alone is measured with the payload the dashboard keeps.
    const d = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, { payload: { notes: 'y'.repeat(200 * 1024) } }),
    );
    const put = await call('PUT', `/api/v1/dashboards/${d.id}`, { segments });
    assert.deepEqual([put.status, Object.keys(put.body.errors)], [422, ['segments']]);
    assert.deepEqual((await call('GET', `/api/v1/dashboards/${d.id}`)).body.data, d);
    const fits = await call('PUT', `/api/v1/dashboards/${d.id}`, { payload: {}, segments });
    assert.equal(fits.status, 200, fits.text);
  });

  test('at most 200 widgets in a grid, group children included', async () => {
    const ok = await call(
      'POST',
      '/api/v1/dashboards',
      dashboardBody(org, { payload: { grid: textWidgets(200) } }),
    );
    assert.equal(ok.status, 201, ok.text);
    const over = await call(
      'POST',
      '/api/v1/dashboards',
      dashboardBody(org, { payload: { grid: textWidgets(201) } }),
    );
    assert.deepEqual([over.status, Object.keys(over.body.errors)], [422, ['payload.grid']]);
    assert.match(over.body.errors['payload.grid'][0], /at most 200 widgets/);
    const group = { id: 'g', type: 'group', x: 0, y: 0, w: 12, h: 4, children: textWidgets(150) };
    const nestedOver = await call('PUT', `/api/v1/dashboards/${ok.body.data.id}`, {
      payload: { grid: [group, ...textWidgets(60).map((w) => ({ ...w, id: `o${w.id}` }))] },
    });
    assert.deepEqual([nestedOver.status, Object.keys(nestedOver.body.errors)], [422, ['payload.grid']]);
  });

  test('a megabyte of broken widgets answers a short 422 (at most 100 fields named)', async () => {
    const grid = Array.from({ length: 150 }, () => 1);
    const res = await call('POST', '/api/v1/dashboards', dashboardBody(org, { payload: { grid } }));
    assert.equal(res.status, 422);
    assert.equal(Object.keys(res.body.errors).length, 100);
  });
});

describe('the dashboards list is paged', () => {
  let server: TestServer;
  let org: DashboardOrg;
  const call = (method: string, path: string, body?: unknown) =>
    request(server, method, path, body, { token: org.userToken });

  before(async () => {
    server = await startTestServer();
    org = await setupOrganization(server);
    for (let i = 0; i < 120; i++)
      await createDashboard(server, org.userToken, dashboardBody(org, { name: `D${i}` }));
  });
  after(() => server.stop());

  test('limit defaults to 100; meta holds total, limit and offset', async () => {
    const first = await call('GET', '/api/v1/dashboards');
    assert.equal(first.status, 200);
    assert.equal(first.body.data.length, 100);
    assert.deepEqual(first.body.meta, { total: 120, limit: 100, offset: 0 });
    assert.equal(first.body.data[0].name, 'D0');
    const rest = await call('GET', '/api/v1/dashboards?limit=50&offset=100');
    assert.deepEqual(rest.body.meta, { total: 120, limit: 50, offset: 100 });
    assert.deepEqual(
      rest.body.data.map((d: { name: string }) => d.name),
      Array.from({ length: 20 }, (_, i) => `D${100 + i}`),
    );
    const past = await call('GET', '/api/v1/dashboards?offset=5000');
    assert.deepEqual([past.body.data, past.body.meta], [[], { total: 120, limit: 100, offset: 5000 }]);
    const max = await call('GET', '/api/v1/dashboards?limit=1000');
    assert.equal(max.body.data.length, 120);
  });

  test('the groups list is paged the same way', async () => {
    const other = await setupOrganization(server);
    for (let i = 0; i < 105; i++) {
      const g = await request(
        server,
        'POST',
        '/api/v1/dashboard-groups',
        { name: `G${i}` },
        { token: other.userToken },
      );
      assert.equal(g.status, 201);
    }
    const first = await request(server, 'GET', '/api/v1/dashboard-groups', undefined, {
      token: other.userToken,
    });
    assert.deepEqual([first.body.data.length, first.body.meta], [100, { total: 105, limit: 100, offset: 0 }]);
    const rest = await request(server, 'GET', '/api/v1/dashboard-groups?offset=100', undefined, {
      token: other.userToken,
    });
    assert.deepEqual(
      rest.body.data.map((g: { name: string }) => g.name),
      ['G100', 'G101', 'G102', 'G103', 'G104'],
    );
    const bad = await request(server, 'GET', '/api/v1/dashboard-groups?limit=0', undefined, {
      token: other.userToken,
    });
    assert.equal(bad.status, 400);
  });

  test('a bad limit or offset is 400 naming the parameter', async () => {
    for (const query of [
      'limit=0',
      'limit=1001',
      'limit=-1',
      'limit=abc',
      'limit=',
      'limit=1.5',
      'limit=1&limit=2',
      'limit=99999999999',
    ]) {
      const res = await call('GET', `/api/v1/dashboards?${query}`);
      assert.equal(res.status, 400, query);
      assert.match(res.body.errors.detail, /^limit /, query);
    }
    for (const query of ['offset=-1', 'offset=x', 'offset=1e3', 'offset=']) {
      const res = await call('GET', `/api/v1/dashboards?${query}`);
      assert.equal(res.status, 400, query);
      assert.match(res.body.errors.detail, /^offset /, query);
    }
  });

  test('a page of large dashboards stops early (bounded answer); paging by data.length reaches every one', async () => {
    const big = await setupOrganization(server);
    const payload = { notes: 'z'.repeat(250 * 1024) };
    for (let i = 0; i < 40; i++)
      await createDashboard(server, big.userToken, dashboardBody(big, { name: `B${i}`, payload }));
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const page = await request(server, 'GET', `/api/v1/dashboards?limit=1000&offset=${offset}`, undefined, {
        token: big.userToken,
      });
      assert.equal(page.status, 200);
      assert.ok(page.text.length < 9 * 1024 * 1024, `page of ${page.text.length} bytes`);
      assert.equal(page.body.meta.total, 40);
      if (page.body.data.length === 0) break;
      seen.push(...page.body.data.map((d: { name: string }) => d.name));
      offset += page.body.data.length;
    }
    assert.deepEqual(
      seen,
      Array.from({ length: 40 }, (_, i) => `B${i}`),
    );
  });
});
