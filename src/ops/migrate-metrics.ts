// Project metrics between the embedded store of service.db and a project's schema on a metrics
// cluster, for `service migrate` (migrate.ts). The cluster's layout is the one projects on a metrics
// cluster already use (drivers/network/clusters.ts: schema `svc_project_<id>`, Trifle::Stats'
// `separated` trifle_stats with flat dot paths in `data`), created by that layout's own setup.
//
// One embedded bucket is one cluster row: `metric_buckets.data` (a nested tree) flattened to dot
// paths, and for the system key its per-key counts (`metric_key_counts`) as `keys.<key>` leaves;
// `at` is the bucket start. The way back splits a row again. Numbers travel as the JSON text of the
// double (the shortest that reads back as the same double), so every value is exact both ways.
//
// Each side of a project is summarised per granularity as buckets, leaves and the exact decimal
// sum of the leaves: the embedded side computed here while reading its rows, the cluster side by
// PostgreSQL itself (count(*) and sum(numeric) over jsonb_each), so the check does not trust the
// code that copied.
import type pg from 'pg';
import type { Db } from '../storage/db';
import { projectSchema } from '../drivers/network/clusters';
import { createPostgresStore, type GuardedPool } from '../drivers/network/postgres';
import { PathSplitter, setLeaf, type Tree } from '../model/leaves';
import { SYSTEM_KEY, SYSTEM_KEYS_PREFIX } from '../model/write-set';
import { DecimalSum, normalizeDecimal } from '../lib/decimal-sum';

export interface GranularitySummary {
  buckets: number;
  leaves: number;
  sum: string;
}
/** by granularity, sorted by name */
export type MetricSummary = Record<string, GranularitySummary>;

/** One bucket of a series: key, granularity, bucket start (epoch seconds), flat leaves. */
export interface FlatBucket {
  key: string;
  granularity: string;
  bucket: number;
  leaves: Record<string, number>;
}

const ROWS_PER_INSERT = 1_000;
const PAGE_ROWS = 2_000;

function flatten(node: unknown, prefix: string, out: Record<string, number>): void {
  if (typeof node === 'number') out[prefix] = node;
  else if (typeof node === 'object' && node !== null && !Array.isArray(node)) {
    for (const [name, child] of Object.entries(node))
      flatten(child, prefix === '' ? name : `${prefix}.${name}`, out);
  }
}

class SummaryBuilder {
  private readonly by = new Map<string, { buckets: number; leaves: number; sum: DecimalSum }>();
  add(b: FlatBucket): void {
    let g = this.by.get(b.granularity);
    if (!g) this.by.set(b.granularity, (g = { buckets: 0, leaves: 0, sum: new DecimalSum() }));
    g.buckets += 1;
    for (const v of Object.values(b.leaves)) {
      g.leaves += 1;
      g.sum.add(v);
    }
  }
  summary(): MetricSummary {
    const out: MetricSummary = {};
    for (const name of [...this.by.keys()].sort()) {
      const g = this.by.get(name)!;
      out[name] = { buckets: g.buckets, leaves: g.leaves, sum: g.sum.toString() };
    }
    return out;
  }
}

/** The source ids that hold buckets in the embedded store. */
export function embeddedSourceIds(db: Db): string[] {
  return db
    .prepare('SELECT DISTINCT source_id FROM metric_series ORDER BY source_id')
    .pluck()
    .all() as string[];
}

/** A project's buckets in the embedded store, series by series, as flat leaves. */
export function* embeddedBuckets(db: Db, sourceId: string): Generator<FlatBucket> {
  const series = db
    .prepare<[string], { id: number; key: string; granularity: string }>(
      'SELECT id, key, granularity FROM metric_series WHERE source_id = ? ORDER BY key, granularity',
    )
    .all(sourceId);
  const buckets = db.prepare<[number], { bucket: number; data: string }>(
    'SELECT bucket, data FROM metric_buckets WHERE series_id = ? ORDER BY bucket',
  );
  const counts = db.prepare<[number], { bucket: number; key: string; count: number }>(
    'SELECT bucket, key, count FROM metric_key_counts WHERE series_id = ? ORDER BY bucket, key',
  );
  for (const s of series) {
    // Streamed in bucket order; the system key's per-key counts are merged in by bucket.
    const rows = buckets.iterate(s.id);
    const keyCounts = s.key === SYSTEM_KEY ? counts.iterate(s.id) : null;
    try {
      let row = rows.next();
      let count = keyCounts?.next();
      while (!row.done || (count && !count.done)) {
        const rowBucket = row.done ? Infinity : row.value.bucket;
        const countBucket = !count || count.done ? Infinity : count.value.bucket;
        const bucket = Math.min(rowBucket, countBucket);
        const leaves: Record<string, number> = {};
        if (rowBucket === bucket) {
          flatten(JSON.parse(row.value!.data), '', leaves);
          row = rows.next();
        }
        while (count && !count.done && count.value.bucket === bucket) {
          leaves[SYSTEM_KEYS_PREFIX + count.value.key] = count.value.count;
          count = keyCounts!.next();
        }
        yield { key: s.key, granularity: s.granularity, bucket, leaves };
      }
    } finally {
      // a consumer that stops early (a failed write) must not leave the connection busy
      rows.return?.();
      keyCounts?.return?.();
    }
  }
}

export function embeddedSummary(db: Db, sourceId: string): MetricSummary {
  const builder = new SummaryBuilder();
  for (const b of embeddedBuckets(db, sourceId)) builder.add(b);
  return builder.summary();
}

/** A GuardedPool over one connection, so the cluster layout's setup runs inside our transaction. */
function onConnection(client: pg.ClientBase): GuardedPool {
  const lent = { query: client.query.bind(client), release: () => undefined };
  const pool = { connect: async () => lent, query: client.query.bind(client) } as unknown as pg.Pool;
  return { get: async () => pool, guard: null, close: async () => undefined };
}

/** Creates the project's schema with the cluster layout's own setup, on `client`. */
export async function setupProjectSchema(
  client: pg.ClientBase,
  projectId: string,
  timeZone: string,
): Promise<void> {
  const store = createPostgresStore({
    mode: 'separated',
    timeZone,
    schema: projectSchema(projectId),
    pool: onConnection(client),
  });
  await store.setup();
}

/** Writes a project's embedded buckets into its schema; answers the embedded side's summary. */
export async function copyProjectToCluster(
  db: Db,
  client: pg.ClientBase,
  projectId: string,
): Promise<MetricSummary> {
  const table = `"${projectSchema(projectId)}".trifle_stats`;
  const sql =
    `INSERT INTO ${table} (key, granularity, at, data) ` +
    'SELECT k, g, to_timestamp(b), d::jsonb FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[]) AS r(k, g, b, d)';
  const builder = new SummaryBuilder();
  let batch: FlatBucket[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    batch = [];
    await client.query(sql, [
      rows.map((r) => r.key),
      rows.map((r) => r.granularity),
      rows.map((r) => r.bucket),
      rows.map((r) => JSON.stringify(r.leaves)),
    ]);
  };
  for (const b of embeddedBuckets(db, projectId)) {
    builder.add(b);
    batch.push(b);
    if (batch.length >= ROWS_PER_INSERT) await flush();
  }
  await flush();
  return builder.summary();
}

/** Whether the project has a schema with the layout's table on this database. */
export async function hasProjectSchema(client: pg.ClientBase, projectId: string): Promise<boolean> {
  const { rows } = await client.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [
    `"${projectSchema(projectId)}".trifle_stats`,
  ]);
  return rows[0]!.t !== null;
}

/** The cluster side's summary, computed by PostgreSQL. */
export async function clusterSummary(client: pg.ClientBase, projectId: string): Promise<MetricSummary> {
  if (!(await hasProjectSchema(client, projectId))) return {};
  const table = `"${projectSchema(projectId)}".trifle_stats`;
  const buckets = await client.query<{ granularity: string; n: string }>(
    `SELECT granularity, count(*)::text AS n FROM ${table} GROUP BY granularity`,
  );
  const leaves = await client.query<{ granularity: string; n: string; sum: string | null }>(
    `SELECT t.granularity, count(*)::text AS n, sum((e.value #>> '{}')::numeric)::text AS sum FROM ${table} t, ` +
      "jsonb_each(t.data) e WHERE jsonb_typeof(e.value) = 'number' GROUP BY t.granularity",
  );
  const out: MetricSummary = {};
  for (const r of [...buckets.rows].sort((a, b) => (a.granularity < b.granularity ? -1 : 1))) {
    out[r.granularity] = { buckets: Number(r.n), leaves: 0, sum: '0' };
  }
  for (const r of leaves.rows) {
    out[r.granularity]!.leaves = Number(r.n);
    out[r.granularity]!.sum = normalizeDecimal(r.sum ?? '0');
  }
  return out;
}

/** A project's cluster rows, page by page along the primary key. */
async function* clusterBuckets(client: pg.ClientBase, projectId: string): AsyncGenerator<FlatBucket> {
  const table = `"${projectSchema(projectId)}".trifle_stats`;
  let last: [string, string, string] | null = null;
  for (;;) {
    type ClusterRow = { key: string; granularity: string; b: string; at: string; data: string };
    const result: pg.QueryResult<ClusterRow> = await client.query<ClusterRow>(
      `SELECT key, granularity, floor(extract(epoch FROM at))::text AS b, at::text AS at, data::text AS data FROM ${table} ` +
        `${last ? 'WHERE (key, granularity, at) > ($1, $2, $3::timestamptz)' : ''} ORDER BY key, granularity, at LIMIT ${PAGE_ROWS}`,
      last ?? [],
    );
    const rows = result.rows;
    for (const r of rows) {
      const leaves: Record<string, number> = {};
      for (const [path, value] of Object.entries(JSON.parse(r.data) as Record<string, unknown>)) {
        if (typeof value === 'number') leaves[path] = value;
      }
      yield { key: r.key, granularity: r.granularity, bucket: Number(r.b), leaves };
    }
    if (rows.length < PAGE_ROWS) return;
    const tail: ClusterRow = rows[rows.length - 1]!;
    last = [tail.key, tail.granularity, tail.at];
  }
}

/**
 * Writes a project's cluster rows into the embedded store's tables of a new service.db (series,
 * buckets as nested trees, the system key's `keys.*` as per-key counts); answers the cluster
 * side's summary as read.
 */
export async function copyProjectFromCluster(
  client: pg.ClientBase,
  db: Db,
  projectId: string,
): Promise<MetricSummary> {
  const builder = new SummaryBuilder();
  if (!(await hasProjectSchema(client, projectId))) return builder.summary();
  const addSeries = db.prepare<[string, string, string]>(
    'INSERT INTO metric_series (source_id, key, granularity) VALUES (?, ?, ?)',
  );
  const addBucket = db.prepare<[number, number, string]>(
    'INSERT INTO metric_buckets (series_id, bucket, data, fold) VALUES (?, ?, ?, 0)',
  );
  const addCount = db.prepare<[number, number, string, number]>(
    'INSERT INTO metric_key_counts (series_id, bucket, key, count, fold) VALUES (?, ?, ?, ?, 0)',
  );
  const seriesIds = new Map<string, number>();
  const splitter = new PathSplitter();
  const write = db.transaction((rows: FlatBucket[]) => {
    for (const r of rows) {
      const name = `${r.key}\u0000${r.granularity}`;
      let id = seriesIds.get(name);
      if (id === undefined) {
        id = Number(addSeries.run(projectId, r.key, r.granularity).lastInsertRowid);
        seriesIds.set(name, id);
      }
      const tree: Tree = {};
      let counted = 0;
      for (const [path, value] of Object.entries(r.leaves)) {
        if (r.key === SYSTEM_KEY && path.startsWith(SYSTEM_KEYS_PREFIX)) {
          addCount.run(id, r.bucket, path.slice(SYSTEM_KEYS_PREFIX.length), value);
          counted += 1;
        } else setLeaf(tree, splitter.split(path), value);
      }
      if (Object.keys(tree).length > 0 || counted === 0) addBucket.run(id, r.bucket, JSON.stringify(tree));
    }
  });
  let batch: FlatBucket[] = [];
  for await (const b of clusterBuckets(client, projectId)) {
    builder.add(b);
    batch.push(b);
    if (batch.length >= ROWS_PER_INSERT) {
      write(batch);
      batch = [];
    }
  }
  write(batch);
  return builder.summary();
}
