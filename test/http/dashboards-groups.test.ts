// Dashboard groups over HTTP: CRUD, ordering, isolation, validation, and ungrouping on delete.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { createDashboard, dashboardBody, setupOrganization, type DashboardOrg } from '../helpers/dashboards';

const T0 = Date.UTC(2026, 0, 24, 10, 0, 0);
const T1 = Date.UTC(2026, 0, 24, 11, 0, 0);
const NOT_FOUND = { errors: { detail: 'Not found' } };

describe('dashboard groups', () => {
  let server: TestServer;
  let a: DashboardOrg;
  let b: DashboardOrg;
  const realNow = Date.now;
  const call = (method: string, path: string, body?: unknown, token = a.userToken) =>
    request(server, method, path, body, { token });
  const create = async (body: Record<string, unknown>, token = a.userToken) => {
    const res = await call('POST', '/api/v1/dashboard-groups', body, token);
    assert.equal(res.status, 201, res.text);
    return res.body.data as Record<string, any>;
  };

  before(async () => {
    server = await startTestServer();
    a = await setupOrganization(server, { projects: false });
    b = await setupOrganization(server, { projects: false });
  });
  after(async () => {
    server.deps.now = realNow;
    await server.stop();
  });

  test('create answers 201 {data: group} with every field', async () => {
    server.deps.now = () => T0;
    const res = await call('POST', '/api/v1/dashboard-groups', { name: 'Operations' });
    assert.equal(res.status, 201);
    const g = res.body.data;
    assert.deepEqual(Object.keys(g), [
      'id',
      'name',
      'position',
      'organization_id',
      'inserted_at',
      'updated_at',
    ]);
    assert.deepEqual(
      { ...g, id: 'x' },
      {
        id: 'x',
        name: 'Operations',
        position: 1,
        organization_id: a.organizationId,
        inserted_at: '2026-01-24T10:00:00Z',
        updated_at: '2026-01-24T10:00:00Z',
      },
    );
    server.deps.now = realNow;
    await call('DELETE', `/api/v1/dashboard-groups/${g.id}`);
  });

  test('list is ordered by position then creation; position defaults to last + 1', async () => {
    const x = await create({ name: 'x', position: 3 });
    const y = await create({ dashboard_group: { name: 'y' } });
    const z = await create({ name: 'z', position: 3 });
    assert.equal(y.position, 4);
    const list = await call('GET', '/api/v1/dashboard-groups');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data, [x, z, y]);
    const shown = await call('GET', `/api/v1/dashboard-groups/${y.id.toUpperCase()}`);
    assert.deepEqual(shown.body, { data: y });
    for (const g of [x, y, z]) await call('DELETE', `/api/v1/dashboard-groups/${g.id}`);
  });

  test('PUT changes the fields sent (top level or under dashboard_group) and updated_at', async () => {
    server.deps.now = () => T0;
    const g = await create({ name: 'old' });
    server.deps.now = () => T1;
    const renamed = await call('PUT', `/api/v1/dashboard-groups/${g.id}`, {
      name: 'new',
      id: 'ignored',
      organization_id: b.organizationId,
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.deepEqual(renamed.body.data, { ...g, name: 'new', updated_at: '2026-01-24T11:00:00Z' });
    const moved = await call('PUT', `/api/v1/dashboard-groups/${g.id}`, { dashboard_group: { position: 9 } });
    // A second save in the same second gets a version of its own: the next second.
    assert.deepEqual(moved.body.data, { ...g, name: 'new', position: 9, updated_at: '2026-01-24T11:00:01Z' });
    server.deps.now = realNow;
    await call('DELETE', `/api/v1/dashboard-groups/${g.id}`);
  });

  test('delete returns the deleted group and ungroups its dashboards (locked and hidden ones too)', async () => {
    const g = await create({ name: 'to delete' });
    const d1 = await createDashboard(server, a.userToken, dashboardBody(a, { group_id: g.id }));
    const d2 = await createDashboard(
      server,
      a.userToken,
      dashboardBody(a, { group_id: g.id, locked: true, visibility: false }),
    );
    assert.equal(d1.group_id, g.id);
    const res = await call('DELETE', `/api/v1/dashboard-groups/${g.id}`);
    assert.deepEqual([res.status, res.body], [200, { data: g }]);
    assert.equal((await call('GET', `/api/v1/dashboard-groups/${g.id}`)).status, 404);
    const shown = await call('GET', `/api/v1/dashboards/${d1.id}`);
    assert.equal(shown.body.data.group_id, null);
    const unhide = await call('PUT', `/api/v1/dashboards/${d2.id}`, { locked: false, visibility: true });
    assert.equal(unhide.body.data.group_id, null);
    for (const d of [d1, d2]) await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test("another organization's group is 404 for every method and absent from its list", async () => {
    const g = await create({ name: 'A only' });
    for (const token of [b.userToken, b.databaseToken]) {
      const list = await call('GET', '/api/v1/dashboard-groups', undefined, token);
      assert.equal(
        list.body.data.some((x: { id: string }) => x.id === g.id),
        false,
      );
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await call(
          method,
          `/api/v1/dashboard-groups/${g.id}`,
          method === 'PUT' ? { name: 'mine' } : undefined,
          token,
        );
        assert.deepEqual([res.status, res.body], [404, NOT_FOUND], method);
      }
    }
    assert.deepEqual((await call('GET', `/api/v1/dashboard-groups/${g.id}`)).body.data, g);
    assert.equal((await call('GET', '/api/v1/dashboard-groups/not-a-uuid')).status, 404);
    await call('DELETE', `/api/v1/dashboard-groups/${g.id}`);
  });

  test('a source token manages groups of its organization', async () => {
    const g = await create({ name: 'via source token' }, a.databaseToken);
    assert.equal(g.organization_id, a.organizationId);
    assert.equal(
      (await call('DELETE', `/api/v1/dashboard-groups/${g.id}`, undefined, a.databaseToken)).status,
      200,
    );
  });

  test('invalid bodies are 422 naming the field; not an object is 400; no token is 401', async () => {
    const g = await create({ name: 'valid' });
    const cases: Array<[Record<string, unknown>, Record<string, string[]>]> = [
      [{}, { name: ['is required'] }],
      [{ name: '' }, { name: ['must not be blank'] }],
      [{ name: 'n'.repeat(256) }, { name: ['must be at most 255 characters'] }],
      [{ name: 3 }, { name: ['must be a string'] }],
      [{ name: 'ok', position: -2 }, { position: ['must be 0 or more'] }],
      [{ name: 'ok', position: 'first' }, { position: ['must be an integer'] }],
      [{ dashboard_group: [] }, { dashboard_group: ['must be an object'] }],
    ];
    for (const [body, errors] of cases) {
      const res = await call('POST', '/api/v1/dashboard-groups', body);
      assert.deepEqual([res.status, res.body], [422, { errors }], JSON.stringify(body).slice(0, 60));
    }
    const put = await call('PUT', `/api/v1/dashboard-groups/${g.id}`, { name: ' ' });
    assert.deepEqual([put.status, put.body], [422, { errors: { name: ['must not be blank'] } }]);
    assert.equal((await call('POST', '/api/v1/dashboard-groups', ['x'])).status, 400);
    assert.equal((await request(server, 'GET', '/api/v1/dashboard-groups')).status, 401);
    await call('DELETE', `/api/v1/dashboard-groups/${g.id}`);
  });
});
