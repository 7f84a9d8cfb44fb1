// Read-only share links of a dashboard (docs/interface.md): created, listed and revoked by the
// organization's users; a link reads that dashboard and its key's series only, without signing in.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';

const RANGE = 'from=2026-01-24T10:00:00Z&to=2026-01-24T11:00:00Z&granularity=1h';

describe('dashboard share links', () => {
  let server: TestServer;
  let owner: ProjectAgent;
  let dashboardId: string;
  before(async () => {
    server = await startTestServer();
    owner = await createProjectWithToken(server, { granularities: ['1h', '1d'] });
    const points = ['SK', 'CZ', 'secret'].map((c, i) => ({
      key: `shop::${c}::orders`,
      at: '2026-01-24T10:30:00Z',
      values: { count: i + 1 },
    }));
    const batch = await request(
      server,
      'POST',
      '/api/v1/metrics/batch',
      { points },
      { token: owner.sourceToken, sourceId: owner.sourceId },
    );
    assert.equal(batch.status, 201);
    const made = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      {
        name: 'Orders',
        key: 'shop::(?<country>[^:]+)::orders',
        source: { type: 'project', id: owner.sourceId },
        segments: [
          {
            name: 'country',
            type: 'select',
            default_value: 'SK',
            groups: [{ label: 'All', items: [{ value: 'SK' }, { value: 'CZ' }] }],
          },
        ],
        payload: { grid: [{ id: 'n', type: 'kpi', path: 'count', function: 'sum' }] },
      },
      { token: owner.userToken },
    );
    assert.equal(made.status, 201, made.text);
    dashboardId = made.body.data.id;
  });
  after(() => server.stop());

  const share = async () => {
    const res = await request(server, 'POST', `/api/v1/dashboards/${dashboardId}/shares`, undefined, {
      token: owner.userToken,
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data as { id: string; token: string; path: string; last5: string };
  };

  test('a link reads the dashboard and its key with the segments’ values, without signing in', async () => {
    const link = await share();
    assert.match(link.token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(link.path, `/s/${link.token}`);
    const shown = await request(server, 'GET', `/api/v1/shared/${link.token}`);
    assert.equal(shown.status, 200);
    assert.equal(shown.body.data.dashboard.name, 'Orders');
    assert.equal(shown.body.data.dashboard.payload.grid[0].id, 'n');
    assert.equal(shown.body.data.source.granularities.join(), '1h,1d');
    assert.ok(!shown.text.includes(owner.organizationId), 'no organization ids');

    const series = (q: string) => request(server, 'GET', `/api/v1/shared/${link.token}/metrics?${RANGE}${q}`);
    assert.deepEqual((await series('')).body.data.values, [{ count: 1 }, {}], 'the default segment value');
    assert.deepEqual((await series('&s.country=CZ')).body.data.values, [{ count: 2 }, {}]);
    assert.equal((await series('&s.country=secret')).status, 400, 'only the select’s items');
    assert.equal(
      (await series('&key=shop::secret::orders')).body.data.values[0].count,
      1,
      'a key parameter is ignored',
    );
    assert.equal(
      (await request(server, 'GET', `/api/v1/shared/${link.token}/metrics?s.country=SK`)).status,
      400,
      'the range is required',
    );
    const listed = await request(server, 'GET', `/api/v1/dashboards/${dashboardId}/shares`, undefined, {
      token: owner.userToken,
    });
    assert.ok(
      listed.body.data.some(
        (s: { id: string; last5: string }) => s.id === link.id && s.last5 === link.token.slice(-5),
      ),
    );
    assert.ok(!listed.text.includes(link.token), 'the value is shown once');
  });

  test('revoked, unknown and malformed links are 404; hiding the dashboard closes its links', async () => {
    const link = await share();
    assert.equal((await request(server, 'GET', '/api/v1/shared/nope')).status, 404);
    assert.equal(
      (await request(server, 'GET', `/api/v1/shared/${'A'.repeat(43)}/metrics?${RANGE}`)).status,
      404,
    );
    const hide = await request(
      server,
      'PUT',
      `/api/v1/dashboards/${dashboardId}`,
      { visibility: false },
      { token: owner.userToken },
    );
    assert.equal(hide.status, 200);
    assert.equal((await request(server, 'GET', `/api/v1/shared/${link.token}`)).status, 404);
    await request(
      server,
      'PUT',
      `/api/v1/dashboards/${dashboardId}`,
      { visibility: true },
      { token: owner.userToken },
    );
    assert.equal((await request(server, 'GET', `/api/v1/shared/${link.token}`)).status, 200);
    const revoked = await request(
      server,
      'DELETE',
      `/api/v1/dashboards/${dashboardId}/shares/${link.id}`,
      undefined,
      { token: owner.userToken },
    );
    assert.equal(revoked.status, 200);
    assert.equal((await request(server, 'GET', `/api/v1/shared/${link.token}`)).status, 404);
    assert.equal((await request(server, 'GET', `/api/v1/shared/${link.token}/metrics?${RANGE}`)).status, 404);
    const again = await request(
      server,
      'DELETE',
      `/api/v1/dashboards/${dashboardId}/shares/${link.id}`,
      undefined,
      { token: owner.userToken },
    );
    assert.equal(again.status, 404);
  });

  test('another organization gets 404; a source token 403; a link can change nothing', async () => {
    const link = await share();
    const other = await signupWithOrganization(server);
    for (const [method, path] of [
      ['GET', `/api/v1/dashboards/${dashboardId}/shares`],
      ['POST', `/api/v1/dashboards/${dashboardId}/shares`],
      ['DELETE', `/api/v1/dashboards/${dashboardId}/shares/${link.id}`],
    ] as const) {
      assert.equal(
        (await request(server, method, path, undefined, { token: other.userToken })).status,
        404,
        `${method} ${path}`,
      );
      assert.equal(
        (await request(server, method, path, undefined, { token: owner.sourceToken })).status,
        403,
      );
      assert.equal((await request(server, method, path)).status, 401);
    }
    const write = await request(server, 'PUT', `/api/v1/shared/${link.token}`, { name: 'x' });
    assert.equal(write.status, 405);
    const asBearer = await request(server, 'GET', '/api/v1/dashboards', undefined, {
      headers: { authorization: `Bearer ${link.token}` },
    });
    assert.equal(asBearer.status, 401, 'a link token is no API token');
    const deleted = await request(server, 'DELETE', `/api/v1/dashboards/${dashboardId}`, undefined, {
      token: owner.userToken,
    });
    assert.equal(deleted.status, 200);
    assert.equal(
      (await request(server, 'GET', `/api/v1/shared/${link.token}`)).status,
      404,
      'gone with its dashboard',
    );
  });
});

describe('share links keep to their key', () => {
  let server: TestServer;
  let owner: ProjectAgent;
  before(async () => {
    server = await startTestServer();
    owner = await createProjectWithToken(server, { granularities: ['1h', '1d'] });
    const points = [
      { key: 'shop::SK::orders', at: '2026-01-24T10:30:00Z', values: { count: 5 } },
      { key: 'shop::secret::orders', at: '2026-01-24T10:30:00Z', values: { count: 777 } },
      { key: 'plain', at: '2026-01-24T10:30:00Z', values: { count: 9 } },
    ];
    const batch = await request(
      server,
      'POST',
      '/api/v1/metrics/batch',
      { points },
      { token: owner.sourceToken, sourceId: owner.sourceId },
    );
    assert.equal(batch.status, 201, batch.text);
  });
  after(() => server.stop());

  /** A link to a new dashboard of `key` with the given segments; `read(q)` is its series read. */
  const linkTo = async (key: string, segments: unknown[]) => {
    const made = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      {
        name: `Key ${key}`,
        key,
        source: { type: 'project', id: owner.sourceId },
        segments,
        payload: { grid: [] },
      },
      { token: owner.userToken },
    );
    assert.equal(made.status, 201, made.text);
    const link = await request(server, 'POST', `/api/v1/dashboards/${made.body.data.id}/shares`, undefined, {
      token: owner.userToken,
    });
    assert.equal(link.status, 201, link.text);
    return (q: string) =>
      request(server, 'GET', `/api/v1/shared/${link.body.data.token}/metrics?${RANGE}${q}`);
  };

  test("a text segment's value must match the whole of its group's pattern", async () => {
    const read = await linkTo('shop::(?<country>[A-Z]{2})::orders', [{ name: 'country', type: 'text' }]);
    const sk = await read('&s.country=SK');
    assert.equal(sk.status, 200, `${sk.text}`);
    assert.equal(sk.body.data.values[0].count, 5);
    const secret = await read('&s.country=secret');
    assert.equal(secret.status, 400, `the pattern [A-Z]{2} refuses "secret": ${secret.text}`);
    assert.ok(!secret.text.includes('777'));
    assert.equal((await read('&s.country=SKX')).status, 400, 'anchored at the end');
    assert.equal((await read('&s.country=xSK')).status, 400, 'anchored at the start');
    assert.equal((await read('&s.country=sk')).status, 400);
  });

  test('an unnamed group takes its pattern too; a pattern that backtracks without end is refused in time', async () => {
    const read = await linkTo('shop::([A-Z]{2})::orders', [{ name: 'c', type: 'text' }]);
    assert.equal((await read('&s.c=SK')).body.data.values[0].count, 5);
    assert.equal((await read('&s.c=secret')).status, 400);
    const slow = await linkTo('(?<k>(a+)+)', [{ name: 'k', type: 'text' }]);
    const started = Date.now();
    const res = await slow(`&s.k=${'a'.repeat(40)}!`);
    assert.equal(res.status, 400);
    assert.ok(Date.now() - started < 5000, 'the server stopped the match');
  });

  test('the system key is out of reach however it is spelled', async () => {
    const read = await linkTo('(?<k>.+)', [{ name: 'k', type: 'text' }]);
    assert.equal((await read('&s.k=plain')).body.data.values[0].count, 9, 'an ordinary key reads');
    const tricks = [
      '__system__key__',
      '__system__key__ ',
      ' __system__key__',
      '__system__key__%09',
      '__SYSTEM__KEY__',
      '__System__Key__',
      '%EF%BC%BF%EF%BC%BFsystem%EF%BC%BF%EF%BC%BFkey%EF%BC%BF%EF%BC%BF', // fullwidth low lines (NFKC: _)
      '%EF%BD%93ystem', // not the key: a fullwidth s alone (checked below as part of one)
      '__%EF%BD%93ystem__key__', // fullwidth s
      '__sys%E2%80%8Btem__key__', // a zero-width space inside
      '%255F%255Fsystem__key__', // %-encoded once more than the query string undoes
      '%25255F%25255Fsystem__key__', // twice more
    ];
    for (const trick of tricks) {
      const res = await read(`&s.k=${trick}`);
      if (trick === '%EF%BD%93ystem') {
        assert.equal(res.status, 200, trick);
        continue;
      }
      assert.equal(res.status, 404, `${trick}: ${res.status} ${res.text}`);
    }
    assert.equal(
      (await read('&s.k=shop::__system__key__')).status,
      400,
      'a value holding :: is refused before it is looked at',
    );
    const plainSystem = await linkTo('__system__key__ ', []);
    assert.equal(
      (await plainSystem('')).status,
      404,
      'a dashboard key that spells it is closed to links as well',
    );
    const select = await linkTo('shop::(?<c>[^:]+)', [
      { name: 'c', type: 'select', groups: [{ items: [{ value: '__SYSTEM__key__' }] }] },
    ]);
    assert.equal((await select('&s.c=__SYSTEM__key__')).status, 404, 'an item value that spells it as well');
  });
});
