// Dashboards over HTTP: the object, create/list/show/update/delete, defaults and PUT semantics.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type TestServer } from '../helpers/server';
import {
  DASHBOARD_FIELDS,
  createDashboard,
  dashboardBody,
  setupOrganization,
  type DashboardOrg,
} from '../helpers/dashboards';

const T0 = Date.UTC(2026, 0, 24, 12, 0, 0);
const T1 = Date.UTC(2026, 0, 25, 8, 30, 15, 999);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('dashboards CRUD', () => {
  let server: TestServer;
  let org: DashboardOrg;
  const realNow = Date.now;
  const at = (ms: number) => {
    server.deps.now = () => ms;
  };
  const call = (method: string, path: string, body?: unknown, token = org.userToken) =>
    request(server, method, path, body, { token });

  before(async () => {
    server = await startTestServer();
    org = await setupOrganization(server);
  });
  after(async () => {
    server.deps.now = realNow;
    await server.stop();
  });

  test('create answers 201 with every field of the dashboard object and the defaults', async () => {
    at(T0);
    const res = await call('POST', '/api/v1/dashboards', dashboardBody(org));
    assert.equal(res.status, 201);
    const d = res.body.data;
    assert.deepEqual(Object.keys(d), DASHBOARD_FIELDS);
    assert.match(d.id, UUID);
    assert.deepEqual(
      { ...d, id: undefined },
      {
        id: undefined,
        name: 'Signups',
        key: 'event::signup',
        visibility: true,
        locked: false,
        source_type: 'database',
        source_id: org.databaseId,
        organization_id: org.organizationId,
        user_id: org.userId,
        database_id: org.databaseId,
        group_id: null,
        position: 1,
        default_timeframe: '24h',
        default_granularity: '1m',
        payload: {},
        segments: [],
        inserted_at: '2026-01-24T12:00:00Z',
        updated_at: '2026-01-24T12:00:00Z',
      },
    );
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('a project dashboard takes the project defaults and has database_id null', async () => {
    const d = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, { source: { type: 'project', id: org.projectId } }),
    );
    assert.equal(d.source_type, 'project');
    assert.equal(d.source_id, org.projectId);
    assert.equal(d.database_id, null);
    assert.equal(d.default_timeframe, '7d');
    assert.equal(d.default_granularity, '1h');
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('create accepts the body under `dashboard` and keeps the fields sent', async () => {
    const payload = {
      grid: [
        { id: 'kpi-1', type: 'kpi', title: 'Total', path: 'count', function: 'sum', x: 0, y: 0, w: 4, h: 3 },
      ],
    };
    const res = await call('POST', '/api/v1/dashboards', {
      dashboard: dashboardBody(org, {
        name: 'Wrapped',
        default_timeframe: '7d',
        default_granularity: '1d',
        visibility: true,
        position: 40,
        payload,
      }),
    });
    assert.equal(res.status, 201, res.text);
    const d = res.body.data;
    assert.equal(d.name, 'Wrapped');
    assert.equal(d.default_timeframe, '7d');
    assert.equal(d.default_granularity, '1d');
    assert.equal(d.position, 40);
    assert.deepEqual(d.payload.grid[0], { ...payload.grid[0], subtype: 'number' });
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('show returns the stored object; an upper-case id names the same dashboard', async () => {
    const d = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, { segments: [{ name: 'country', groups: [{ items: [{ value: 'US' }] }] }] }),
    );
    const res = await call('GET', `/api/v1/dashboards/${d.id.toUpperCase()}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: d });
    assert.match(d.segments[0].id, UUID, 'ids filled by the server are stored, not regenerated');
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('list answers {data: [...]} ordered by position, then creation; position defaults to last + 1', async () => {
    // created a millisecond apart: "then creation" is inserted_at (a tie within one millisecond is
    // insertion order on SQLite, the id on PostgreSQL: docs/cluster.md)
    at(T0);
    const a = await createDashboard(server, org.userToken, dashboardBody(org, { name: 'a', position: 5 }));
    at(T0 + 1);
    const b = await createDashboard(server, org.userToken, dashboardBody(org, { name: 'b' }));
    at(T0 + 2);
    const c = await createDashboard(server, org.userToken, dashboardBody(org, { name: 'c', position: 5 }));
    at(T0 + 3);
    const hidden = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, { name: 'h', visibility: false, position: 9 }),
    );
    at(T0 + 4);
    const e = await createDashboard(server, org.userToken, dashboardBody(org, { name: 'e' }));
    assert.equal(b.position, 6);
    assert.equal(e.position, 10, 'hidden dashboards count for last + 1');
    const res = await call('GET', '/api/v1/dashboards');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.map((d: { name: string }) => d.name),
      ['a', 'c', 'b', 'e'],
    );
    assert.deepEqual(res.body.data[0], a);
    for (const d of [a, b, c, hidden, e]) await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('PUT changes only the fields sent, replaces payload and segments whole, and moves updated_at', async () => {
    at(T0);
    const d = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, {
        payload: { theme: 'dark', grid: [{ id: 'a', type: 'text' }] },
        segments: [{ name: 'one', type: 'text' }],
      }),
    );
    at(T1);
    const res = await call('PUT', `/api/v1/dashboards/${d.id}`, {
      name: 'Renamed',
      payload: { grid: [{ id: 'b', type: 'table', paths: ['count'] }] },
      segments: [],
      unknown_field: 'ignored',
    });
    assert.equal(res.status, 200, res.text);
    const u: Record<string, unknown> = res.body.data;
    assert.equal(u.inserted_at, '2026-01-24T12:00:00Z');
    assert.deepEqual(u, {
      ...d,
      name: 'Renamed',
      payload: { grid: [{ id: 'b', type: 'table', title: '', x: 0, y: 0, w: 3, h: 2, paths: ['count'] }] },
      segments: [],
      updated_at: '2026-01-25T08:30:15Z',
    });
    const shown = await call('GET', `/api/v1/dashboards/${d.id}`);
    assert.deepEqual(shown.body.data, u, 'the change is stored');
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('PUT under `dashboard`; PATCH behaves the same', async () => {
    const d = await createDashboard(server, org.userToken, dashboardBody(org));
    const put = await call('PUT', `/api/v1/dashboards/${d.id}`, {
      dashboard: { key: 'event::login', default_timeframe: '30d' },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.data.key, 'event::login');
    assert.equal(put.body.data.default_timeframe, '30d');
    assert.equal(put.body.data.name, d.name);
    const patch = await call('PATCH', `/api/v1/dashboards/${d.id}`, { position: 77 });
    assert.equal(patch.status, 200, patch.text);
    assert.equal(patch.body.data.position, 77);
    assert.equal(patch.body.data.key, 'event::login');
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  // updated_at is no longer ignored: it names the version a change was made from
  // (dashboards-versions.test.ts), so a stale one is a 409.
  test('id, organization_id, user_id and inserted_at in a PUT body are ignored (200)', async () => {
    at(T0);
    const d = await createDashboard(server, org.userToken, dashboardBody(org));
    at(T1);
    const res = await call('PUT', `/api/v1/dashboards/${d.id}`, {
      id: '00000000-0000-4000-8000-000000000000',
      organization_id: '00000000-0000-4000-8000-000000000001',
      user_id: '00000000-0000-4000-8000-000000000002',
      inserted_at: '2000-01-01T00:00:00Z',
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { ...d, updated_at: '2026-01-25T08:30:15Z' });
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('a dashboard read with GET can be sent back with PUT unchanged', async () => {
    at(T0);
    const d = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, {
        payload: {
          grid: [
            { id: 'g', type: 'group', children: [{ id: 'k', type: 'kpi', path: 'count', function: 'max' }] },
          ],
        },
        segments: [
          {
            name: 'country',
            default_value: 'US',
            groups: [{ label: 'All', items: [{ value: 'US' }, { value: 'DE' }] }],
          },
        ],
      }),
    );
    const res = await call('PUT', `/api/v1/dashboards/${d.id}`, d);
    assert.equal(res.status, 200, res.text);
    // saved in the second it was made in: its version is the next second
    assert.deepEqual(res.body.data, { ...d, updated_at: '2026-01-24T12:00:01Z' });
    const p = await createDashboard(
      server,
      org.userToken,
      dashboardBody(org, { source: { type: 'project', id: org.projectId } }),
    );
    const echoed = await call('PUT', `/api/v1/dashboards/${p.id}`, { dashboard: p });
    assert.equal(echoed.status, 200, echoed.text);
    assert.deepEqual(
      echoed.body.data,
      { ...p, updated_at: '2026-01-24T12:00:01Z' },
      'database_id null in the body is accepted',
    );
    for (const x of [d, p]) await call('DELETE', `/api/v1/dashboards/${x.id}`);
  });

  test('PUT can move a dashboard to another source; the granularity follows when the new source lacks it', async () => {
    const d = await createDashboard(server, org.userToken, dashboardBody(org, { default_granularity: '1m' }));
    const res = await call('PUT', `/api/v1/dashboards/${d.id}`, {
      source_type: 'project',
      source_id: org.projectId,
    });
    assert.equal(res.status, 200, res.text);
    const u = res.body.data;
    assert.deepEqual([u.source_type, u.source_id, u.database_id], ['project', org.projectId, null]);
    assert.equal(u.default_granularity, '1h', '1m is not a granularity of the project: its default is taken');
    assert.equal(u.default_timeframe, d.default_timeframe, 'the timeframe is kept');
    const back = await call('PUT', `/api/v1/dashboards/${d.id}`, { database_id: org.databaseId });
    assert.deepEqual([back.body.data.source_type, back.body.data.database_id], ['database', org.databaseId]);
    assert.equal(back.body.data.default_granularity, '1h', '1h is allowed by the database: kept');
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });

  test('DELETE returns the deleted dashboard, which is then gone', async () => {
    const d = await createDashboard(server, org.userToken, dashboardBody(org));
    const res = await call('DELETE', `/api/v1/dashboards/${d.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { data: d });
    assert.equal((await call('GET', `/api/v1/dashboards/${d.id}`)).status, 404);
    assert.equal((await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'x' })).status, 404);
    const again = await call('DELETE', `/api/v1/dashboards/${d.id}`);
    assert.deepEqual([again.status, again.body], [404, { errors: { detail: 'Not found' } }]);
    const list = await call('GET', '/api/v1/dashboards');
    assert.equal(
      list.body.data.some((x: { id: string }) => x.id === d.id),
      false,
    );
  });

  test('unknown and malformed ids are 404', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '1']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const res = await call(
          method,
          `/api/v1/dashboards/${id}`,
          method === 'PUT' ? { name: 'x' } : undefined,
        );
        assert.deepEqual(
          [res.status, res.body],
          [404, { errors: { detail: 'Not found' } }],
          `${method} ${id}`,
        );
      }
    }
  });

  test('a body that is not a JSON object is 400; a non-object `dashboard` envelope is 422', async () => {
    const d = await createDashboard(server, org.userToken, dashboardBody(org));
    for (const [method, path] of [
      ['POST', '/api/v1/dashboards'],
      ['PUT', `/api/v1/dashboards/${d.id}`],
    ] as const) {
      const arr = await call(method, path, [1, 2]);
      assert.equal(arr.status, 400, `${method} array`);
      const empty = await request(server, method, path, undefined, { token: org.userToken });
      assert.equal(empty.status, 400, `${method} empty`);
      const envelope = await call(method, path, { dashboard: 'x' });
      assert.deepEqual(
        [envelope.status, envelope.body],
        [422, { errors: { dashboard: ['must be an object'] } }],
      );
    }
    await call('DELETE', `/api/v1/dashboards/${d.id}`);
  });
});
