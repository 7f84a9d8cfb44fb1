// The embedded metric store of project sources, inside the service's own database (tables from
// migration 002). One row per bucket holding the bucket's nested values as the JSON text GET
// serves, so a year of hourly buckets reads as 8,760 short rows with no parsing; writes read,
// modify and rewrite each touched bucket once per group commit. docs/storage.md has the measured
// comparison with one row per leaf.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../storage/db';
import { PathSplitter, applyBucketOps, parseTree } from '../model/leaves';
import { BucketTreeCache, type BucketCacheLimits } from './bucket-cache';
import type { KeyWrites, MetricStore, SeriesRef, SetupResult, WriteSet } from './types';

const SERIES_CACHE_LIMIT = 100_000;
const seriesName = (sourceId: string, key: string, granularity: string) => `${sourceId}\u0000${key}\u0000${granularity}`;

/** Rows per multi-row upsert: one statement per 32 bucket rows costs about half of 32 single ones. */
const UPSERT_ROWS = 32;

function upsertSql(rows: number): string {
  const values = new Array<string>(rows).fill('(?, ?, ?)').join(', ');
  return `INSERT INTO metric_buckets (series_id, bucket, data) VALUES ${values} ` +
    'ON CONFLICT (series_id, bucket) DO UPDATE SET data = excluded.data';
}

function statements(db: Db) {
  return {
    findSeries: db.prepare<[string, string, string], number>(
      'SELECT id FROM metric_series WHERE source_id = ? AND key = ? AND granularity = ?',
    ).pluck(),
    addSeries: db.prepare('INSERT INTO metric_series (source_id, key, granularity) VALUES (?, ?, ?)'),
    getBucket: db.prepare<[number, number], string>(
      'SELECT data FROM metric_buckets WHERE series_id = ? AND bucket = ?',
    ).pluck(),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    readRange: db.prepare<[number, number, number], [number, string]>(
      'SELECT bucket, data FROM metric_buckets WHERE series_id = ? AND bucket BETWEEN ? AND ? ORDER BY bucket',
    ).raw(true),
  };
}

/**
 * Bucket rows of one transaction, written UPSERT_ROWS at a time. A write set holds each
 * (series, bucket) once, so no row of a statement conflicts with another of the same statement.
 */
class BucketUpserts {
  /** statements by row count, prepared on first use (at most UPSERT_ROWS of them) */
  private readonly bySize = new Map<number, Statement<unknown[]>>();
  private readonly params: unknown[] = [];

  constructor(private readonly db: Db) {}

  /** Drops rows left by a transaction that failed before its last flush. */
  begin(): void {
    this.params.length = 0;
  }

  add(seriesId: number, bucket: number, data: string): void {
    this.params.push(seriesId, bucket, data);
    if (this.params.length === UPSERT_ROWS * 3) this.flush();
  }

  flush(): void {
    const rows = this.params.length / 3;
    if (rows === 0) return;
    let statement = this.bySize.get(rows);
    if (!statement) this.bySize.set(rows, (statement = this.db.prepare<unknown[]>(upsertSql(rows))));
    statement.run(this.params);
    this.params.length = 0;
  }
}

/**
 * The embedded store of a database handle. It assumes it is the only writer of metric_buckets on
 * that handle (the driver registry keeps one per server); writes through other connections are
 * noticed by `PRAGMA data_version`.
 */
export function createEmbeddedStore(db: Db, cacheLimits?: BucketCacheLimits): MetricStore {
  const sql = statements(db);
  const upserts = new BucketUpserts(db);
  const trees = new BucketTreeCache(cacheLimits);
  let dataVersion = Number.NaN;
  const splitter = new PathSplitter();
  // Series ids known to be committed. Ids created inside a transaction join only after its commit,
  // so a rolled-back insert never leaves a dangling id here.
  const seriesIds = new Map<string, number>();

  function lookupSeries(name: string, ref: SeriesRef): number | undefined {
    const cached = seriesIds.get(name);
    if (cached !== undefined) return cached;
    const found = sql.findSeries.get(ref.sourceId, ref.key, ref.granularity);
    if (found !== undefined) remember(name, found);
    return found;
  }

  function remember(name: string, id: number): void {
    if (seriesIds.size >= SERIES_CACHE_LIMIT) seriesIds.clear();
    seriesIds.set(name, id);
  }

  function applySource(sourceId: string, keys: KeyWrites, created: Map<string, number>): void {
    for (const [key, granularities] of keys) {
      for (const [granularity, buckets] of granularities) {
        const name = seriesName(sourceId, key, granularity);
        let id = created.get(name) ?? lookupSeries(name, { sourceId, key, granularity });
        if (id === undefined) {
          id = Number(sql.addSeries.run(sourceId, key, granularity).lastInsertRowid);
          created.set(name, id);
        }
        for (const [startMs, ops] of buckets) {
          const bucket = Math.floor(startMs / 1000);
          const tree = trees.get(id, bucket) ?? parseTree(sql.getBucket.get(id, bucket));
          applyBucketOps(tree, ops, splitter);
          const text = JSON.stringify(tree);
          upserts.add(id, bucket, text);
          trees.set(id, bucket, tree, text.length);
        }
      }
    }
  }

  // Built once: better-sqlite3 wraps the function anew on every db.transaction() call.
  const applyAll = db.transaction((writes: WriteSet, created: Map<string, number>) => {
    const version = sql.dataVersion.get();
    if (version !== dataVersion) trees.clear(); // another connection committed: cached trees may be stale
    dataVersion = version!;
    upserts.begin();
    for (const [sourceId, keys] of writes.sources) applySource(sourceId, keys, created);
    upserts.flush();
  });

  return {
    kind: 'embedded',

    async setup(): Promise<SetupResult> {
      return { status: 'ready', message: 'embedded store (tables created by the service migrations)' };
    },

    async apply(writes: WriteSet): Promise<void> {
      const created = new Map<string, number>();
      try {
        applyAll.immediate(writes, created);
      } catch (err) {
        trees.clear(); // they may hold changes of the rolled-back transaction
        throw err;
      }
      for (const [name, id] of created) remember(name, id);
    },

    async read(ref: SeriesRef, bucketStartsMs: readonly number[]): Promise<string[]> {
      const out = new Array<string>(bucketStartsMs.length).fill('{}');
      if (bucketStartsMs.length === 0) return out;
      const id = lookupSeries(seriesName(ref.sourceId, ref.key, ref.granularity), ref);
      if (id === undefined) return out;
      const first = Math.floor(bucketStartsMs[0]! / 1000);
      const last = Math.floor(bucketStartsMs[bucketStartsMs.length - 1]! / 1000);
      // Rows and bucket starts are both ascending: walk them together.
      let i = 0;
      for (const [bucket, data] of sql.readRange.all(id, first, last)) {
        const ms = bucket * 1000;
        while (i < bucketStartsMs.length && bucketStartsMs[i]! < ms) i++;
        if (i === bucketStartsMs.length) break;
        if (bucketStartsMs[i] === ms) out[i] = data;
      }
      return out;
    },

    async close(): Promise<void> {
      seriesIds.clear();
      trees.clear();
    },
  };
}
