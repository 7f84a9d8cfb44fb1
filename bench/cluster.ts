// Ingest into a project on a metrics cluster (docs/cluster.md), for each merge window
// (`merge_window_ms`), beside the same load into a project of the embedded store (service.db), wrk
// in its own process, into a scratch PostgreSQL database. Two parts (BENCH_PART=live,single):
//   live:   bench/ingest.ts's live workload (1,000 of 5,000 keys per batch, each body its own
//           minute, 3 leaves per point, the 7 default granularities) through
//           POST /api/v1/metrics/batch, 8 connections in all;
//   single: bench/ingest.ts's single point (one key, 3 leaves) through POST /api/v1/metrics,
//           32 connections in all: every request adds to the same rows, the hot key's and the
//           system key's current buckets, the case the merge window is for.
// Needs wrk and the PostgreSQL at 127.0.0.1:5432 (user postgres, trust; TEST_PG_HOST /
// TEST_PG_PORT as the tests).
// Run: node --import tsx bench/cluster.ts
//   BENCH_SECONDS=15       measured seconds per run (after 2 s of warm-up)
//   BENCH_WINDOWS=0,20,50,200  the merge windows (ms) to compare; 0 is the next turn of the event loop
//   BENCH_ROUNDS=2         rounds; each runs every variant once, in a rotated order, so that the
//                          variants alternate in the same minutes of a shared machine
//   BENCH_EMBEDDED=0       leaves out the embedded-store figure
//   BENCH_NODES=1          service processes writing the same project on the same cluster
//   BENCH_CONTROL=postgres the nodes' control plane (accounts, tokens, sources): `postgres` runs every
//                          node in cluster mode on one scratch database of its own (`storage.url`),
//                          `sqlite` gives the node its own service.db; default postgres for more
//                          than one node, sqlite for one (how the 1-node figures were taken)
//   BENCH_SERVICE=dist/service  the single executable instead of src/main.ts through tsx
//   BENCH_PG_TIMEOUT_MS=30000  the nodes' network.timeout_ms (statement timeout; the service's
//                          default is 5000). The figures in docs/cluster.md were taken with 30 s:
//                          then a commit's add-only rows were one statement, which at 5 s was
//                          cancelled on a busy machine; statements now hold at most 2,000 rows
//
// Every run starts on a fresh scratch database and fresh service processes. Per run it prints:
// the rate acknowledged (leaf values/s and requests/s, all nodes together), PostgreSQL's commits per
// second in the scratch database (pg_stat_database.xact_commit), rows written per point (the
// project schema's tuples inserted + updated, pg_stat_user_tables, over the points the nodes
// committed, their own count from GET /metrics), the nodes' CPU per 1,000 points, PostgreSQL's CPU
// (the scratch database's backends, per commit and per 1,000 points; and the server's background
// writers, which serve every database of the server), the latency p50/p99 of the requests (wrk),
// and the load average. A backend reports its counts to pg_stat_* only now and then, but always
// when it ends: so the database's backends are ended (pg_terminate_backend, waiting) just before
// and just after each run; the service's pool connects again.
//
// Nodes > 1 (or BENCH_CONTROL=postgres): SPEC 14's cluster mode. Every node starts on
// `storage.url`, one scratch database holding the service's own tables (the control plane), with
// its own data directory and the same secrets key; the account, project and token are made through
// the first node and the others find them there. The project's buckets stay in the `[[clusters]]`
// entry's own scratch database (so that its merge window can be set per run, and its commits and
// tuples are counted apart from the control plane's); the control plane's commits per second are
// printed beside them (token and source look-ups, cached on each node, and the nodes' lease
// heartbeats). All nodes, PostgreSQL and wrk share this machine's cores, so the aggregate rate of N
// nodes here is no figure for N machines: commits, rows per point and CPU per point are
// (docs/cluster.md reasons from them).
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import {
  cpuSeconds,
  fmt,
  projectHeaders,
  seeded,
  serviceLabel,
  spawnService,
  waitIdle,
  type ChildServer,
} from './helpers';
import { runWrk, type WrkResult } from './wrk';
import { WORKLOADS } from './workloads';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const NODES = Number(process.env.BENCH_NODES ?? 1);
const CONTROL = process.env.BENCH_CONTROL ?? (NODES > 1 ? 'postgres' : 'sqlite');
if (CONTROL !== 'postgres' && CONTROL !== 'sqlite') throw new Error('BENCH_CONTROL is postgres or sqlite');
const WINDOWS = (process.env.BENCH_WINDOWS ?? '0,20,50,200').split(',').map(Number);
const EMBEDDED = process.env.BENCH_EMBEDDED !== '0';
const PG_TIMEOUT_MS = process.env.BENCH_PG_TIMEOUT_MS ?? '30000';
const CLUSTER_ID = '0b5e7a1c-2d3f-4a5b-8c6d-7e8f9a0b1c2d';
const PG = {
  host: process.env.TEST_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.TEST_PG_PORT ?? 5432),
  user: 'postgres',
};
const LEAVES_PER_POINT = 3;

/** What the clients send: a path, the bodies wrk cycles through, and the points in each. */
interface Part {
  name: string;
  path: string;
  bodies: string[];
  pointsPerRequest: number;
  /** client connections in all, spread over the nodes */
  connections: number;
}

const PARTS: Part[] = [
  {
    name: 'live',
    path: '/api/v1/metrics/batch',
    bodies: WORKLOADS.find((w) => w.name === 'live')!.bodies(seeded(42)),
    pointsPerRequest: 1000,
    connections: 8,
  },
  {
    // bench/ingest.ts's single point: every request adds to the same rows (a hot key's current
    // buckets and the system key's), the case the merge window is for.
    name: 'single',
    path: '/api/v1/metrics',
    bodies: [
      JSON.stringify({
        key: 'bench.single',
        at: '2026-01-24T10:00:00Z',
        values: { count: 1, amount: { net: 2.5, tax: 0.5 } },
      }),
    ],
    pointsPerRequest: 1,
    connections: 32,
  },
].filter((p) => (process.env.BENCH_PART ?? 'live,single').split(',').includes(p.name));

const loadAverage = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** CPU seconds of a process, 0 when it is gone (a backend that ended). */
function cpuOf(pid: number): number {
  try {
    return cpuSeconds(pid);
  } catch {
    return 0;
  }
}

/** PostgreSQL's background processes (checkpointer, writers), which serve every database. */
function postgresBackground(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (/^postgres: .*(checkpointer|background writer|walwriter)/.test(cmd)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

async function admin<T>(work: (client: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> {
  const client = new pg.Client({ ...PG, database });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** The counts PostgreSQL holds for the scratch database and the project's schema. */
interface PgCounts {
  commits: number;
  tuples: number;
}

/**
 * Ends the database's backends (each reports its counts when it exits; waiting up to 5 s for each),
 * then reads the counts. The tuples are read by a connection to the database itself: at the start
 * it is ended before the commits are read, at the end it connects after, so that its own
 * transactions are outside the commits counted.
 */
async function pgCounts(database: string, schema: string, at: 'start' | 'end'): Promise<PgCounts> {
  const tuples = () =>
    admin(async (c) => {
      const r = await c.query(
        'SELECT COALESCE(sum(n_tup_ins + n_tup_upd), 0)::bigint AS n FROM pg_stat_user_tables WHERE schemaname = $1',
        [schema],
      );
      return Number(r.rows[0].n);
    }, database);
  const commits = () =>
    admin(async (c) => {
      await c.query(
        'SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      const r = await c.query('SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = $1', [
        database,
      ]);
      return Number(r.rows[0].n);
    });
  if (at === 'start') {
    await commits(); // the warm-up's counts reported
    const t = await tuples();
    return { tuples: t, commits: await commits() };
  }
  const c = await commits();
  return { commits: c, tuples: await tuples() };
}

/** The database's backends alive now (the service's pooled connections). */
async function backendPids(database: string): Promise<number[]> {
  return admin(async (c) => {
    const r = await c.query(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    return r.rows.map((row) => Number(row.pid));
  });
}

/**
 * Waits until the nodes have committed what they took: no statement of theirs running in the
 * database and their processes idle, twice in a row a quarter second apart.
 */
async function waitQuiet(database: string, nodes: ChildServer[]): Promise<void> {
  let quiet = 0;
  let last = nodes.map((n) => cpuSeconds(n.pid));
  for (let i = 0; quiet < 2; i++) {
    if (i > 1200) throw new Error('the nodes are still writing after 5 minutes');
    await sleep(250);
    const active = await admin(async (c) => {
      const r = await c.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state <> 'idle' AND pid <> pg_backend_pid()",
        [database],
      );
      return r.rows[0].n as number;
    });
    const now = nodes.map((n) => cpuSeconds(n.pid));
    const idle = now.every((cpu, k) => cpu - last[k]! < 0.025);
    quiet = active === 0 && idle ? quiet + 1 : 0;
    last = now;
  }
}

/**
 * Samples the database's backends every 100 ms until stopped: how many run a statement and how
 * many of those wait for a lock another transaction holds (nodes updating the same rows).
 */
function sampleLocks(database: string): { stop(): Promise<{ active: number; waiting: number }> } {
  const client = new pg.Client({ ...PG, database: 'postgres' });
  let active = 0;
  let waiting = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const r = await client.query(
        "SELECT count(*) FILTER (WHERE state = 'active')::int AS active, count(*) FILTER (WHERE state = 'active' AND wait_event_type = 'Lock')::int AS waiting FROM pg_stat_activity WHERE datname = $1",
        [database],
      );
      active += r.rows[0].active;
      waiting += r.rows[0].waiting;
      await sleep(100);
    }
    await client.end();
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { active, waiting };
    },
  };
}

/** Points a node has committed so far (its own count, GET /metrics). */
async function committedPoints(node: ChildServer): Promise<number | null> {
  const res = await fetch(`${node.url}/metrics`);
  if (!res.ok) return null;
  const m = /^service_ingested_points_total(?:\{\})? (\d+)/m.exec(await res.text());
  return m ? Number(m[1]) : null;
}

interface Nodes {
  nodes: ChildServer[];
  headers: Record<string, string>;
  schema: string;
}

/**
 * N nodes with the cluster configured and one project on it, made through the first node. With a
 * control database every node runs in cluster mode on it (`storage.url`, the same secrets key),
 * started together (their migrations meet on the advisory lock); else the one node keeps its own
 * service.db.
 */
async function startNodes(
  n: number,
  env: Record<string, string>,
  project: Record<string, unknown>,
  control: string | null,
): Promise<Nodes> {
  if (control === null && n > 1) throw new Error('more than one node needs the control plane on PostgreSQL');
  const nodeEnv =
    control === null
      ? env
      : {
          ...env,
          SERVICE_STORAGE_URL: `postgres://${PG.user}@${PG.host}:${PG.port}/${control}`,
          SERVICE_SECRET_KEY: randomBytes(32).toString('hex'),
        };
  const nodes = await Promise.all(Array.from({ length: n }, () => spawnService(nodeEnv)));
  const headers = await projectHeaders(nodes[0]!, project);
  const schema = `svc_project_${headers['x-service-source-id']!.replace(/-/g, '')}`;
  return { nodes, headers, schema };
}

async function stopNodes(started: Nodes): Promise<void> {
  await Promise.all(started.nodes.map((node) => node.stop()));
  for (const node of started.nodes) node.remove();
}

/** Transactions committed in a database so far (its backends ended first, so that they report). */
async function commitsOf(database: string): Promise<number> {
  return admin(async (c) => {
    await c.query(
      'SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
      [database],
    );
    const r = await c.query('SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = $1', [
      database,
    ]);
    return Number(r.rows[0].n);
  });
}

/** wrk against every node at once, CONNECTIONS spread over them. */
async function load(nodes: ChildServer[], headers: Record<string, string>, seconds: number, part: Part) {
  return Promise.all(
    nodes.map((node, i) =>
      runWrk({
        url: `${node.url}${part.path}`,
        headers,
        bodies: part.bodies,
        connections:
          Math.floor(part.connections / nodes.length) + (i < part.connections % nodes.length ? 1 : 0),
        threads: nodes.length > 1 ? 1 : 2,
        seconds,
      }),
    ),
  );
}

interface Figures {
  variant: string;
  load: string;
  leavesPerSecond: number;
  batchesPerSecond: number;
  p50: number;
  p99: number;
  failures: number;
  nodeCpuPer1000: number;
  commitsPerSecond?: number;
  pointsPerCommit?: number;
  rowsPerPoint?: number;
  pgCpuPerCommitMs?: number;
  pgCpuPer1000?: number;
  pgBackgroundCores?: number;
  nodeCores: number;
  pgCores?: number;
  /** embedded only: the rate that holds once the fold behind the run is counted */
  sustained?: number;
  /** cluster only: whether the stored sums hold every committed point once */
  sums?: string;
  /** cluster only: the share of running statements that waited for a row lock (samples) */
  lockWaits?: number;
  /** control plane on PostgreSQL only: its database's commits per second and its backends' CPU */
  controlCommitsPerSecond?: number;
  controlCores?: number;
}

/** The median (of an even count, the mean of the middle two). */
function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function wrkTotals(results: WrkResult[]) {
  const seconds = Math.max(...results.map((r) => r.seconds));
  const batches = results.reduce((n, r) => n + r.perSecond * r.seconds, 0);
  return {
    seconds,
    batches,
    p50: median(results.map((r) => r.p50)),
    p99: Math.max(...results.map((r) => r.p99)),
    failures: results.reduce((n, r) => n + r.failures, 0),
    failureText: results.map((r) => r.failureText).join('; '),
  };
}

async function clusterRun(part: Part, windowMs: number): Promise<Figures> {
  const database = `bench_cluster_${process.pid}_${Date.now().toString(36)}`;
  const control = CONTROL === 'postgres' ? `${database}_control` : null;
  await admin((c) => c.query(`CREATE DATABASE ${database}`));
  if (control) await admin((c) => c.query(`CREATE DATABASE ${control}`));
  const env = {
    SERVICE_NETWORK_TIMEOUT_MS: PG_TIMEOUT_MS,
    SERVICE_CLUSTERS: JSON.stringify([
      {
        id: CLUSTER_ID,
        url: `postgres://${PG.user}@${PG.host}:${PG.port}/${database}`,
        merge_window_ms: windowMs,
      },
    ]),
  };
  let started: Nodes | null = null;
  try {
    started = await startNodes(NODES, env, { project_cluster_id: CLUSTER_ID }, control);
    const { nodes, headers, schema } = started;
    await load(nodes, headers, 2, part); // warm-up: connections, prepared statements, the JIT
    await waitQuiet(database, nodes); // what the warm-up left in flight is committed
    const before = await pgCounts(database, schema, 'start');
    const control0 = control ? await commitsOf(control) : 0;
    await sleep(300); // the pools have dropped the ended connections
    const points0 = await Promise.all(nodes.map(committedPoints));
    const cpu0 = nodes.map((n) => cpuSeconds(n.pid));
    const background = postgresBackground();
    const bg0 = background.map(cpuOf);
    const locks = sampleLocks(database);
    const results = await load(nodes, headers, SECONDS, part);
    const loadNow = loadAverage();
    const { active, waiting } = await locks.stop();
    await waitQuiet(database, nodes); // requests wrk left unanswered at its end are committed (and counted)
    const cpu = nodes.reduce((s, n, i) => s + cpuSeconds(n.pid) - cpu0[i]!, 0);
    const points1 = await Promise.all(nodes.map(committedPoints));
    // The backends were all started after the counts were taken: their whole CPU is the run's.
    const pgCpu = (await backendPids(database)).reduce((s, pid) => s + cpuOf(pid), 0);
    const bgCpu = background.reduce((s, pid, i) => s + cpuOf(pid) - bg0[i]!, 0);
    const controlCpu = control ? (await backendPids(control)).reduce((s, pid) => s + cpuOf(pid), 0) : 0;
    const control1 = control ? await commitsOf(control) : 0;
    const after = await pgCounts(database, schema, 'end');
    const w = wrkTotals(results);
    const counted = points1.every((p) => p !== null) && points0.every((p) => p !== null);
    const points = counted
      ? points1.reduce((s, p, i) => s + p! - points0[i]!, 0)
      : w.batches * part.pointsPerRequest;
    const commits = after.commits - before.commits;
    if (w.failures) console.log(`  failures: ${w.failureText}`);
    // Every point the nodes committed since they started (warm-up included) is in the sums, once:
    // the system key's count in the coarsest bucket (all points fall in one year).
    const stored = await admin(async (c) => {
      const r = await c.query(
        `SELECT COALESCE(sum((data->>'count')::float8), 0) AS n FROM "${schema}".trifle_stats WHERE key = '__system__key__' AND granularity = '1y'`,
      );
      return Number(r.rows[0].n);
    }, database);
    const committed = points1.reduce((s: number, p) => s + (p ?? Number.NaN), 0);
    const exact = stored === committed ? 'exact' : `NOT EXACT: ${stored} stored, ${committed} committed`;
    return {
      variant: `${part.name}: cluster W=${windowMs} ms`,
      load: loadNow,
      leavesPerSecond: (w.batches * part.pointsPerRequest * LEAVES_PER_POINT) / w.seconds,
      batchesPerSecond: w.batches / w.seconds,
      p50: w.p50,
      p99: w.p99,
      failures: w.failures,
      nodeCpuPer1000: (cpu / points) * 1e6,
      nodeCores: cpu / w.seconds,
      commitsPerSecond: commits / w.seconds,
      pointsPerCommit: points / commits,
      rowsPerPoint: (after.tuples - before.tuples) / points,
      pgCpuPerCommitMs: (pgCpu / commits) * 1e3,
      pgCpuPer1000: (pgCpu / points) * 1e6,
      pgCores: pgCpu / w.seconds,
      pgBackgroundCores: bgCpu / w.seconds,
      sums: exact,
      lockWaits: active ? waiting / active : 0,
      controlCommitsPerSecond: control ? (control1 - control0) / w.seconds : undefined,
      controlCores: control ? controlCpu / w.seconds : undefined,
    };
  } finally {
    if (started) await stopNodes(started);
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`));
    if (control) await admin((c) => c.query(`DROP DATABASE IF EXISTS ${control} WITH (FORCE)`));
  }
}

/** The same workload into a project of the embedded store (one node, its write log and fold). */
async function embeddedRun(part: Part): Promise<Figures> {
  const service = await spawnService();
  try {
    const headers = await projectHeaders(service);
    await load([service], headers, 2, part);
    await waitIdle(service.pid); // the warm-up folded
    const cpu0 = cpuSeconds(service.pid);
    const results = await load([service], headers, SECONDS, part);
    const loadNow = loadAverage();
    const behind = await waitIdle(service.pid); // the fold of what was acknowledged
    const cpu = cpuSeconds(service.pid) - cpu0;
    const w = wrkTotals(results);
    const points = w.batches * part.pointsPerRequest;
    return {
      variant: `${part.name}: embedded (service.db)`,
      load: loadNow,
      leavesPerSecond: (points * LEAVES_PER_POINT) / w.seconds,
      sustained: (points * LEAVES_PER_POINT) / (w.seconds + behind),
      batchesPerSecond: w.batches / w.seconds,
      p50: w.p50,
      p99: w.p99,
      failures: w.failures,
      nodeCpuPer1000: (cpu / points) * 1e6,
      nodeCores: cpu / (w.seconds + behind),
    };
  } finally {
    await service.stop();
    service.remove();
  }
}

function line(f: Figures): string {
  const parts = [
    `${f.variant.padEnd(30)} ${fmt(f.leavesPerSecond).padStart(9)} leaf values/s`,
    `${fmt(f.batchesPerSecond, 1)} requests/s`,
  ];
  if (f.sustained !== undefined) parts.push(`${fmt(f.sustained)} sustained with the fold`);
  if (f.commitsPerSecond !== undefined)
    parts.push(
      `${fmt(f.commitsPerSecond, 1)} commits/s (${fmt(f.pointsPerCommit!, 0)} points each)`,
      `${fmt(f.rowsPerPoint!, 2)} rows/point`,
    );
  parts.push(`node CPU ${fmt(f.nodeCpuPer1000, 1)} ms/1,000 points (${fmt(f.nodeCores, 2)} cores)`);
  if (f.pgCpuPerCommitMs !== undefined)
    parts.push(
      `PostgreSQL backends ${fmt(f.pgCpuPerCommitMs, 1)} ms/commit, ${fmt(f.pgCpuPer1000!, 1)} ms/1,000 points ` +
        `(${fmt(f.pgCores!, 2)} cores; background writers ${fmt(f.pgBackgroundCores!, 2)} cores)`,
    );
  if (f.lockWaits !== undefined) parts.push(`${fmt(f.lockWaits * 100)}% of statements waiting on a lock`);
  if (f.controlCommitsPerSecond !== undefined)
    parts.push(
      `control plane ${fmt(f.controlCommitsPerSecond, 1)} commits/s (backends ${fmt(f.controlCores!, 2)} cores)`,
    );
  parts.push(`p50 ${fmt(f.p50, 1)} ms, p99 ${fmt(f.p99, 1)} ms`);
  if (f.failures) parts.push(`failures ${f.failures}`);
  if (f.sums) parts.push(`sums ${f.sums}`);
  parts.push(`load ${f.load}`);
  return parts.join(', ');
}

const variants: Array<{ name: string; run: () => Promise<Figures> }> = PARTS.flatMap((part) => [
  ...(EMBEDDED ? [{ name: `${part.name} embedded`, run: () => embeddedRun(part) }] : []),
  ...WINDOWS.map((w) => ({ name: `${part.name} W=${w}`, run: () => clusterRun(part, w) })),
]);

console.log(
  `${serviceLabel()}; ${new Date().toISOString()}; ${os.cpus().length} cores; nodes ${NODES}` +
    `, control plane ${CONTROL === 'postgres' ? 'on PostgreSQL (storage.url, cluster mode)' : 'in service.db'}; ` +
    `${PARTS.map((p) => `${p.name} (${p.connections} connections)`).join(', ')}, ${SECONDS} s per run, ${ROUNDS} rounds, ` +
    `statement timeout ${PG_TIMEOUT_MS} ms; load at start ${loadAverage()}`,
);
const all = new Map<string, Figures[]>();
for (let round = 0; round < ROUNDS; round++) {
  const order = variants.map((_, i) => variants[(i + round) % variants.length]!);
  for (const v of order) {
    const f = await v.run();
    console.log(`round ${round + 1}: ${line(f)}`);
    all.set(v.name, [...(all.get(v.name) ?? []), f]);
  }
}
if (ROUNDS > 1) {
  console.log('medians over the rounds:');
  for (const v of variants) {
    const runs = all.get(v.name)!;
    const pick = (get: (f: Figures) => number | undefined) => {
      const xs = runs.map(get).filter((x): x is number => x !== undefined);
      return xs.length ? median(xs) : undefined;
    };
    const m: Figures = {
      variant: runs[0]!.variant,
      load: runs.map((f) => f.load.split(' ')[0]).join('/'),
      leavesPerSecond: pick((f) => f.leavesPerSecond)!,
      batchesPerSecond: pick((f) => f.batchesPerSecond)!,
      sustained: pick((f) => f.sustained),
      p50: pick((f) => f.p50)!,
      p99: pick((f) => f.p99)!,
      failures: runs.reduce((n, f) => n + f.failures, 0),
      nodeCpuPer1000: pick((f) => f.nodeCpuPer1000)!,
      nodeCores: pick((f) => f.nodeCores)!,
      commitsPerSecond: pick((f) => f.commitsPerSecond),
      pointsPerCommit: pick((f) => f.pointsPerCommit),
      rowsPerPoint: pick((f) => f.rowsPerPoint),
      pgCpuPerCommitMs: pick((f) => f.pgCpuPerCommitMs),
      pgCpuPer1000: pick((f) => f.pgCpuPer1000),
      pgCores: pick((f) => f.pgCores),
      pgBackgroundCores: pick((f) => f.pgBackgroundCores),
      lockWaits: pick((f) => f.lockWaits),
      controlCommitsPerSecond: pick((f) => f.controlCommitsPerSecond),
      controlCores: pick((f) => f.controlCores),
      sums: runs.every((f) => f.sums === undefined) ? undefined : runs.map((f) => f.sums).join('/'),
    };
    console.log(`  ${line(m)}`);
  }
}
