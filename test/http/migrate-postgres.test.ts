// `service migrate` (SPEC 14, docs/cluster.md): a data directory holding every kind of record, built
// through the real server's HTTP API, is copied by the CLI into an empty PostgreSQL database (every
// service table, every project's buckets in its metrics-cluster schema), and back into a new
// directory; the copy back holds the same rows and the same buckets, and a server started on it
// answers as the original does. The command refuses a non-empty target and a running service, and
// a copy that PostgreSQL alters on the way (a trigger) is caught by the check and rolled back.
// Against the local PostgreSQL (scratch databases, dropped at the end); skipped without one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type Agent,
  embeddedOnly,
} from '../helpers/server';
import { createMonitor, monitorBody } from '../helpers/monitors';
import { runCli } from '../helpers/process';
import { SERVERS, scratchDatabase, skipReason } from '../drivers/network';
import { EMBEDDED_STORE_TABLES, PG_SCHEMA_VERSION } from '../../src/storage/pg/migrations';
import { DecimalSum } from '../../src/lib/decimal-sum';

const skip = skipReason('postgres');
const MIN = 60_000;
const work = mkdtempSync(path.join(os.tmpdir(), 'svc-migrate-'));
const urlOf = (name: string) =>
  `postgres://postgres@${SERVERS.postgres.host}:${SERVERS.postgres.port}/${name}`;

type Rows = Map<string, unknown[][]>;

/** Every row of every service table (integers exact), each table sorted. */
function dumpTables(dataDir: string): Rows {
  const db = new Database(path.join(dataDir, 'service.db'), { readonly: true });
  try {
    const names = db
      .prepare(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
      )
      .pluck()
      .all() as string[];
    const out: Rows = new Map();
    for (const t of names.filter((n) => !EMBEDDED_STORE_TABLES.includes(n))) {
      const rows = db.prepare(`SELECT * FROM "${t}"`).raw(true).safeIntegers(true).all() as unknown[][];
      out.set(
        t,
        rows.map((r) => r).sort((a, b) => (JSON.stringify(a, big) < JSON.stringify(b, big) ? -1 : 1)),
      );
    }
    return out;
  } finally {
    db.close();
  }
}
const big = (_: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

function flatten(node: unknown, prefix: string, out: Record<string, number>): void {
  if (typeof node === 'number') out[prefix] = node;
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
}

/** Every bucket of the embedded store as flat leaves, by `source key granularity bucket`. */
function dumpBuckets(dataDir: string): Map<string, Record<string, number>> {
  const db = new Database(path.join(dataDir, 'service.db'), { readonly: true });
  try {
    const out = new Map<string, Record<string, number>>();
    const rows = db
      .prepare(
        `SELECT s.source_id, s.key, s.granularity, b.bucket, b.data FROM metric_buckets b
         JOIN metric_series s ON s.id = b.series_id`,
      )
      .raw()
      .all() as Array<[string, string, string, number, string]>;
    for (const [source, key, g, bucket, data] of rows) {
      const leaves: Record<string, number> = {};
      flatten(JSON.parse(data), '', leaves);
      out.set(`${source} ${key} ${g} ${bucket}`, leaves);
    }
    const counts = db
      .prepare(
        `SELECT s.source_id, s.key, s.granularity, c.bucket, c.key, c.count FROM metric_key_counts c
         JOIN metric_series s ON s.id = c.series_id`,
      )
      .raw()
      .all() as Array<[string, string, string, number, string, number]>;
    for (const [source, key, g, bucket, counted, count] of counts) {
      const name = `${source} ${key} ${g} ${bucket}`;
      out.set(name, { ...out.get(name), [`keys.${counted}`]: count });
    }
    return out;
  } finally {
    db.close();
  }
}

/** `project <id> <g>: n buckets, n leaves, sum s` lines, as the command prints them, from a dump. */
function expectedSummaries(buckets: Map<string, Record<string, number>>, projectId: string): string[] {
  const by = new Map<string, { buckets: number; leaves: number; sum: DecimalSum }>();
  for (const [name, leaves] of buckets) {
    const [source, , g] = name.split(' ');
    if (source !== projectId) continue;
    const entry = by.get(g!) ?? { buckets: 0, leaves: 0, sum: new DecimalSum() };
    entry.buckets += 1;
    for (const v of Object.values(leaves)) {
      entry.leaves += 1;
      entry.sum.add(v);
    }
    by.set(g!, entry);
  }
  return [...by.keys()].sort().map((g) => {
    const e = by.get(g)!;
    const sum = e.sum.toString(); // printed exact, or with 17 digits when long
    const shown = sum.length <= 32 ? sum : Number(sum).toPrecision(17);
    return `project ${projectId} ${g}: ${e.buckets} buckets, ${e.leaves} leaves, sum ${shown}`;
  });
}

describe(
  'service migrate to PostgreSQL and back',
  { skip: embeddedOnly("moves a single node's data directory").skip || skip },
  () => {
    const CLUSTER = '5b0c2d8e-7a41-4c55-9e3f-0a1b2c3d4e5f';
    const backDir = path.join(work, 'back');
    let dataDir = '';
    let clusters = '';
    let agent: Agent;
    const projects: string[] = [];
    let clusterProject = '';
    let dashboardId = '';
    let target = '';
    const scratches: Array<Awaited<ReturnType<typeof scratchDatabase>>> = [];
    let original: Rows;
    let originalBuckets: Map<string, Record<string, number>>;

    const scratchUrl = async () => {
      const db = await scratchDatabase('postgres');
      scratches.push(db);
      return urlOf(db.name);
    };

    before(async () => {
      clusters = JSON.stringify([{ id: CLUSTER, url: await scratchUrl() }]);
      const base = Math.floor(Date.now() / MIN) * MIN - 120 * MIN;
      let clock = base;
      const server = await startTestServer(
        { SERVICE_CLUSTERS: clusters },
        { now: () => clock, alertsTimer: false },
      );
      dataDir = server.dataDir;
      const api = async (
        method: string,
        url: string,
        body?: unknown,
        token = agent.userToken,
        sourceId?: string,
      ) => {
        const res = await request(server, method, `/api/v1${url}`, body, { token, sourceId });
        assert.ok(res.status < 300, `${method} ${url}: ${res.status} ${res.text}`);
        return res.body?.data;
      };
      try {
        agent = await signupWithOrganization(server);
        // Two projects with several granularities, zones and retention; a project on a metrics
        // cluster (its row moves, its metrics are already in PostgreSQL); a database source whose
        // credentials are encrypted; source tokens.
        const p1 = await api('POST', '/bootstrap/projects', {
          name: 'Shop',
          granularities: ['1m', '1h', '1d'],
          time_zone: 'Europe/Bratislava',
        });
        const p2 = await api('POST', '/bootstrap/projects', {
          name: 'Ops',
          granularities: ['1h', '1w'],
          retention: { '1h': '90d' },
        });
        projects.push(p1.source.id, p2.source.id);
        const remote = await api('POST', '/bootstrap/projects', {
          name: 'Remote',
          project_cluster_id: CLUSTER,
        });
        clusterProject = remote.source.id;
        await api('POST', '/bootstrap/databases', {
          display_name: 'Warehouse',
          driver: 'postgres',
          host: 'db.internal',
          database_name: 'metrics',
          username: 'svc',
          password: 'a secret password',
        });
        await api('POST', '/bootstrap/databases', {
          display_name: 'Local file',
          driver: 'sqlite',
          file_path: 'local.sqlite',
        });
        const tokens: string[] = [];
        for (const id of projects) {
          const t = await api('POST', '/bootstrap/source-tokens', { source_type: 'project', source_id: id });
          tokens.push(t.token.value);
        }
        // Metrics: nested values, fractions, an assert, a leaf large enough to be checked for
        // overflow (metric_large_leaves), several keys (the system key counts them).
        const points = Array.from({ length: 400 }, (_, i) => ({
          key: `shop.orders.k${i % 7}`,
          at: new Date(base - 3 * 86_400_000 + i * 617_000).toISOString(),
          values: { count: 1, amount: { net: (i % 13) + 0.1, tax: 0.25 }, ratio: 1 / ((i % 5) + 3) },
        }));
        await api('POST', '/metrics/batch', { points }, tokens[0], projects[0]);
        const at = new Date(base).toISOString();
        const assertPoint = { key: 'shop.stock', at, values: { level: 41.5 }, operation: 'assert' };
        await api('POST', '/metrics', assertPoint, tokens[0], projects[0]);
        await api('POST', '/metrics', { key: 'huge', at, values: { v: 1.5e300 } }, tokens[0], projects[0]);
        const hosts = Array.from({ length: 60 }, (_, i) => ({
          key: `host${i % 3}.cpu`,
          at: new Date(base - i * 3_600_000).toISOString(),
          values: { load: i * 0.5, 'disk.used': 1e-7 * i },
        }));
        await api('POST', '/metrics/batch', { points: hosts }, tokens[1], projects[1]);
        // Members: an accepted invitation (a second user's membership) and a pending one.
        const invited = await api('POST', '/organization/invitations', { role: 'editor' });
        const member = await request(server, 'POST', '/api/v1/bootstrap/signup', {
          email: uniqueEmail('member'),
          password: 'correct horse battery',
        });
        assert.equal(member.status, 201, member.text);
        await api('POST', '/invitations/accept', { token: invited.token }, member.body.data.token.value);
        await api('POST', '/organization/invitations', { role: 'viewer' });
        // A web session, a dashboard in a group (changed once), a share link, a transponder.
        const session = await request(
          server,
          'POST',
          '/api/v1/session',
          { email: agent.email, password: agent.password },
          { headers: { 'x-service-csrf': '1' } },
        );
        assert.equal(session.status, 201, session.text);
        const group = await api('POST', '/dashboard-groups', { name: 'Operations' });
        const dashboard = await api('POST', '/dashboards', {
          name: 'Orders',
          key: 'shop.orders.k1',
          source: { type: 'project', id: projects[0] },
          group_id: group.id,
        });
        dashboardId = dashboard.id;
        await api('PUT', `/dashboards/${dashboard.id}`, {
          name: 'Orders (net)',
          updated_at: dashboard.updated_at,
        });
        await api('POST', `/dashboards/${dashboard.id}/shares`);
        const transponder = {
          name: 'Net share',
          key: 'shop.orders.k1',
          paths: ['amount.net', 'count'],
          expression: 'a / b',
          response: 'net_per_order',
        };
        await api('POST', '/transponders', transponder, tokens[0], projects[0]);
        // Alerts: a channel with an encrypted secret, a monitor that fires (instance, history and an
        // outbox row, never delivered: the outbox is not drained).
        const channel = await api('POST', '/channels', {
          name: 'Ops hook',
          type: 'webhook',
          secrets: { url: 'https://hooks.example.com/services/T000/B000/XXXX' },
        });
        const monitor = monitorBody(projects[0]!, { delivery_channels: [{ channel_id: channel.id }] });
        await createMonitor(server, agent.userToken, monitor);
        const minute = base + 5 * MIN;
        const cpu = { key: 'cpu', at: new Date(minute - MIN + 10_000).toISOString(), values: { load: 99 } };
        await api('POST', '/metrics', cpu, tokens[0], projects[0]);
        clock = minute + 30_000;
        const round = await server.deps.ops.alerts.evaluator.round();
        assert.ok(round.queued >= 1, 'the monitor fired and queued a notification');
      } finally {
        await server.close(); // the data directory stays: it is what the command copies
      }
      original = dumpTables(dataDir);
      originalBuckets = dumpBuckets(dataDir);
      target = await scratchUrl();
    });

    after(async () => {
      for (const s of scratches) await s.drop().catch(() => undefined);
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    });

    test('the data directory holds every kind of record', () => {
      const empty = [...original].filter(([, rows]) => rows.length === 0).map(([t]) => t);
      assert.deepEqual(empty, ['monitor_reports'], 'every service table but the report runs holds rows');
      for (const id of projects) {
        assert.ok([...originalBuckets.keys()].some((k) => k.startsWith(`${id} __system__key__ `)));
      }
      const granularities = new Set([...originalBuckets.keys()].map((k) => k.split(' ')[2]));
      assert.deepEqual([...granularities].sort(), ['1d', '1h', '1m', '1w']);
    });

    test('to PostgreSQL: every table and every bucket, printed and checked', async () => {
      const res = runCli(['migrate', '--to', target, '--data', dataDir]);
      assert.equal(res.status, 0, res.stderr + res.stdout);
      const lines = res.stdout.split('\n');
      for (const [table, rows] of original)
        assert.ok(lines.includes(`table ${table}: ${rows.length} rows`), table);
      for (const id of projects) {
        const expected = expectedSummaries(originalBuckets, id);
        assert.ok(expected.length >= 2);
        for (const line of expected) assert.ok(lines.includes(line), `${line}\n${res.stdout}`);
      }
      assert.ok(lines.includes(`project ${clusterProject}: its metrics stay on metrics cluster ${CLUSTER}`));
      assert.match(res.stdout, /checked: 19 tables \(rows and values\) and 2 projects .* match/);
      assert.match(
        res.stdout,
        /note: 2 sources and channels hold secrets encrypted with the key in .*secret\.key/,
      );

      // Read back independently of the command: every row of every table, value for value.
      const client = new pg.Client({
        connectionString: target,
        types: {
          getTypeParser: ((oid: number, f: 'text') =>
            oid === 20 ? BigInt : pg.types.getTypeParser(oid, f)) as never,
        },
      });
      await client.connect();
      try {
        const version = await client.query('SELECT max(version) AS v FROM schema_migrations');
        assert.equal(version.rows[0].v, BigInt(PG_SCHEMA_VERSION));
        for (const [table, rows] of original) {
          const got = (await client.query({ text: `SELECT * FROM "${table}"`, rowMode: 'array' }))
            .rows as unknown[][];
          got.sort((a, b) => (JSON.stringify(a, big) < JSON.stringify(b, big) ? -1 : 1));
          assert.deepEqual(got, rows, table);
        }
        const buckets = new Map<string, Record<string, number>>();
        for (const id of projects) {
          const schema = `svc_project_${id.replace(/-/g, '')}`;
          const { rows } = await client.query<{
            key: string;
            granularity: string;
            b: bigint;
            data: Record<string, number>;
          }>(
            `SELECT key, granularity, extract(epoch FROM at)::bigint AS b, data FROM "${schema}".trifle_stats`,
          );
          for (const r of rows) buckets.set(`${id} ${r.key} ${r.granularity} ${r.b}`, r.data);
        }
        assert.deepEqual(buckets, originalBuckets);
        const remote = await client.query('SELECT to_regnamespace($1) AS s', [
          `svc_project_${clusterProject.replace(/-/g, '')}`,
        ]);
        assert.equal(remote.rows[0].s, null, 'the cluster project has no schema in the target');
        // The identity of an outbox row continues past the copied ids.
        const next = await client.query(
          "INSERT INTO alert_outbox (idempotency_key, organization_id, channel_id, notification, next_attempt_at, created_at) VALUES ('x', 'o', 'c', '{}', 0, 0) RETURNING id",
        );
        const maxId = original
          .get('alert_outbox')!
          .reduce((m, r) => ((r[0] as bigint) > m ? (r[0] as bigint) : m), 0n);
        assert.equal(next.rows[0].id, maxId + 1n);
        await client.query("DELETE FROM alert_outbox WHERE idempotency_key = 'x'");
      } finally {
        await client.end();
      }
    });

    test('refuses a target that is not empty, a running service and a directory that is not empty', () => {
      const again = runCli(['migrate', '--to', target, '--data', dataDir]);
      assert.equal(again.status, 1, again.stdout);
      assert.match(
        again.stderr,
        /^service: postgres:\/\/.* is not empty \(it holds .*\): migrate into a new, empty database\n$/,
      );

      const pidFile = path.join(dataDir, 'service.pid');
      writeFileSync(pidFile, JSON.stringify({ pid: process.pid, url: 'http://127.0.0.1:1' }));
      try {
        const running = runCli(['migrate', '--to', target, '--data', dataDir]);
        assert.equal(running.status, 1);
        assert.match(
          running.stderr,
          new RegExp(`a service \\(pid ${process.pid}, .*\\) is running on .*: stop it first`),
        );
      } finally {
        rmSync(pidFile, { force: true });
      }

      const full = path.join(work, 'full');
      writeFileSync(path.join(work, 'x'), 'x');
      const notEmpty = runCli(['migrate', '--from', target, '--to', work]);
      assert.equal(notEmpty.status, 1);
      assert.match(notEmpty.stderr, /is not empty: migrate into a new or empty directory/);
      assert.equal(runCli(['migrate', '--to', full]).status, 2, 'a directory is not a --to of the way there');
    });

    test('back into a new directory: the same rows and buckets, and a server on it answers alike', async () => {
      // A project schema of no project (a removal cut short) is named, not copied.
      const orphan = `svc_project_${'ab'.repeat(16)}`;
      const admin = new pg.Client({ connectionString: target });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${orphan}; CREATE TABLE ${orphan}.trifle_stats (key text)`);
      await admin.end();
      const res = runCli(['migrate', '--from', target, '--to', backDir]);
      assert.equal(res.status, 0, res.stderr + res.stdout);
      const lines = res.stdout.split('\n');
      for (const id of projects) {
        for (const line of expectedSummaries(originalBuckets, id)) assert.ok(lines.includes(line), line);
      }
      assert.ok(lines.includes(`not copied: 1 project schemas of no project (${orphan})`), res.stdout);
      assert.deepEqual(dumpTables(backDir), original);
      assert.deepEqual(dumpBuckets(backDir), originalBuckets);

      copyFileSync(path.join(dataDir, 'secret.key'), path.join(backDir, 'secret.key'));
      const a = await startTestServer({ SERVICE_DATA_DIR: dataDir, SERVICE_CLUSTERS: clusters });
      const b = await startTestServer({ SERVICE_DATA_DIR: backDir, SERVICE_CLUSTERS: clusters });
      try {
        const token = agent.userToken;
        const from = new Date(Date.now() - 5 * 86_400_000).toISOString();
        const to = new Date(Date.now() + 86_400_000).toISOString();
        for (const [id, key, g] of [
          [projects[0], 'shop.orders.k1', '1h'],
          [projects[0], '__system__key__', '1d'],
          [projects[0], 'huge', '1m'],
          [projects[1], 'host1.cpu', '1w'],
        ] as const) {
          const url = `/api/v1/sources/${id}/metrics?key=${key}&granularity=${g}&from=${from}&to=${to}`;
          const one = await request(a, 'GET', url, undefined, { token });
          const two = await request(b, 'GET', url, undefined, { token });
          assert.equal(one.status, 200, one.text);
          assert.deepEqual(two.body, one.body, url);
        }
        const dash = (s: typeof a) =>
          request(s, 'GET', `/api/v1/dashboards/${dashboardId}`, undefined, { token });
        assert.deepEqual((await dash(b)).body, (await dash(a)).body);
        const login = await request(b, 'POST', '/api/v1/bootstrap/login', {
          email: agent.email,
          password: agent.password,
        });
        assert.equal(login.status, 201, login.text);
      } finally {
        await a.close();
        await b.close();
      }
    });

    test('a copy altered or refused on the way is caught, rolled back, and can be run again', async () => {
      const url = await scratchUrl();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      try {
        // An event trigger (not a table: the target still counts as empty) that adds a row trigger to
        // each project's trifle_stats as the command creates it, slipping a leaf into every bucket,
        // and one to dashboards, renaming each (a value changed, the row count the same).
        await admin.query(`
        CREATE FUNCTION public.slip() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.data := NEW.data || '{"slipped": 1}'::jsonb; RETURN NEW; END $$;
        CREATE FUNCTION public.rename() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.name := NEW.name || ' (renamed)'; RETURN NEW; END $$;
        CREATE FUNCTION public.add_slip() RETURNS event_trigger LANGUAGE plpgsql AS $$
        DECLARE r record;
        BEGIN
          FOR r IN SELECT * FROM pg_event_trigger_ddl_commands()
            WHERE command_tag = 'CREATE TABLE' AND object_identity LIKE '%.trifle_stats' LOOP
            EXECUTE format('CREATE TRIGGER slip BEFORE INSERT ON %s FOR EACH ROW EXECUTE FUNCTION public.slip()', r.object_identity);
          END LOOP;
          FOR r IN SELECT * FROM pg_event_trigger_ddl_commands()
            WHERE command_tag = 'CREATE TABLE' AND object_identity = 'public.dashboards' LOOP
            CREATE TRIGGER rename BEFORE INSERT ON public.dashboards FOR EACH ROW EXECUTE FUNCTION public.rename();
          END LOOP;
        END $$;
        CREATE EVENT TRIGGER add_slip ON ddl_command_end EXECUTE FUNCTION public.add_slip();`);
        const res = runCli(['migrate', '--to', url, '--data', dataDir]);
        assert.equal(res.status, 1, res.stdout);
        assert.match(
          res.stderr,
          /^service: the copy does not match its source, nothing was kept: table dashboards: the copied values differ; project .* copied as .*\n$/,
        );
        const users = await admin.query('SELECT count(*)::int AS n FROM users');
        assert.equal(users.rows[0].n, 0, 'rolled back');
        const schemas = await admin.query(
          "SELECT count(*)::int AS n FROM pg_namespace WHERE nspname LIKE 'svc_project_%'",
        );
        assert.equal(schemas.rows[0].n, 0);

        // A write that fails half-way (the shop's keys refused: its first 1,000 rows hold some, and
        // more rows follow): one line, nothing kept.
        await admin.query(`CREATE OR REPLACE FUNCTION public.slip() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.key LIKE 'shop.%' THEN RAISE EXCEPTION 'refused by the test'; END IF;
          RETURN NEW;
        END $$`);
        const failed = runCli(['migrate', '--to', url, '--data', dataDir]);
        assert.equal(failed.status, 1, failed.stdout);
        assert.equal(failed.stderr, 'service: migrate failed: refused by the test\n');
        assert.equal((await admin.query('SELECT count(*)::int AS n FROM users')).rows[0].n, 0);
        assert.ok(!readdirSync(dataDir).some((f) => f.startsWith('.migrate-')), 'the snapshot is removed');

        await admin.query('DROP EVENT TRIGGER add_slip; DROP TRIGGER rename ON dashboards');
        const retry = runCli(['migrate', '--to', url, '--data', dataDir]);
        assert.equal(retry.status, 0, retry.stderr);
      } finally {
        await admin.end();
      }
    });
  },
);
