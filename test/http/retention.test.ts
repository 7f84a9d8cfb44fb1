// Retention (SPEC section 11): expire_after and the per-granularity retention map, enforced by the
// background sweep. The test owns the server's clock and runs the sweep itself.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  type TestServer,
  clusterMode,
} from '../helpers/server';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-03-10T10:00:00Z');

describe('retention', () => {
  let server: TestServer;
  let clock = T0;

  before(async () => {
    server = await startTestServer({}, { now: () => clock, sweepTimer: false });
  });
  after(() => server.stop());

  const write = (p: { sourceToken: string; sourceId: string }, at: number, count: number) =>
    request(
      server,
      'POST',
      '/api/v1/metrics',
      { key: 'hits', at: new Date(at).toISOString(), values: { count } },
      { token: p.sourceToken, sourceId: p.sourceId },
    );

  async function series(
    p: { sourceToken: string; sourceId: string },
    granularity: string,
    from: number,
    to: number,
    key = 'hits',
  ) {
    const qs = `key=${key}&granularity=${granularity}&from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}`;
    const res = await request(server, 'GET', `/api/v1/metrics?${qs}`, undefined, {
      token: p.sourceToken,
      sourceId: p.sourceId,
    });
    assert.equal(res.status, 200, res.text);
    return res.body.data.values as Array<{ count?: number }>;
  }

  test('expire_after and retention delete expired buckets per granularity; late writes start afresh', async () => {
    const p = await createProjectWithToken(server, {
      granularities: ['1m', '1h', '1d'],
      expire_after: 3600,
      retention: { '1m': '10m', '1d': '30d' },
    });
    const keep = await createProjectWithToken(server, { granularities: ['1m', '1h', '1d'] });
    for (const project of [p, keep]) {
      assert.equal((await write(project, T0, 2)).status, 201);
      assert.equal((await write(project, T0 + 30 * 60_000, 3)).status, 201);
    }

    clock = T0 + 35 * 60_000; // the 10:00 minute is 35 min old: past the 1m retention of 10m
    assert.ok((await server.deps.ops.sweeper.sweep()) >= 1, JSON.stringify(server.deps.ops.sweeper.stats));
    assert.deepEqual(await series(p, '1m', T0, T0), [{}]);
    assert.deepEqual(await series(p, '1m', T0 + 30 * 60_000, T0 + 30 * 60_000), [{ count: 3 }]);
    assert.deepEqual(await series(p, '1h', T0, T0), [{ count: 5 }]); // 35 min old, expire_after is 1 h

    clock = T0 + 2 * HOUR + 1000; // the 10:00 hour is past expire_after; the day keeps its 30 days
    await server.deps.ops.sweeper.sweep();
    assert.deepEqual(await series(p, '1h', T0, T0), [{}]);
    // The system key's bucket goes too: its count and its per-key counts (kept in their own table).
    assert.deepEqual(await series(p, '1h', T0, T0, '__system__key__'), [{}]);
    assert.deepEqual(await series(keep, '1h', T0, T0, '__system__key__'), [{ count: 2, keys: { hits: 2 } }]);
    assert.deepEqual(await series(p, '1m', T0, T0 + 30 * 60_000).then((v) => v.filter((b) => b.count)), []);
    assert.deepEqual(await series(p, '1d', T0, T0), [{ count: 5 }]);
    // A project without rules keeps everything.
    assert.deepEqual(await series(keep, '1h', T0, T0), [{ count: 5 }]);
    assert.deepEqual(await series(keep, '1m', T0, T0), [{ count: 2 }]);

    // A late point into an expired bucket counts from zero (no cached copy of the deleted bucket).
    assert.equal((await write(p, T0, 7)).status, 201);
    assert.deepEqual(await series(p, '1h', T0, T0), [{ count: 7 }]);
    assert.deepEqual(await series(p, '1d', T0, T0), [{ count: 12 }]);

    clock = T0 + 31 * 24 * HOUR;
    await server.deps.ops.sweeper.sweep();
    assert.deepEqual(await series(p, '1d', T0, T0), [{}]);
    assert.deepEqual(await series(keep, '1d', T0, T0), [{ count: 5 }]);
    const stats = server.deps.ops.sweeper.stats;
    // (its transactions are the embedded store's: a cluster's deletes are counted in deletedBuckets only)
    assert.ok(stats.deletedBuckets >= 5 && (clusterMode || stats.transactions >= 1), JSON.stringify(stats));
  });

  test('retention is validated on create (422 naming retention) and shown in responses', async () => {
    const agent = await signupWithOrganization(server);
    const create = (body: Record<string, unknown>) =>
      request(
        server,
        'POST',
        '/api/v1/bootstrap/projects',
        { name: 'R', ...body },
        { token: agent.userToken },
      );
    for (const retention of [[], 'x', 7, { '5m': '1d' }, { '1m': 'forever' }, { '1m': 7 }, { '1m': '0d' }]) {
      const res = await create({ retention });
      assert.equal(res.status, 422, JSON.stringify(retention));
      assert.deepEqual(Object.keys(res.body.errors), ['retention'], res.text);
    }
    const ok = await create({ granularities: '1m,1h', retention: { '1m': ' 7d ' }, expire_after: 86400 });
    assert.equal(ok.status, 201, ok.text);
    assert.deepEqual(ok.body.data.source.retention, { '1m': '7d' });
    assert.equal(ok.body.data.source.expire_after, 86400);
    const list = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, {
      token: agent.userToken,
    });
    assert.deepEqual(list.body.data.projects[0].retention, { '1m': '7d' });
  });

  test('PUT /bootstrap/projects/:id updates retention, expire_after, name and defaults', async () => {
    const p = await createProjectWithToken(server, { granularities: ['1m', '1h'] });
    const put = (body: unknown, id = p.sourceId, token = p.userToken) =>
      request(server, 'PUT', `/api/v1/bootstrap/projects/${id}`, body, { token });
    const res = await put({
      retention: { '1m': '2d' },
      expire_after: 864000,
      name: 'Renamed',
      default_granularity: '1h',
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.data.source.display_name, 'Renamed');
    assert.deepEqual(res.body.data.source.retention, { '1m': '2d' });
    assert.equal(res.body.data.source.expire_after, 864000);
    assert.equal(res.body.data.source.default_granularity, '1h');
    // Absent fields stay; null clears.
    const cleared = await put({ retention: null });
    assert.deepEqual(cleared.body.data.source.retention, {});
    assert.equal(cleared.body.data.source.expire_after, 864000);
    assert.equal((await put({ expire_after: null })).body.data.source.expire_after, null);

    const bad = await put({
      retention: { '1d': '7d' },
      expire_after: -1,
      project_cluster_id: null,
      default_granularity: '1d',
    });
    assert.equal(bad.status, 422);
    for (const field of ['retention', 'expire_after', 'project_cluster_id'])
      assert.ok(bad.body.errors[field], `${field}: ${bad.text}`);
    assert.equal((await put({ name: '' })).status, 422);
    assert.equal((await put([])).status, 400);
    assert.equal((await put({}, '00000000-0000-0000-0000-000000000000')).status, 404);
    assert.equal((await put({}, 'not-a-uuid')).status, 404);
    const stranger = await signupWithOrganization(server);
    assert.equal((await put({ name: 'x' }, p.sourceId, stranger.userToken)).status, 404);
    // The metrics path sees the change at once (the cached source is dropped).
    const w = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key: 'k', at: new Date(T0).toISOString(), values: { a: 1 } },
      { token: p.sourceToken, sourceId: p.sourceId },
    );
    assert.equal(w.status, 201);
  });
});
