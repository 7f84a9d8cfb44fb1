// Optimistic concurrency on dashboards and groups: a PUT naming the version it was edited from
// (body `updated_at`, or If-Match with the GET's ETag) is refused with 409 once someone else saved;
// a PUT naming no version overwrites, as the contract's clients expect, and still makes a version of
// its own (a save in the second of the version it replaces lands at the next second).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { createDashboard, dashboardBody, setupOrganization, type DashboardOrg } from '../helpers/dashboards';

describe('dashboard versions', () => {
  let server: TestServer;
  let a: DashboardOrg;
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(server, method, path, body, { token: a.userToken, headers });

  before(async () => {
    server = await startTestServer();
    a = await setupOrganization(server, { projects: false });
  });
  after(async () => {
    await server.stop();
  });

  test('a stale updated_at in the body is refused with 409 naming who changed it and when', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a));
    const loaded = (await call('GET', `/api/v1/dashboards/${d.id}`)).body.data;
    // tab 1 saves first, from the version both tabs loaded
    const first = await call('PUT', `/api/v1/dashboards/${d.id}`, {
      name: 'First',
      updated_at: loaded.updated_at,
    });
    assert.equal(first.status, 200, first.text);
    assert.notEqual(first.body.data.updated_at, loaded.updated_at, 'every save makes a new version');
    // tab 2 saves from the same, now stale version
    const second = await call('PUT', `/api/v1/dashboards/${d.id}`, {
      dashboard: { key: 'other', updated_at: loaded.updated_at },
    });
    assert.equal(second.status, 409, second.text);
    const detail = second.body.errors.detail as string;
    assert.match(detail, /changed by .+ at \d{4}-\d\d-\d\dT/);
    assert.ok(detail.includes(a.email), detail);
    assert.ok(detail.includes(first.body.data.updated_at), detail);
    const kept = (await call('GET', `/api/v1/dashboards/${d.id}`)).body.data;
    assert.equal(kept.name, 'First');
    assert.equal(kept.key, d.key, 'the refused save changed nothing');
    // a save from the current version passes
    const third = await call('PUT', `/api/v1/dashboards/${d.id}`, {
      key: 'other',
      updated_at: kept.updated_at,
    });
    assert.equal(third.status, 200, third.text);
  });

  test('a save naming no version in the same second still makes a version a stale tab cannot pass', async () => {
    const realNow = server.deps.now;
    const second = Date.UTC(2026, 2, 3, 10, 0, 0);
    server.deps.now = () => second + 100;
    try {
      const d = await createDashboard(server, a.userToken, dashboardBody(a));
      const loaded = (await call('GET', `/api/v1/dashboards/${d.id}`)).body.data;
      // An API client overwrites without a version, in the second the tab's version was made in.
      server.deps.now = () => second + 700;
      const blind = await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'Overwritten' });
      assert.equal(blind.status, 200, blind.text);
      assert.notEqual(blind.body.data.updated_at, loaded.updated_at);
      // The tab saves from the version it loaded: stale.
      const stale = await call('PUT', `/api/v1/dashboards/${d.id}`, {
        name: 'Tab',
        updated_at: loaded.updated_at,
      });
      assert.equal(stale.status, 409, stale.text);
      assert.equal((await call('GET', `/api/v1/dashboards/${d.id}`)).body.data.name, 'Overwritten');
    } finally {
      server.deps.now = realNow;
    }
  });

  test('GET sends an ETag; If-Match with a stale one is 409, with the current one 200', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a));
    const got = await call('GET', `/api/v1/dashboards/${d.id}`);
    const etag = got.headers.get('etag');
    assert.ok(etag && /^"\d+"$/.test(etag), String(etag));
    const first = await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'One' }, { 'If-Match': etag });
    assert.equal(first.status, 200, first.text);
    const next = first.headers.get('etag');
    assert.ok(next && next !== etag);
    const stale = await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'Two' }, { 'If-Match': etag });
    assert.equal(stale.status, 409, stale.text);
    assert.match(stale.body.errors.detail, /changed by/);
    const fresh = await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'Two' }, { 'If-Match': next! });
    assert.equal(fresh.status, 200, fresh.text);
  });

  test('a PUT naming no version overwrites as before', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a));
    assert.equal((await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'A' })).status, 200);
    const res = await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'B' });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.name, 'B');
  });

  test('an updated_at that is not a timestamp is a 422 field error', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a));
    const res = await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'A', updated_at: 12 });
    assert.equal(res.status, 422, res.text);
    assert.ok(res.body.errors.updated_at, res.text);
  });

  test('groups: stale updated_at and stale If-Match are 409', async () => {
    const made = await call('POST', '/api/v1/dashboard-groups', { name: 'Ops' });
    assert.equal(made.status, 201, made.text);
    const g = made.body.data;
    const got = await call('GET', `/api/v1/dashboard-groups/${g.id}`);
    const etag = got.headers.get('etag')!;
    assert.ok(etag);
    const first = await call('PUT', `/api/v1/dashboard-groups/${g.id}`, {
      name: 'Ops 2',
      updated_at: g.updated_at,
    });
    assert.equal(first.status, 200, first.text);
    const byBody = await call('PUT', `/api/v1/dashboard-groups/${g.id}`, {
      name: 'Ops 3',
      updated_at: g.updated_at,
    });
    assert.equal(byBody.status, 409, byBody.text);
    const byHeader = await call(
      'PUT',
      `/api/v1/dashboard-groups/${g.id}`,
      { name: 'Ops 3' },
      { 'If-Match': etag },
    );
    assert.equal(byHeader.status, 409, byHeader.text);
    const plain = await call('PUT', `/api/v1/dashboard-groups/${g.id}`, { name: 'Ops 3' });
    assert.equal(plain.status, 200, plain.text);
  });
});
