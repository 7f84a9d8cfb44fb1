// Cluster mode (SPEC 14, docs/cluster.md part 3): `storage.url` runs the service on PostgreSQL.
// Against the local PostgreSQL (a scratch database per server, reached through a TCP relay the test
// can cut, so the database "goes away"), skipped with a message without one. What a single node
// would not show: the migration at start and its refusals, the health of the database, the node
// id, every project on the default metrics cluster (storage.url's own database), what is refused
// (SQLite sources by path and upload, backup and restore), and PostgreSQL's refusals of values the
// client sent answered as 4xx, never 500.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { startServer } from '../../src/server';
import { createLogger } from '../../src/lib/log';
import { migratePostgres, PG_SCHEMA_VERSION } from '../../src/storage/pg/migrations';
import { AppError } from '../../src/errors';
import { NUL_IN_TEXT } from '../../src/storage/pg/client';
import { SERVERS, scratchDatabase, skipReason } from '../drivers/network';
import { pgUrl } from '../helpers/pg-store';
import { runCli } from '../helpers/process';
import {
  controlRow,
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  storedBuckets,
  uniqueEmail,
  type TestServer,
} from '../helpers/server';
import { DATABASES, sqliteBytes, upload } from '../helpers/databases';

const skip = skipReason('postgres');

/** A TCP relay to the local PostgreSQL that the test can cut (the database "goes away") and restore. */
async function relay(): Promise<{
  port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(SERVERS.postgres.port, SERVERS.postgres.host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const cut = async () => {
    // the listener closes once its connections are gone: stop accepting, then cut them
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return {
    port,
    cut,
    restore: () => new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
    close: () => (server.listening ? cut() : Promise.resolve()),
  };
}

describe('cluster mode (storage.url)', { skip }, () => {
  let db: { name: string; drop(): Promise<void> };
  let link: Awaited<ReturnType<typeof relay>>;
  let server: TestServer;
  const url = () => `postgres://${SERVERS.postgres.user}@127.0.0.1:${link.port}/${db.name}`;
  /** a query on the service's database, not through the relay */
  const direct = async <T = Record<string, unknown>>(sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new pg.Client({ connectionString: pgUrl(db.name) });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };

  before(async () => {
    db = await scratchDatabase('postgres');
    link = await relay();
    server = await startTestServer({ SERVICE_STORAGE_URL: url() });
  });
  after(async () => {
    await server?.stop();
    await link?.close();
    await db?.drop();
  });

  test('start-up migrates the database; health reports it, and answers 503 while it does not answer', async () => {
    const versions = await direct<{ v: string }>('SELECT max(version)::text AS v FROM schema_migrations');
    assert.equal(Number(versions[0]!.v), PG_SCHEMA_VERSION);
    const ok = await request(server, 'GET', '/api/v1/health');
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.status, 'ok');
    assert.equal(ok.body.database.status, 'ok');
    assert.equal(typeof ok.body.database.latency_ms, 'number');

    await link.cut();
    try {
      const down = await request(server, 'GET', '/api/v1/health');
      assert.equal(down.status, 503, down.text);
      assert.equal(down.body.status, 'degraded');
      assert.deepEqual(down.body.database, { status: 'unreachable' });
      assert.equal(down.headers.get('retry-after'), '5');
      // a request that needs the database answers 503 too, never 500
      const me = await request(server, 'POST', '/api/v1/bootstrap/login', {
        email: uniqueEmail(),
        password: 'correct horse battery',
      });
      assert.equal(me.status, 503, me.text);
    } finally {
      await link.restore();
    }
    const back = await request(server, 'GET', '/api/v1/health');
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.database.status, 'ok');
  });

  test('GET /metrics names the node', async () => {
    const res = await fetch(`${server.url}/metrics`);
    const text = await res.text();
    const line = text.split('\n').find((l) => l.startsWith('service_node_info{'));
    assert.ok(line, text);
    assert.match(
      line,
      new RegExp(`^service_node_info\\{node_id="${os.hostname()}:${process.pid}:[0-9a-f]{8}"\\} 1$`),
    );
    const id = line.slice(line.indexOf('"') + 1, line.lastIndexOf('"'));
    assert.equal(id, server.deps.ops.nodeId);
    assert.equal(id, server.deps.ops.jobs?.holder, "the jobs' lease is held under the same id");
  });

  test("the service's rows are in PostgreSQL; a project's buckets on the default metrics cluster", async () => {
    const p = await createProjectWithToken(server, { name: 'Shop', granularities: '1h,1d' });
    const users = await direct<{ n: string }>('SELECT count(*)::text AS n FROM users WHERE email = $1', [
      p.email,
    ]);
    assert.equal(users[0]!.n, '1');
    assert.equal(
      (server.deps.db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n,
      0,
      'service.db holds no account',
    );
    // recorded without a cluster id, as `service migrate` copies a project: storage.url is its cluster
    const row = await controlRow<{ config: string }>(
      server,
      'SELECT config FROM sources WHERE id = ?',
      p.sourceId,
    );
    assert.deepEqual(JSON.parse(row!.config), {});
    const schema = `svc_project_${p.sourceId.replace(/-/g, '')}`;
    const schemas = await direct('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [
      schema,
    ]);
    assert.equal(schemas.length, 1, 'the project is set up at its creation');

    const at = '2026-11-27T10:15:00Z';
    for (const [key, n] of [
      ['orders', 3],
      ['orders', 4],
      ['visits', 1],
    ] as const) {
      const res = await request(
        server,
        'POST',
        '/api/v1/metrics',
        { key, at, values: { count: n } },
        { token: p.sourceToken, sourceId: p.sourceId },
      );
      assert.equal(res.status, 201, res.text);
    }
    const rows = await direct<{ key: string; granularity: string; data: Record<string, number> }>(
      `SELECT key, granularity, data FROM "${schema}".trifle_stats ORDER BY key, granularity`,
    );
    assert.deepEqual(
      rows.map((r) => [r.key, r.granularity, r.data]),
      [
        ['__system__key__', '1d', { count: 3, 'keys.orders': 2, 'keys.visits': 1 }],
        ['__system__key__', '1h', { count: 3, 'keys.orders': 2, 'keys.visits': 1 }],
        ['orders', '1d', { count: 7 }],
        ['orders', '1h', { count: 7 }],
        ['visits', '1d', { count: 1 }],
        ['visits', '1h', { count: 1 }],
      ],
    );
    assert.equal(await storedBuckets(server, p.sourceId), 6);
    assert.equal(
      (server.deps.db.prepare('SELECT count(*) AS n FROM metric_series').get() as { n: number }).n,
      0,
      "the embedded store holds none of the project's points",
    );
    const series = await request(
      server,
      'GET',
      `/api/v1/metrics?key=orders&granularity=1h&from=2026-11-27T10:00:00Z&to=2026-11-27T10:59:59Z`,
      undefined,
      { token: p.sourceToken, sourceId: p.sourceId },
    );
    assert.equal(series.status, 200, series.text);
    assert.deepEqual(series.body.data.values, [{ count: 7 }]);

    // the removal counts the keys of its schema, and drops it
    const dependents = await request(
      server,
      'GET',
      `/api/v1/bootstrap/sources/${p.sourceId}/dependents`,
      undefined,
      {
        token: p.userToken,
      },
    );
    assert.equal(dependents.status, 200, dependents.text);
    assert.equal(dependents.body.data.metric_keys, 2);
    const removed = await request(server, 'DELETE', `/api/v1/bootstrap/projects/${p.sourceId}`, undefined, {
      token: p.userToken,
    });
    assert.equal(removed.status, 200, removed.text);
    assert.equal(removed.body.data.removed.metric_keys, 2);
    assert.equal(
      (await direct('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).length,
      0,
    );
  });

  test('SQLite database sources are refused, by file path and by upload (422 on driver)', async () => {
    const agent = await signupWithOrganization(server);
    const byPath = await request(
      server,
      'POST',
      DATABASES,
      { display_name: 'Local', driver: 'sqlite', file_path: 'stats.sqlite' },
      { token: agent.userToken },
    );
    assert.equal(byPath.status, 422, byPath.text);
    assert.match(byPath.body.errors.driver[0], /not available in cluster mode/);
    assert.match(byPath.body.errors.driver[0], /PostgreSQL, MySQL, Redis or Mongo/);
    const uploaded = await upload(
      server,
      agent.userToken,
      { display_name: 'Up', driver: 'sqlite' },
      {
        name: 'stats.sqlite',
        bytes: sqliteBytes(),
      },
    );
    assert.equal(uploaded.status, 422, uploaded.text);
    assert.match(uploaded.body.errors.driver[0], /not available in cluster mode/);
    const list = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, {
      token: agent.userToken,
    });
    assert.deepEqual(list.body.data.databases, []);
  });

  test('values PostgreSQL refuses but SQLite stores answer 4xx, not 500: a NUL character, a number past BIGINT', async () => {
    const agent = await signupWithOrganization(server);
    const nul = await request(server, 'POST', '/api/v1/bootstrap/signup', {
      email: uniqueEmail(),
      password: 'correct horse battery',
      organization_name: 'Nul\u0000Org',
    });
    assert.ok(nul.status === 400 || nul.status === 422, `${nul.status} ${nul.text}`);
    const project = await request(
      server,
      'POST',
      '/api/v1/bootstrap/projects',
      { name: 'a\u0000b' },
      { token: agent.userToken },
    );
    assert.ok(project.status === 400 || project.status === 422, `${project.status} ${project.text}`);
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, {
      token: agent.userToken,
    });
    assert.equal(dashboards.status, 200);

    // the one mapping, at the store: the statement's own error never reaches the client
    const refusedText = await server
      .store!.run('UPDATE users SET email = $1 WHERE id = $2', ['x\u0000y', 'none'])
      .then(
        () => null,
        (err: unknown) => err,
      );
    assert.ok(refusedText instanceof AppError);
    assert.equal(refusedText.status, 400);
    assert.equal(refusedText.message, NUL_IN_TEXT);
    for (const number of ['9223372036854775808', 2 ** 70, 1.5]) {
      const refusedNumber = await server
        .store!.run('UPDATE users SET created_at = $1 WHERE id = $2', [number, 'none'])
        .then(
          () => null,
          (err: unknown) => err,
        );
      assert.ok(refusedNumber instanceof AppError, String(refusedNumber));
      assert.equal(refusedNumber.status, 422);
    }
  });

  test('backup and restore refuse, pointing to PostgreSQL tools (exit 2)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-cli-'));
    try {
      for (const args of [
        ['backup', '--to', path.join(dir, 'b.db'), '--data', dir],
        ['restore', '--from', path.join(dir, 'b.db'), '--data', dir],
      ]) {
        const run = runCli(args, { SERVICE_STORAGE_URL: url() });
        assert.equal(run.status, 2, run.stderr);
        assert.match(run.stderr, /not available in cluster mode \(storage\.url\)/);
        assert.match(run.stderr, /pg_dump/);
        assert.equal(run.stderr.trim().split('\n').length, 1);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('cluster mode start-up refusals', { skip }, () => {
  const start = (storageUrl: string) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-start-'));
    const config = loadConfig({
      env: { SERVICE_DATA_DIR: dir, SERVICE_PORT: '0', SERVICE_STORAGE_URL: storageUrl },
      cwd: dir,
    });
    return {
      dir,
      started: startServer(config, { log: createLogger('silent') }),
    };
  };

  test('a database newer than this build stops the start with one line', async () => {
    const db = await scratchDatabase('postgres');
    let dir: string | undefined;
    try {
      await migratePostgres(pgUrl(db.name));
      const client = new pg.Client({ connectionString: pgUrl(db.name) });
      await client.connect();
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0)');
      await client.end();
      const attempt = start(pgUrl(db.name));
      dir = attempt.dir;
      await assert.rejects(attempt.started, (err: Error) => {
        assert.match(
          err.message,
          /^storage\.url postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+: database schema version 99 is newer than this build/,
        );
        assert.ok(!err.message.includes('\n'));
        return true;
      });
    } finally {
      if (dir) rmSync(dir, { recursive: true, force: true });
      await db.drop();
    }
  });

  test('an unreachable database stops the start with one line, the password masked', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const { dir, started } = start(`postgres://svc:s3cret@127.0.0.1:${port}/service`);
    try {
      await assert.rejects(started, (err: Error) => {
        assert.match(err.message, /^storage\.url postgres:\/\/svc:\*\*\*@127\.0\.0\.1:\d+\/service: /);
        assert.ok(!err.message.includes('s3cret'));
        assert.ok(!err.message.includes('\n'));
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a single node moved to cluster mode by service migrate', { skip }, () => {
  test("its projects, whose rows name no cluster, read and write their buckets on storage.url's database", async () => {
    const db = await scratchDatabase('postgres');
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-cluster-moved-'));
    let node: TestServer | undefined;
    try {
      // one node on service.db (SERVICE_STORAGE_URL empty: none, also under TEST_STORAGE=postgres)
      const single = await startTestServer({ SERVICE_DATA_DIR: dataDir, SERVICE_STORAGE_URL: '' });
      assert.equal(single.store, null);
      const p = await createProjectWithToken(single, { name: 'Moved', granularities: '1h,1d' });
      const at = '2026-11-27T09:30:00Z';
      const write = (s: TestServer, n: number) =>
        request(
          s,
          'POST',
          '/api/v1/metrics',
          { key: 'orders', at, values: { count: n } },
          {
            token: p.sourceToken,
            sourceId: p.sourceId,
          },
        );
      const read = (s: TestServer) =>
        request(s, 'GET', `/api/v1/metrics?key=orders&granularity=1h&from=${at}&to=${at}`, undefined, {
          token: p.sourceToken,
          sourceId: p.sourceId,
        });
      assert.equal((await write(single, 5)).status, 201);
      assert.deepEqual((await read(single)).body.data.values, [{ count: 5 }]);
      await single.close(); // its data directory stays for the migration
      rmSync(single.dataDir, { recursive: true, force: true }); // (the helper's unused one)

      const moved = runCli(['migrate', '--to', pgUrl(db.name), '--data', dataDir]);
      assert.equal(moved.status, 0, moved.stderr + moved.stdout);

      node = await startTestServer({ SERVICE_STORAGE_URL: pgUrl(db.name) });
      const row = await controlRow<{ config: string }>(
        node,
        'SELECT config FROM sources WHERE id = ?',
        p.sourceId,
      );
      assert.equal(JSON.parse(row!.config).cluster_id, undefined);
      assert.deepEqual(
        (await read(node)).body.data.values,
        [{ count: 5 }],
        'the copied bucket, read on the cluster',
      );
      assert.equal((await write(node, 2)).status, 201);
      assert.deepEqual((await read(node)).body.data.values, [{ count: 7 }]);
      assert.equal(
        (node.deps.db.prepare('SELECT count(*) AS n FROM metric_series').get() as { n: number }).n,
        0,
        "the node's own service.db holds none of it",
      );
    } finally {
      await node?.stop();
      rmSync(dataDir, { recursive: true, force: true });
      await db.drop();
    }
  });
});
