// Source-token flags on dashboards and groups (SPEC 3): `read` for GET, `write` for every change,
// a token with neither does nothing. Issue 9: read-only tokens could create, change and delete every
// dashboard and group, write-only tokens could read them.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { createDashboard, dashboardBody, setupOrganization, type DashboardOrg } from '../helpers/dashboards';

const FORBIDDEN = { errors: { detail: 'Forbidden' } };

describe('dashboards honour source-token flags', () => {
  let server: TestServer;
  let org: DashboardOrg;
  const tokens: Record<'readOnly' | 'writeOnly' | 'neither', string> = {
    readOnly: '',
    writeOnly: '',
    neither: '',
  };

  async function mint(read: boolean, write: boolean): Promise<string> {
    const body = { source_type: 'database', source_id: org.databaseId, read, write };
    const res = await request(server, 'POST', '/api/v1/bootstrap/source-tokens', body, {
      token: org.userToken,
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data.token.value;
  }

  before(async () => {
    server = await startTestServer();
    org = await setupOrganization(server);
    tokens.readOnly = await mint(true, false);
    tokens.writeOnly = await mint(false, true);
    tokens.neither = await mint(false, false);
  });
  after(() => server.stop());

  async function victims() {
    const dashboard = await createDashboard(server, org.userToken, dashboardBody(org, { name: 'Victim' }));
    const g = await request(
      server,
      'POST',
      '/api/v1/dashboard-groups',
      { name: 'Victim group' },
      { token: org.userToken },
    );
    assert.equal(g.status, 201, g.text);
    return { dashboard, group: g.body.data };
  }

  /** Every changing request on dashboards and groups, aimed at the victims. */
  function changes(dashboardId: string, groupId: string): Array<[string, string, unknown]> {
    return [
      ['POST', '/api/v1/dashboards', dashboardBody(org, { name: 'Intruder' })],
      ['PUT', `/api/v1/dashboards/${dashboardId}`, { name: 'Renamed' }],
      ['PATCH', `/api/v1/dashboards/${dashboardId}`, { name: 'Renamed' }],
      ['DELETE', `/api/v1/dashboards/${dashboardId}`, undefined],
      ['POST', '/api/v1/dashboard-groups', { name: 'Intruder' }],
      ['PUT', `/api/v1/dashboard-groups/${groupId}`, { name: 'Renamed' }],
      ['PATCH', `/api/v1/dashboard-groups/${groupId}`, { name: 'Renamed' }],
      ['DELETE', `/api/v1/dashboard-groups/${groupId}`, undefined],
    ];
  }

  const reads = (dashboardId: string, groupId: string): string[] => [
    '/api/v1/dashboards',
    `/api/v1/dashboards/${dashboardId}`,
    '/api/v1/dashboard-groups',
    `/api/v1/dashboard-groups/${groupId}`,
  ];

  async function assertUnchanged(dashboard: Record<string, unknown>, group: Record<string, unknown>) {
    const d = await request(server, 'GET', `/api/v1/dashboards/${dashboard.id}`, undefined, {
      token: org.userToken,
    });
    assert.deepEqual([d.status, d.body.data], [200, dashboard], 'the dashboard is intact');
    const g = await request(server, 'GET', `/api/v1/dashboard-groups/${group.id}`, undefined, {
      token: org.userToken,
    });
    assert.deepEqual([g.status, g.body.data], [200, group], 'the group is intact');
    const list = await request(server, 'GET', '/api/v1/dashboards', undefined, { token: org.userToken });
    assert.equal(
      list.body.data.some((x: { name: string }) => x.name === 'Intruder'),
      false,
      'nothing was created',
    );
  }

  test('a read-only token reads dashboards and groups but every change is 403 and changes nothing', async () => {
    const { dashboard, group } = await victims();
    for (const path of reads(dashboard.id, group.id)) {
      const res = await request(server, 'GET', path, undefined, { token: tokens.readOnly });
      assert.equal(res.status, 200, `GET ${path}: ${res.text}`);
    }
    for (const [method, path, body] of changes(dashboard.id, group.id)) {
      const res = await request(server, method, path, body, { token: tokens.readOnly });
      assert.deepEqual([res.status, res.body], [403, FORBIDDEN], `${method} ${path}`);
    }
    await assertUnchanged(dashboard, group);
  });

  test('a write-only token changes dashboards and groups but cannot read them', async () => {
    const { dashboard, group } = await victims();
    for (const path of reads(dashboard.id, group.id)) {
      const res = await request(server, 'GET', path, undefined, { token: tokens.writeOnly });
      assert.deepEqual([res.status, res.body], [403, FORBIDDEN], `GET ${path}`);
    }
    const created = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      dashboardBody(org, { name: 'By writer' }),
      { token: tokens.writeOnly },
    );
    assert.equal(created.status, 201, created.text);
    const renamed = await request(
      server,
      'PUT',
      `/api/v1/dashboards/${dashboard.id}`,
      { name: 'W' },
      { token: tokens.writeOnly },
    );
    assert.equal(renamed.status, 200, renamed.text);
    const g = await request(
      server,
      'PATCH',
      `/api/v1/dashboard-groups/${group.id}`,
      { name: 'W' },
      { token: tokens.writeOnly },
    );
    assert.equal(g.status, 200, g.text);
    for (const path of [
      `/api/v1/dashboards/${dashboard.id}`,
      `/api/v1/dashboards/${created.body.data.id}`,
      `/api/v1/dashboard-groups/${group.id}`,
    ]) {
      assert.equal(
        (await request(server, 'DELETE', path, undefined, { token: tokens.writeOnly })).status,
        200,
        path,
      );
    }
  });

  test('a token with neither flag can do nothing: every read and change is 403', async () => {
    const { dashboard, group } = await victims();
    for (const path of reads(dashboard.id, group.id)) {
      const res = await request(server, 'GET', path, undefined, { token: tokens.neither });
      assert.deepEqual([res.status, res.body], [403, FORBIDDEN], `GET ${path}`);
    }
    for (const [method, path, body] of changes(dashboard.id, group.id)) {
      const res = await request(server, method, path, body, { token: tokens.neither });
      assert.deepEqual([res.status, res.body], [403, FORBIDDEN], `${method} ${path}`);
    }
    await assertUnchanged(dashboard, group);
  });

  test('a user API token keeps full access (flags belong to source tokens)', async () => {
    const { dashboard } = await victims();
    const res = await request(server, 'DELETE', `/api/v1/dashboards/${dashboard.id}`, undefined, {
      token: org.userToken,
    });
    assert.equal(res.status, 200);
  });
});
