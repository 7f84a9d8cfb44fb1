// Dashboards over HTTP: tokens, the optional source header, organization isolation, visibility
// and locking, and the order of answers (404 -> 409 -> 422).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, uniqueEmail, type TestServer } from '../helpers/server';
import { createDashboard, dashboardBody, setupOrganization, type DashboardOrg } from '../helpers/dashboards';

const LOCKED = { errors: { detail: 'Dashboard is locked' } };
const NOT_FOUND = { errors: { detail: 'Not found' } };

describe('dashboards access', () => {
  let server: TestServer;
  let a: DashboardOrg;
  let b: DashboardOrg;
  const call = (method: string, path: string, body: unknown, token: string, sourceId?: string) =>
    request(server, method, path, body, sourceId ? { token, sourceId } : { token });

  before(async () => {
    server = await startTestServer();
    a = await setupOrganization(server);
    b = await setupOrganization(server);
  });
  after(() => server.stop());

  test('no token or an unknown token is 401', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/dashboards'],
      ['POST', '/api/v1/dashboards'],
      ['GET', '/api/v1/dashboards/00000000-0000-4000-8000-000000000000'],
      ['DELETE', '/api/v1/dashboards/00000000-0000-4000-8000-000000000000'],
    ]) {
      const none = await request(server, method!, path!, method === 'POST' ? dashboardBody(a) : undefined);
      assert.deepEqual(
        [none.status, none.body],
        [401, { errors: { detail: 'Bad token' } }],
        `${method} ${path}`,
      );
      const bad = await call(method!, path!, undefined, 'svc_uat_' + 'x'.repeat(43));
      assert.equal(bad.status, 401);
    }
  });

  test('a source token works on dashboards; user_id is the user who minted it', async () => {
    const d = await createDashboard(
      server,
      a.databaseToken,
      dashboardBody(a, { source: { type: 'project', id: a.projectId } }),
    );
    assert.equal(d.user_id, a.userId);
    assert.equal(d.organization_id, a.organizationId);
    const list = await call('GET', '/api/v1/dashboards', undefined, a.databaseToken);
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((x: { id: string }) => x.id === d.id));
    const viaUser = await call('GET', `/api/v1/dashboards/${d.id}`, undefined, a.userToken);
    assert.deepEqual(viaUser.body.data, d, 'the user and the source token see the same organization');
    const del = await call('DELETE', `/api/v1/dashboards/${d.id}`, undefined, a.databaseToken);
    assert.equal(del.status, 200);
  });

  test('the source header is optional; when sent it must be a UUID naming the token source', async () => {
    const path = '/api/v1/dashboards';
    assert.equal((await call('GET', path, undefined, a.databaseToken)).status, 200);
    assert.equal((await call('GET', path, undefined, a.databaseToken, a.databaseId)).status, 200);
    assert.equal(
      (await call('GET', path, undefined, a.databaseToken, a.databaseId.toUpperCase())).status,
      200,
    );
    const malformed = await call('GET', path, undefined, a.databaseToken, 'nope');
    assert.deepEqual(
      [malformed.status, malformed.body],
      [400, { errors: { detail: 'Invalid X-Service-Source-Id header' } }],
    );
    const other = await call('POST', path, dashboardBody(a), a.databaseToken, a.projectId!);
    assert.deepEqual([other.status, other.body], [403, { errors: { detail: 'Forbidden' } }]);
  });

  test('another organization never sees or changes a dashboard: list excludes it, every method is 404', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a, { name: 'private to A' }));
    for (const token of [b.userToken, b.databaseToken]) {
      const list = await call('GET', '/api/v1/dashboards', undefined, token);
      assert.equal(list.status, 200);
      assert.equal(
        list.body.data.some((x: { id: string }) => x.id === d.id),
        false,
      );
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const res = await call(
          method,
          `/api/v1/dashboards/${d.id}`,
          method.startsWith('P') ? { name: 'taken' } : undefined,
          token,
        );
        assert.deepEqual([res.status, res.body], [404, NOT_FOUND], `${method} with B's token`);
      }
    }
    const still = await call('GET', `/api/v1/dashboards/${d.id}`, undefined, a.userToken);
    assert.deepEqual(still.body.data, d, 'unchanged after B tried');
    await call('DELETE', `/api/v1/dashboards/${d.id}`, undefined, a.userToken);
  });

  test("an organization cannot build a dashboard on another organization's source or group", async () => {
    const group = await call('POST', '/api/v1/dashboard-groups', { name: 'A group' }, a.userToken);
    const res = await call(
      'POST',
      '/api/v1/dashboards',
      dashboardBody(b, { source: { type: 'database', id: a.databaseId } }),
      b.userToken,
    );
    assert.deepEqual(
      [res.status, res.body],
      [422, { errors: { 'source.id': ['must be the id of a database source of this organization'] } }],
    );
    const g = await call(
      'POST',
      '/api/v1/dashboards',
      dashboardBody(b, { group_id: group.body.data.id }),
      b.userToken,
    );
    assert.deepEqual(
      [g.status, g.body],
      [422, { errors: { group_id: ['must be the id of a dashboard group of this organization, or null'] } }],
    );
  });

  test('a user without an organization: list is [], create is 409, ids are 404', async () => {
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', {
      email: uniqueEmail(),
      password: 'long enough pw',
    });
    assert.equal(signup.status, 201, signup.text);
    const token = signup.body.data.token.value;
    const list = await call('GET', '/api/v1/dashboards', undefined, token);
    assert.deepEqual(
      [list.status, list.body],
      [200, { data: [], meta: { total: 0, limit: 100, offset: 0 } }],
    );
    const create = await call('POST', '/api/v1/dashboards', dashboardBody(a), token);
    assert.equal(create.status, 409);
    assert.match(create.body.errors.detail, /^User has no organization/);
    const d = await createDashboard(server, a.userToken, dashboardBody(a));
    assert.equal((await call('GET', `/api/v1/dashboards/${d.id}`, undefined, token)).status, 404);
    assert.equal((await call('DELETE', `/api/v1/dashboards/${d.id}`, undefined, token)).status, 404);
    const groups = await call('GET', '/api/v1/dashboard-groups', undefined, token);
    assert.deepEqual(
      [groups.status, groups.body],
      [200, { data: [], meta: { total: 0, limit: 100, offset: 0 } }],
    );
    const group = await call('POST', '/api/v1/dashboard-groups', { name: 'g' }, token);
    assert.equal(group.status, 409);
    await call('DELETE', `/api/v1/dashboards/${d.id}`, undefined, a.userToken);
  });

  test('a hidden dashboard is absent from the list and 404 on show, but PUT and DELETE reach it', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a, { visibility: false }));
    assert.equal(d.visibility, false);
    const list = await call('GET', '/api/v1/dashboards', undefined, a.userToken);
    assert.equal(
      list.body.data.some((x: { id: string }) => x.id === d.id),
      false,
    );
    const show = await call('GET', `/api/v1/dashboards/${d.id}`, undefined, a.userToken);
    assert.deepEqual([show.status, show.body], [404, NOT_FOUND]);
    const renamed = await call('PUT', `/api/v1/dashboards/${d.id}`, { name: 'still hidden' }, a.userToken);
    assert.deepEqual([renamed.status, renamed.body.data.visibility], [200, false]);
    const back = await call('PUT', `/api/v1/dashboards/${d.id}`, { visibility: true }, a.userToken);
    assert.equal(back.status, 200);
    const shown = await call('GET', `/api/v1/dashboards/${d.id}`, undefined, a.userToken);
    assert.deepEqual([shown.status, shown.body.data.name], [200, 'still hidden']);
    await call('PUT', `/api/v1/dashboards/${d.id}`, { visibility: false }, a.userToken);
    const del = await call('DELETE', `/api/v1/dashboards/${d.id}`, undefined, a.userToken);
    assert.deepEqual([del.status, del.body.data.visibility], [200, false]);
  });

  test('a locked dashboard refuses changes and deletion with 409 until a PUT sets locked: false', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a, { locked: true }));
    assert.equal(d.locked, true);
    const path = `/api/v1/dashboards/${d.id}`;
    for (const body of [
      { name: 'x' },
      {},
      { locked: true },
      { locked: 'false' },
      { dashboard: { name: 'x' } },
    ]) {
      const res = await call('PUT', path, body, a.userToken);
      assert.deepEqual([res.status, res.body], [409, LOCKED], JSON.stringify(body));
    }
    const del = await call('DELETE', path, undefined, a.userToken);
    assert.deepEqual([del.status, del.body], [409, LOCKED]);
    const shown = await call('GET', path, undefined, a.userToken);
    assert.deepEqual(shown.body.data, d, 'nothing changed');
    const unlocked = await call('PUT', path, { locked: false, name: 'Unlocked and renamed' }, a.userToken);
    assert.equal(unlocked.status, 200, unlocked.text);
    assert.deepEqual([unlocked.body.data.locked, unlocked.body.data.name], [false, 'Unlocked and renamed']);
    const relock = await call('PUT', path, { locked: true }, a.userToken);
    assert.deepEqual(
      [relock.status, relock.body.data.locked],
      [200, true],
      'locking is a change an unlocked dashboard accepts',
    );
    const wrapped = await call('PUT', path, { dashboard: { locked: false } }, a.userToken);
    assert.equal(wrapped.status, 200, 'unlocking under `dashboard` works too');
    assert.equal((await call('DELETE', path, undefined, a.userToken)).status, 200);
  });

  test('order of answers: 404 before 409, 409 before 422; an invalid unlocking PUT changes nothing', async () => {
    const d = await createDashboard(server, a.userToken, dashboardBody(a, { locked: true }));
    const path = `/api/v1/dashboards/${d.id}`;
    const foreign = await call('PUT', path, { name: '' }, b.userToken);
    assert.deepEqual(
      [foreign.status, foreign.body],
      [404, NOT_FOUND],
      'another organization: 404 even though locked and invalid',
    );
    const invalidLocked = await call('PUT', path, { name: '' }, a.userToken);
    assert.deepEqual([invalidLocked.status, invalidLocked.body], [409, LOCKED]);
    const invalidUnlock = await call('PUT', path, { locked: false, name: '' }, a.userToken);
    assert.deepEqual(
      [invalidUnlock.status, invalidUnlock.body],
      [422, { errors: { name: ['must not be blank'] } }],
    );
    const still = await call('GET', path, undefined, a.userToken);
    assert.deepEqual(still.body.data, d, 'still locked, nothing applied');
    await call('PUT', path, { locked: false }, a.userToken);
    await call('DELETE', path, undefined, a.userToken);
  });
});
