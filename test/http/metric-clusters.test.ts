// Projects on a metrics cluster (SPEC 14, docs/cluster.md): `[[clusters]]` in the configuration,
// `project_cluster_id` at creation. Against the local PostgreSQL (two scratch databases, two
// clusters): the project's buckets are written and read there through the HTTP API, never in
// service.db nor in the other cluster; an unknown id is 422; retention, the zone guard and removal
// reach the cluster; a connection cut mid-write answers 503 and the next write succeeds; concurrent
// writes to hot keys on a cluster with a merge window add up exactly in fewer commits than requests
// (the commits counted by PostgreSQL, pg_stat_database).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
} from '../helpers/server';
import { SERVERS, scratchDatabase, skipReason } from '../drivers/network';

const skip = skipReason('postgres');
const CLUSTER_A = '5b0c2d8e-7a41-4c55-9e3f-0a1b2c3d4e5f';
const CLUSTER_B = '9d7e6f50-1a2b-4c3d-8e9f-a0b1c2d3e4f5';
/** a cluster with a merge window of WINDOW_MS, in a database of its own (its commits are counted) */
const CLUSTER_C = 'c0ffee00-1a2b-4c3d-8e9f-a0b1c2d3e4f5';
const WINDOW_MS = 250;
const HOUR = 3_600_000;

const schemaOf = (projectId: string) => `svc_project_${projectId.replace(/-/g, '')}`;

describe('projects on a metrics cluster', { skip }, () => {
  let server: TestServer;
  let dbA: Awaited<ReturnType<typeof scratchDatabase>>;
  let dbB: Awaited<ReturnType<typeof scratchDatabase>>;
  let dbC: Awaited<ReturnType<typeof scratchDatabase>>;
  let clientA: pg.Client;
  let clientB: pg.Client;
  let agent: Agent;
  const now = Date.now();
  const at = new Date(Math.floor(now / HOUR) * HOUR + 60_000).toISOString();

  before(async () => {
    dbA = await scratchDatabase('postgres');
    dbB = await scratchDatabase('postgres');
    dbC = await scratchDatabase('postgres');
    const url = (name: string) =>
      `postgres://postgres@${SERVERS.postgres.host}:${SERVERS.postgres.port}/${name}`;
    server = await startTestServer({
      SERVICE_CLUSTERS: JSON.stringify([
        { id: CLUSTER_A, url: url(dbA.name) },
        { id: CLUSTER_B.toUpperCase(), url: url(dbB.name), merge_window_ms: 0 },
        { id: CLUSTER_C, url: url(dbC.name), merge_window_ms: WINDOW_MS },
      ]),
      SERVICE_NETWORK_OUTBOUND: 'public', // a tenant's limit; the operator's clusters are reached anyway
    });
    clientA = new pg.Client({ ...SERVERS.postgres, database: dbA.name });
    clientB = new pg.Client({ ...SERVERS.postgres, database: dbB.name });
    await clientA.connect();
    await clientB.connect();
    agent = await signupWithOrganization(server);
  });

  /** A query on cluster C's database through a connection of its own, closed after. */
  async function clientC<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ ...SERVERS.postgres, database: dbC.name });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  after(async () => {
    await clientA?.end();
    await clientB?.end();
    await server?.stop();
    await dbA?.drop();
    await dbB?.drop();
    await dbC?.drop();
  });

  async function createProject(fields: Record<string, unknown>) {
    const res = await request(
      server,
      'POST',
      '/api/v1/bootstrap/projects',
      { name: 'On a cluster', ...fields },
      { token: agent.userToken },
    );
    if (res.status !== 201) return { res, sourceId: '', token: '' };
    const sourceId = res.body.data.source.id as string;
    const t = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: sourceId },
      { token: agent.userToken },
    );
    assert.equal(t.status, 201, t.text);
    return { res, sourceId, token: t.body.data.token.value as string };
  }

  const write = (p: { sourceId: string; token: string }, path: string, body: unknown) =>
    request(server, 'POST', path, body, { token: p.token, sourceId: p.sourceId });

  async function series(p: { sourceId: string; token: string }, key: string | null, granularity = '1h') {
    const q = new URLSearchParams({
      from: new Date(now - 2 * HOUR).toISOString(),
      to: new Date(now + HOUR).toISOString(),
      granularity,
    });
    if (key !== null) q.set('key', key);
    return request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
      token: p.token,
      sourceId: p.sourceId,
    });
  }

  /** The bucket of `at` in a series answer. */
  function bucketOf(res: { body: { data: { at: string[]; values: Record<string, any>[] } } }) {
    const hour = Math.floor(Date.parse(at) / HOUR) * HOUR;
    const i = res.body.data.at.findIndex((t) => Date.parse(t) === hour);
    assert.ok(i >= 0, 'the written bucket is in the range');
    return res.body.data.values[i]!;
  }

  test('an id that names no configured cluster is 422 naming the field; nothing is created', async () => {
    const before = (
      await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, { token: agent.userToken })
    ).body.data.projects.length;
    const { res } = await createProject({ project_cluster_id: '00000000-0000-4000-8000-000000000001' });
    assert.equal(res.status, 422);
    assert.deepEqual(Object.keys(res.body.errors), ['project_cluster_id']);
    const listed = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, {
      token: agent.userToken,
    });
    assert.equal(listed.body.data.projects.length, before);
  });

  test('track, assert and batch through the API are stored in the cluster and read back', async () => {
    const p = await createProject({ project_cluster_id: CLUSTER_A.toUpperCase(), granularities: '1h,1d' });
    assert.equal(p.res.status, 201, p.res.text);
    const schema = schemaOf(p.sourceId);

    assert.equal(
      (await write(p, '/api/v1/metrics', { key: 'orders', at, values: { count: 2, eur: { sum: 10 } } }))
        .status,
      201,
    );
    for (const temp of [20, 21])
      assert.equal(
        (await write(p, '/api/v1/metrics', { key: 'room', at, operation: 'assert', values: { temp } }))
          .status,
        201,
      );
    const batch = await write(p, '/api/v1/metrics/batch', {
      points: [1, 2, 3].map((n) => ({ key: 'orders', at, values: { count: 1, eur: { sum: n } } })),
    });
    assert.equal(batch.status, 201, batch.text);
    assert.equal(batch.body.data.created, 3);

    const orders = await series(p, 'orders');
    assert.equal(orders.status, 200, orders.text);
    assert.deepEqual(bucketOf(orders), { count: 5, eur: { sum: 16 } });
    assert.deepEqual(bucketOf(await series(p, 'room')), { temp: 21 });
    const days = (await series(p, 'orders', '1d')).body.data.values.filter(
      (v: object) => Object.keys(v).length,
    );
    assert.deepEqual(days, [{ count: 5, eur: { sum: 16 } }]);
    const system = bucketOf(await series(p, null));
    assert.deepEqual(system, { count: 6, keys: { orders: 4, room: 2 } });

    const query = await request(
      server,
      'POST',
      '/api/v1/metrics/query',
      {
        key: 'orders',
        from: new Date(now - 2 * HOUR).toISOString(),
        to: new Date(now + HOUR).toISOString(),
        granularity: '1h',
        mode: 'aggregate',
        value_path: 'eur.sum',
        aggregator: 'sum',
      },
      { token: p.token, sourceId: p.sourceId },
    );
    assert.equal(query.status, 200, query.text);
    assert.equal(query.body.data.value, 16);

    // The rows: in cluster A's database, in the project's schema, one per (key, granularity, bucket).
    const rows = await clientA.query(
      `SELECT key, granularity, data FROM "${schema}".trifle_stats WHERE key = 'orders' ORDER BY granularity`,
    );
    assert.deepEqual(
      rows.rows.map((r) => [r.granularity, r.data.count, r.data['eur.sum']]),
      [
        ['1d', 5, 16],
        ['1h', 5, 16],
      ],
    );
    const systemRows = await clientA.query(
      `SELECT count(*)::int AS n FROM "${schema}".trifle_stats WHERE key = '__system__key__'`,
    );
    assert.equal(systemRows.rows[0].n, 2);
    // Not in the other cluster, not in service.db.
    const elsewhere = await clientB.query(
      `SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = $1`,
      [schema],
    );
    assert.equal(elsewhere.rows[0].n, 0);
    for (const table of ['metric_series', 'metric_key_counts']) {
      const local = server.deps.db
        .prepare(
          `SELECT count(*) AS n FROM ${table} WHERE ${table === 'metric_series' ? 'source_id = ?' : 'series_id IN (SELECT id FROM metric_series WHERE source_id = ?)'}`,
        )
        .get(p.sourceId) as { n: number };
      assert.equal(local.n, 0, `${table} holds nothing of the project`);
    }

    // Its zone decides the buckets of stored points: fixed now that the cluster holds data.
    const zone = await request(
      server,
      'PUT',
      `/api/v1/bootstrap/projects/${p.sourceId}`,
      { time_zone: 'Europe/Berlin' },
      { token: agent.userToken },
    );
    assert.equal(zone.status, 422, zone.text);
    assert.ok(zone.body.errors.time_zone);

    // Removing the project drops its schema in the cluster.
    const removed = await request(server, 'DELETE', `/api/v1/bootstrap/projects/${p.sourceId}`, undefined, {
      token: agent.userToken,
    });
    assert.equal(removed.status, 200, removed.text);
    const gone = await clientA.query(
      `SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = $1`,
      [schema],
    );
    assert.equal(gone.rows[0].n, 0);
  });

  test('a project without data may change its zone; cluster B holds the second project', async () => {
    const p = await createProject({ project_cluster_id: CLUSTER_B });
    assert.equal(p.res.status, 201, p.res.text);
    const zone = await request(
      server,
      'PUT',
      `/api/v1/bootstrap/projects/${p.sourceId}`,
      { time_zone: 'Europe/Berlin' },
      { token: agent.userToken },
    );
    assert.equal(zone.status, 200, zone.text);
    const made = await clientB.query(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = $1 AND table_name = 'trifle_stats'`,
      [schemaOf(p.sourceId)],
    );
    assert.equal(made.rows[0].n, 1, 'the schema is made at creation');
  });

  test('two projects on one cluster share its connections, never their buckets', async () => {
    const one = await createProject({ project_cluster_id: CLUSTER_A, granularities: '1h' });
    const two = await createProject({ project_cluster_id: CLUSTER_A, granularities: '1h' });
    assert.equal(one.res.status, 201, one.res.text);
    assert.equal(two.res.status, 201, two.res.text);
    // Interleaved, so that one pooled connection serves both projects' statements.
    const writes = [];
    for (let i = 0; i < 20; i++) {
      writes.push(write(one, '/api/v1/metrics', { key: 'same', at, values: { n: 1 } }));
      writes.push(write(two, '/api/v1/metrics', { key: 'same', at, values: { n: 100 } }));
    }
    for (const res of await Promise.all(writes)) assert.equal(res.status, 201, res.text);
    assert.deepEqual(bucketOf(await series(one, 'same')), { n: 20 });
    assert.deepEqual(bucketOf(await series(two, 'same')), { n: 2000 });
  });

  test('the retention sweep deletes expired buckets in the cluster', async () => {
    const p = await createProject({
      project_cluster_id: CLUSTER_A,
      granularities: ['1h', '1d'],
      retention: { '1h': '2d' },
    });
    assert.equal(p.res.status, 201, p.res.text);
    const old = new Date(now - 5 * 24 * HOUR).toISOString();
    for (const when of [old, at])
      assert.equal((await write(p, '/api/v1/metrics', { key: 'k', at: when, values: { n: 1 } })).status, 201);
    const deleted = await server.deps.ops.sweeper.sweep();
    assert.ok(deleted >= 2, `the old 1h bucket of k and of the system key: ${deleted}`);
    const rows = await clientA.query(
      `SELECT granularity, count(*)::int AS n FROM "${schemaOf(p.sourceId)}".trifle_stats WHERE key = 'k' GROUP BY granularity ORDER BY granularity`,
    );
    assert.deepEqual(
      rows.rows.map((r) => [r.granularity, r.n]),
      [
        ['1d', 2],
        ['1h', 1],
      ],
    );
  });

  test('a connection cut mid-write answers 503 with Retry-After; the next write and read succeed', async () => {
    const p = await createProject({ project_cluster_id: CLUSTER_A, granularities: '1h' });
    assert.equal(p.res.status, 201, p.res.text);
    const table = `"${schemaOf(p.sourceId)}".trifle_stats`;
    assert.equal((await write(p, '/api/v1/metrics', { key: 'cut', at, values: { n: 1 } })).status, 201);

    // Hold the table so that the next write waits inside PostgreSQL, then kill its backend.
    const locker = new pg.Client({ ...SERVERS.postgres, database: dbA.name });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    const pending = write(p, '/api/v1/metrics', { key: 'cut', at, values: { n: 100 } });
    let killed = 0;
    for (let i = 0; i < 200 && killed === 0; i++) {
      const r = await clientA.query(
        `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      killed = r.rows.filter((x) => x.ok).length;
      if (killed === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(killed, 1, 'the waiting write was found and cut');
    const cut = await pending;
    await locker.query('ROLLBACK');
    await locker.end();
    assert.equal(cut.status, 503, cut.text);
    assert.ok(Number(cut.headers.get('retry-after')) > 0);
    assert.match(cut.body.errors.detail, /metrics cluster is unavailable/);

    // Every idle connection of the pool cut too: the next calls connect again.
    await clientA.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
    );
    let next = await write(p, '/api/v1/metrics', { key: 'cut', at, values: { n: 10 } });
    if (next.status === 503) next = await write(p, '/api/v1/metrics', { key: 'cut', at, values: { n: 10 } });
    assert.equal(next.status, 201, next.text);
    let read = await series(p, 'cut');
    if (read.status === 503) read = await series(p, 'cut');
    assert.equal(read.status, 200, read.text);
    // The cut write is not stored (its transaction never committed); the others are.
    assert.deepEqual(bucketOf(read), { n: 11 });
  });

  /**
   * The transactions committed in a database so far. A backend reports its counts to
   * pg_stat_database at most once a second and, when idle, up to 10 s later, but always when it
   * exits: so the database's backends (the service's pooled connections) are ended first, waiting
   * for each to exit. The pool connects again on its next use.
   */
  async function commitsIn(database: string): Promise<number> {
    const admin = new pg.Client({ ...SERVERS.postgres, database: 'postgres' });
    await admin.connect();
    try {
      await admin.query(
        'SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      const r = await admin.query('SELECT xact_commit::int AS n FROM pg_stat_database WHERE datname = $1', [
        database,
      ]);
      return r.rows[0].n;
    } finally {
      await admin.end();
    }
  }

  test('concurrent writes to hot keys gather per merge window: exact sums, fewer commits than requests', async () => {
    const p = await createProject({ project_cluster_id: CLUSTER_C, granularities: '1h,1d' });
    assert.equal(p.res.status, 201, p.res.text);
    const before = await commitsIn(dbC.name);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the pool has dropped the ended connections

    // A lone write waits for the window before its commit.
    const lone = performance.now();
    const first = await write(p, '/api/v1/metrics', { key: 'hot_b', at, values: { count: 1 } });
    assert.equal(first.status, 201, first.text);
    const loneMs = performance.now() - lone;
    assert.ok(loneMs >= WINDOW_MS - 1, `a lone write answered after ${loneMs} ms`);

    // 200 writes sent one every 10 ms, each while earlier ones still wait for their answers
    // (a single point, then a batch of two, ...): every write touches the same rows, hot_a's and
    // the system key's buckets.
    const REQUESTS = 200;
    const SPACING_MS = 10;
    const CLIENTS = 20; // amounts 0..19
    await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * SPACING_MS));
        const c = i % CLIENTS;
        const res =
          i % 2 === 0
            ? await write(p, '/api/v1/metrics', { key: 'hot_a', at, values: { count: 1, amount: c } })
            : await write(p, '/api/v1/metrics/batch', {
                points: [
                  { key: 'hot_a', at, values: { count: 1, amount: c } },
                  { key: 'hot_b', at, values: { count: 1 } },
                ],
              });
        assert.equal(res.status, 201, res.text);
      }),
    );
    const elapsedMs = performance.now() - lone;
    const commits = (await commitsIn(dbC.name)) - before;
    const requests = REQUESTS + 1;

    // Each write was acknowledged after its commit: every one is in the sums, once.
    const amount = (REQUESTS / CLIENTS) * ((CLIENTS * (CLIENTS - 1)) / 2);
    const table = `"${schemaOf(p.sourceId)}".trifle_stats`;
    const rows = await clientC(async (client) =>
      client.query(`SELECT key, granularity, data FROM ${table} ORDER BY key, granularity`),
    );
    assert.deepEqual(
      rows.rows.map((r) => [r.key, r.granularity, r.data]),
      [
        ['__system__key__', '1d', { count: 301, 'keys.hot_a': 200, 'keys.hot_b': 101 }],
        ['__system__key__', '1h', { count: 301, 'keys.hot_a': 200, 'keys.hot_b': 101 }],
        ['hot_a', '1d', { count: 200, amount }],
        ['hot_a', '1h', { count: 200, amount }],
        ['hot_b', '1d', { count: 101 }],
        ['hot_b', '1h', { count: 101 }],
      ],
    );
    assert.deepEqual(bucketOf(await series(p, 'hot_a')), { count: 200, amount });

    // At most one commit starts per window (the next window opens with the first write after a
    // commit started), plus a few for the connection the pool opens again.
    const bound = Math.ceil(elapsedMs / WINDOW_MS) + 1 + 3;
    assert.ok(
      commits <= bound,
      `${commits} commits for ${requests} requests in ${Math.round(elapsedMs)} ms: at most ${bound}`,
    );
    assert.ok(commits < requests / 4, `${commits} commits for ${requests} requests`);
    assert.ok(commits >= 1);
  });
});
