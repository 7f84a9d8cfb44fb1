// Editing and removing sources (docs/bootstrap.md#editing-and-removing-sources): PATCH of a
// project's settings (zone and week start only while it holds no data), PATCH of a database's name
// and defaults, and DELETE of either with what hangs on it, through the real server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  controlRow,
  storedBuckets,
  clusterMode,
} from '../helpers/server';

describe('editing and removing sources', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer({}, { sweepTimer: false });
  });
  after(() => server.stop());

  const api = (method: string, url: string, token: string, body?: unknown) =>
    request(server, method, `/api/v1${url}`, body, { token });
  const write = (p: ProjectAgent, key = 'hits') =>
    request(
      server,
      'POST',
      '/api/v1/metrics',
      { key, at: new Date().toISOString(), values: { count: 1 } },
      { token: p.sourceToken, sourceId: p.sourceId },
    );
  /** a count from the service's tables (service.db, or PostgreSQL in cluster mode) */
  const rows = async (sql: string, id: string) => (await controlRow<{ n: number }>(server, sql, id))!.n;
  const bucketsOf = (id: string) => storedBuckets(server, id);

  test('a project without data changes zone, week start and granularities; with data the zone is fixed', async () => {
    const p = await createProjectWithToken(server, { time_zone: 'UTC', granularities: '1m,1h,1d' });
    const changed = await api('PATCH', `/bootstrap/projects/${p.sourceId}`, p.userToken, {
      name: 'Shop',
      time_zone: 'europe/berlin',
      beginning_of_week: 7,
      granularities: ['1h', '1d', '1w'],
      default_granularity: '1h',
      default_timeframe: '7d',
      expire_after: 86_400 * 90,
      retention: { '1h': '30d' },
    });
    assert.equal(changed.status, 200, changed.text);
    const source = changed.body.data.source;
    assert.equal(source.display_name, 'Shop');
    assert.equal(source.time_zone, 'Europe/Berlin');
    assert.equal(source.beginning_of_week, 7);
    assert.deepEqual(source.granularities, ['1h', '1d', '1w']);
    assert.equal(source.default_granularity, '1h');
    assert.equal(source.expire_after, 86_400 * 90);

    // The default granularity and the retention map must fit the new list.
    const misfit = await api('PATCH', `/bootstrap/projects/${p.sourceId}`, p.userToken, {
      granularities: ['1d'],
    });
    assert.equal(misfit.status, 422, misfit.text);
    assert.ok(misfit.body.errors.default_granularity || misfit.body.errors.retention, misfit.text);

    assert.equal((await write(p)).status, 201);
    const zone = await api('PATCH', `/bootstrap/projects/${p.sourceId}`, p.userToken, {
      time_zone: 'America/New_York',
      beginning_of_week: 1,
    });
    assert.equal(zone.status, 422, zone.text);
    assert.deepEqual(zone.body.errors.time_zone, ['cannot be changed once the project holds data']);
    assert.deepEqual(zone.body.errors.beginning_of_week, ['cannot be changed once the project holds data']);
    // The same zone again is no change; the name still changes.
    const same = await api('PATCH', `/bootstrap/projects/${p.sourceId}`, p.userToken, {
      time_zone: 'Europe/Berlin',
      name: 'Shop 2',
    });
    assert.equal(same.status, 200, same.text);
    const fixed = await api('PATCH', `/bootstrap/projects/${p.sourceId}`, p.userToken, {
      project_cluster_id: null,
    });
    assert.equal(fixed.status, 422);
    // Written points are read under the new granularities.
    const read = await request(
      server,
      'GET',
      `/api/v1/metrics?key=hits&granularity=1h&from=${new Date(Date.now() - 7_200_000).toISOString()}&to=${new Date().toISOString()}`,
      undefined,
      { token: p.sourceToken, sourceId: p.sourceId },
    );
    assert.equal(read.status, 200, read.text);
  });

  test('two settings edits of one project at once, of different fields: both kept (10 rounds)', async () => {
    // The zone change waits for the metric writer's flush (its no-data check) between the read of
    // the project and its write; a rename sent meanwhile must not be written back over.
    const p = await createProjectWithToken(server, { time_zone: 'UTC' });
    const busy = await createProjectWithToken(server);
    const url = `/bootstrap/projects/${p.sourceId}`;
    const zones = ['Europe/Berlin', 'America/New_York'];
    for (let round = 0; round < 10; round++) {
      const zone = zones[round % 2]!;
      const [, a, b, c] = await Promise.all([
        write(busy), // another project's points: the flush has a commit to wait for
        api('PUT', url, p.userToken, { time_zone: zone }),
        api('PATCH', url, p.userToken, { name: `Shop ${round}` }),
        api('PATCH', url, p.userToken, { default_timeframe: `${round + 1}d` }),
      ]);
      for (const res of [a, b, c]) assert.equal(res.status, 200, res.text);
      const list = await api('GET', '/bootstrap/sources', p.userToken);
      const stored = list.body.data.projects.find((s: { id: string }) => s.id === p.sourceId);
      assert.deepEqual(
        [stored.time_zone, stored.display_name, stored.default_timeframe],
        [zone, `Shop ${round}`, `${round + 1}d`],
        `round ${round}`,
      );
    }
  });

  test('deleting a project takes its stored metrics, tokens, dashboards and transponders; tokens stop at once', async () => {
    const p = await createProjectWithToken(server);
    const other = await createProjectWithToken(server);
    for (const key of ['hits', 'orders', 'signups']) assert.equal((await write(p, key)).status, 201);
    // Enough buckets of one series for several of the sweep's 128-row statements.
    const points = Array.from({ length: 400 }, (_, i) => ({
      key: 'hits',
      at: new Date(Date.now() - i * 60_000).toISOString(),
      values: { count: 1 },
    }));
    const batch = await request(
      server,
      'POST',
      '/api/v1/metrics/batch',
      { points },
      {
        token: p.sourceToken,
        sourceId: p.sourceId,
      },
    );
    assert.equal(batch.status, 201, batch.text);
    assert.equal((await write(other)).status, 201);
    const dash = await api('POST', '/dashboards', p.userToken, {
      name: 'Shop',
      key: 'orders',
      source: { type: 'project', id: p.sourceId },
    });
    assert.equal(dash.status, 201, dash.text);
    const share = await api('POST', `/dashboards/${dash.body.data.id}/shares`, p.userToken, {});
    assert.ok(share.status < 300, share.text);
    const t = await request(
      server,
      'POST',
      '/api/v1/transponders',
      { name: 'rate', key: 'orders', paths: ['count'], expression: 'a', response: 'rate' },
      { token: p.sourceToken, sourceId: p.sourceId },
    );
    assert.ok(t.status === 201 || t.status === 422, t.text);
    const transponders = t.status === 201 ? 1 : 0;

    const monitor = await api('POST', '/monitors', p.userToken, {
      name: 'Orders',
      source: { type: 'project', id: p.sourceId },
      alert_metric_key: 'orders',
      alert_metric_path: 'count',
      alerts: [{ analysis_strategy: 'threshold', settings: { threshold_value: 100 } }],
    });
    assert.equal(monitor.status, 201, monitor.text);

    // Another organization sees 404, for the dependents too.
    assert.equal((await api('DELETE', `/bootstrap/projects/${p.sourceId}`, other.userToken)).status, 404);
    assert.equal(
      (await api('GET', `/bootstrap/sources/${p.sourceId}/dependents`, other.userToken)).status,
      404,
    );
    // A project id on the database route is 404 as well.
    assert.equal((await api('DELETE', `/bootstrap/databases/${p.sourceId}`, p.userToken)).status, 404);

    const dependents = await api('GET', `/bootstrap/sources/${p.sourceId}/dependents`, p.userToken);
    assert.equal(dependents.status, 200, dependents.text);
    assert.deepEqual(dependents.body.data, {
      dashboards: [{ id: dash.body.data.id, name: 'Shop' }],
      source_tokens: 1,
      transponders,
      metric_keys: 3,
      monitors: 1,
    });
    assert.ok((await bucketsOf(p.sourceId)) > 400);

    const removed = await api('DELETE', `/bootstrap/projects/${p.sourceId}`, p.userToken);
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.body.data.source.id, p.sourceId);
    assert.deepEqual(removed.body.data.removed, dependents.body.data);

    assert.equal(await bucketsOf(p.sourceId), 0);
    const series = server.deps.db.prepare('SELECT COUNT(*) AS n FROM metric_series WHERE source_id = ?');
    assert.equal((series.get(p.sourceId) as { n: number }).n, 0);
    assert.equal(await rows('SELECT COUNT(*) AS n FROM transponders WHERE source_id = ?', p.sourceId), 0);
    assert.equal(
      await rows('SELECT COUNT(*) AS n FROM dashboard_shares WHERE dashboard_id = ?', dash.body.data.id),
      0,
    );
    // The source token fails on its next request, for reads and writes.
    assert.equal((await write(p)).status, 401);
    const read = await request(server, 'GET', '/api/v1/metrics?key=hits', undefined, {
      token: p.sourceToken,
      sourceId: p.sourceId,
    });
    assert.equal(read.status, 401);
    assert.equal((await api('GET', `/dashboards/${dash.body.data.id}`, p.userToken)).status, 404);
    const list = await api('GET', '/bootstrap/sources', p.userToken);
    assert.deepEqual(list.body.data.projects, []);
    assert.equal((await api('DELETE', `/bootstrap/projects/${p.sourceId}`, p.userToken)).status, 404);
    // The monitor stays (and fails from now on: its source is gone).
    assert.equal((await api('GET', `/monitors/${monitor.body.data.id}`, p.userToken)).status, 200);
    // The other organization's data is untouched.
    assert.ok((await bucketsOf(other.sourceId)) > 0);
    assert.equal((await write(other)).status, 201);
  });

  test('a database source is renamed and removed; its own store is not touched', async () => {
    const agent = await signupWithOrganization(server);
    const folder = path.join(server.deps.config.sources.sqliteRoot, agent.organizationId);
    mkdirSync(folder, { recursive: true });
    // cluster mode refuses SQLite sources (their file is on one node): a PostgreSQL one there
    const created = await api('POST', '/bootstrap/databases', agent.userToken, {
      display_name: 'Legacy',
      ...(clusterMode
        ? { driver: 'postgres', host: 'db.internal', database_name: 'stats', username: 'svc', password: 'pw' }
        : { driver: 'sqlite', file_path: 'stats.sqlite' }),
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.source.id;
    const renamed = await api('PATCH', `/bootstrap/databases/${id}`, agent.userToken, {
      display_name: 'Legacy stats',
      default_timeframe: '7d',
      default_granularity: '1h',
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.data.source.display_name, 'Legacy stats');
    assert.equal(renamed.body.data.source.default_timeframe, '7d');
    const zone = await api('PATCH', `/bootstrap/databases/${id}`, agent.userToken, { time_zone: 'UTC' });
    assert.equal(zone.status, 422, zone.text);
    assert.ok(zone.body.errors.time_zone);
    const bad = await api('PATCH', `/bootstrap/databases/${id}`, agent.userToken, {
      default_granularity: '7s',
    });
    assert.equal(bad.status, 422);
    assert.equal(
      (await api('PATCH', `/bootstrap/projects/${id}`, agent.userToken, { name: 'x' })).status,
      404,
    );

    const removed = await api('DELETE', `/bootstrap/databases/${id}`, agent.userToken);
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.body.data.removed.metric_keys, 0);
    const list = await api('GET', '/bootstrap/sources', agent.userToken);
    assert.deepEqual(list.body.data.databases, []);
    assert.equal((await api('DELETE', `/bootstrap/databases/${id}`, agent.userToken)).status, 404);
    assert.equal((await api('DELETE', '/bootstrap/databases/not-a-uuid', agent.userToken)).status, 404);
  });
});
