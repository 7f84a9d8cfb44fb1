// The embedded metric store of project sources, inside the service's own database (tables of
// migrations 002 and 003). One row per bucket holding the bucket's nested values as the JSON text
// GET serves, so a year of hourly buckets reads as 8,760 short rows with no parsing. Writes arrive
// in two steps (docs/storage.md "The write log and the fold"): `log.append` makes accepted points
// durable (a file beside the database, embedded-log.ts), and `apply` folds a window of them into
// the buckets, reading, changing and rewriting each touched bucket once, and records the last
// log record it covers in the same transaction.
// The system key's per-key counts live in their own table (one row per key), so a write adds to
// its key's count instead of rewriting a row that holds every key of the bucket.
import type { Db } from '../storage/db';
import { PathSplitter, applyBucketOps, parseTree, setLeaf } from '../model/leaves';
import { SYSTEM_KEY, SYSTEM_KEYS_PREFIX, type BucketOps } from '../model/write-set';
import { BucketTreeCache, type BucketCacheLimits } from './bucket-cache';
import path from 'node:path';
import { bucketUpserts, keyCountUpserts, statements } from './embedded-sql';
import { type FileLog, openFileLog } from './embedded-log';
import type { KeyWrites, MetricStore, SeriesRef, SetupResult, WriteSet } from './types';

/** The write log's file beside a database file; none for an in-memory database. */
function logFileOf(db: Db): string | null {
  return db.memory || db.name === '' ? null : path.join(path.dirname(db.name), 'metric-log.bin');
}

const SERIES_CACHE_LIMIT = 100_000;
const seriesName = (sourceId: string, key: string, granularity: string) => `${sourceId}\u0000${key}\u0000${granularity}`;

/**
 * The embedded store of a database handle. It assumes it is the only writer of the metric tables
 * on that handle (the driver registry keeps one per server); writes through other connections are
 * noticed by `PRAGMA data_version`.
 */
export function createEmbeddedStore(db: Db, cacheLimits?: BucketCacheLimits): MetricStore {
  const sql = statements(db);
  const upserts = bucketUpserts(db);
  const keyCounts = keyCountUpserts(db);
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

  /** Moves the system key's `keys.*` additions to their count rows; returns the rest. */
  function splitKeyCounts(id: number, bucket: number, ops: BucketOps): BucketOps {
    const rest: BucketOps = { add: new Map(), set: ops.set };
    for (const [path, amount] of ops.add) {
      if (path.startsWith(SYSTEM_KEYS_PREFIX)) keyCounts.add(id, bucket, path.slice(SYSTEM_KEYS_PREFIX.length), amount);
      else rest.add.set(path, amount);
    }
    return rest;
  }

  function applySource(sourceId: string, keys: KeyWrites, created: Map<string, number>): void {
    for (const [key, granularities] of keys) {
      const system = key === SYSTEM_KEY;
      for (const [granularity, buckets] of granularities) {
        const name = seriesName(sourceId, key, granularity);
        let id = created.get(name) ?? lookupSeries(name, { sourceId, key, granularity });
        if (id === undefined) {
          id = Number(sql.addSeries.run(sourceId, key, granularity).lastInsertRowid);
          created.set(name, id);
        }
        for (const [startMs, bucketOps] of buckets) {
          const bucket = Math.floor(startMs / 1000);
          const ops = system ? splitKeyCounts(id, bucket, bucketOps) : bucketOps;
          if (ops.add.size === 0 && !ops.set) continue;
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
    keyCounts.begin();
    for (const [sourceId, keys] of writes.sources) applySource(sourceId, keys, created);
    upserts.flush();
    keyCounts.flush();
    if (writes.logUpTo !== undefined) sql.setFoldedUpTo.run(writes.logUpTo);
  });

  const logFile = logFileOf(db);
  const log: FileLog | undefined = logFile ? openFileLog(logFile, () => sql.foldedUpTo.get() ?? 0) : undefined;

  /** The system key's rows with their per-key counts nested under `keys`. */
  function withKeyCounts(id: number, first: number, last: number, rows: Array<[number, string]>): Array<[number, string]> {
    const counts = sql.readKeyCounts.all(id, first, last);
    if (counts.length === 0) return rows;
    const byBucket = new Map<number, ReturnType<typeof parseTree>>();
    for (const [bucket, data] of rows) byBucket.set(bucket, parseTree(data));
    for (const [bucket, key, count] of counts) {
      let tree = byBucket.get(bucket);
      if (!tree) byBucket.set(bucket, (tree = {}));
      setLeaf(tree, splitter.split(SYSTEM_KEYS_PREFIX + key), count);
    }
    return [...byBucket].sort((a, b) => a[0] - b[0]).map(([bucket, tree]) => [bucket, JSON.stringify(tree)]);
  }

  return {
    kind: 'embedded',
    log,

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
      if (writes.logUpTo !== undefined) log?.folded(writes.logUpTo);
    },

    async read(ref: SeriesRef, bucketStartsMs: readonly number[]): Promise<string[]> {
      const out = new Array<string>(bucketStartsMs.length).fill('{}');
      if (bucketStartsMs.length === 0) return out;
      const id = lookupSeries(seriesName(ref.sourceId, ref.key, ref.granularity), ref);
      if (id === undefined) return out;
      const first = Math.floor(bucketStartsMs[0]! / 1000);
      const last = Math.floor(bucketStartsMs[bucketStartsMs.length - 1]! / 1000);
      let rows = sql.readRange.all(id, first, last);
      if (ref.key === SYSTEM_KEY) rows = withKeyCounts(id, first, last, rows);
      // Rows and bucket starts are both ascending: walk them together.
      let i = 0;
      for (const [bucket, data] of rows) {
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
      log?.close();
    },
  };
}
