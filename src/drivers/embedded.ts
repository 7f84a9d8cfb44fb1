// The embedded metric store of project sources, inside the service's own database (tables of
// migrations 002, 005 and 006). One row per bucket holding the bucket's nested values as the JSON
// text GET serves, so a year of hourly buckets reads as 8,760 short rows with no parsing.
//
// Writes belong to the metric writer (domain/metrics/metric-writer.ts, on a thread of its own): it
// logs each group commit's points, merges them and folds them into the rows about once a second.
// This store reads on the event loop's connection and adds what the writer holds unfolded, so a
// read sees every acknowledged point. The writer lends that part together with the stamp of the
// stored state it is relative to; the read compares the stamp inside its own read transaction,
// and asks again if a fold committed in between (docs/storage.md "Reads").
// The system key's per-key counts live in their own table (one row per key), nested under `keys`
// again on reads.
import { unavailable } from '../errors';
import type { Db } from '../storage/db';
import { PathSplitter, addToLeaf, parseTree, setLeaf, type Tree } from '../model/leaves';
import { type PendingSeries, applyDelta } from '../model/row-delta';
import { SYSTEM_KEY, SYSTEM_KEYS_PREFIX } from '../model/write-set';
import type { LoggedPoints } from '../model/wire';
import { statements } from './embedded-sql';
import type { MetricStore, SeriesRef, SetupResult, WriteSet } from './types';

/** What the store asks of the metric writer (domain/metrics/writer-client.ts WriterPort). */
export interface EmbeddedWriter {
  append(entries: LoggedPoints[]): Promise<void>;
  pending(sourceId: string, key: string, granularity: string, firstMs: number, lastMs: number): Promise<PendingSeries>;
  settle(): Promise<void>;
  apply(writes: WriteSet): Promise<void>;
  close(): Promise<void>;
}

const SERIES_CACHE_LIMIT = 100_000;
/** A read that keeps racing folds' commits gives up after this many tries (503). */
const READ_ATTEMPTS = 20;
const COUNT_PATH = ['count'];

/** Stored rows of a range, ascending: each the bucket (epoch seconds) then its JSON text, `1735689600{...}`. */
type Rows = string[];

/** The bucket of a stored row and where its JSON starts (digits read in place: no substring). */
function splitRow(row: string): { bucket: number; at: number } {
  let at = 0;
  let c = row.charCodeAt(0);
  const negative = c === MINUS;
  if (negative) c = row.charCodeAt(++at);
  let bucket = 0;
  for (; c >= DIGIT_0 && c <= DIGIT_9; c = row.charCodeAt(++at)) bucket = bucket * 10 + (c - DIGIT_0);
  return { bucket: negative ? -bucket : bucket, at };
}

const MINUS = 0x2d;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;

export function createEmbeddedStore(db: Db, writer: EmbeddedWriter): MetricStore {
  const sql = statements(db);
  const splitter = new PathSplitter();
  const seriesIds = new Map<string, number>();

  function seriesId(ref: SeriesRef): number | undefined {
    const name = `${ref.sourceId}\u0000${ref.key}\u0000${ref.granularity}`;
    const cached = seriesIds.get(name);
    if (cached !== undefined) return cached;
    const found = sql.findSeries.get(ref.sourceId, ref.key, ref.granularity);
    if (found !== undefined) {
      if (seriesIds.size >= SERIES_CACHE_LIMIT) seriesIds.clear();
      seriesIds.set(name, found);
    }
    return found;
  }

  /** The system key's rows with their per-key counts nested under `keys`. */
  function withKeyCounts(id: number, first: number, last: number, rows: Rows): Rows {
    const counts = sql.readKeyCounts.all(id, first, last);
    if (counts.length === 0) return rows;
    const byBucket = new Map<number, Tree>();
    for (const row of rows) {
      const { bucket, at } = splitRow(row);
      byBucket.set(bucket, parseTree(row.slice(at)));
    }
    for (const [bucket, key, count] of counts) {
      let tree = byBucket.get(bucket);
      if (!tree) byBucket.set(bucket, (tree = {}));
      setLeaf(tree, splitter.split(SYSTEM_KEYS_PREFIX + key), count);
    }
    return [...byBucket].sort((a, b) => a[0] - b[0]).map(([bucket, tree]) => `${bucket}${JSON.stringify(tree)}`);
  }

  /** The stored rows of the range, if the stored state is still the one of `stamp`. */
  const storedAt = db.transaction((ref: SeriesRef, first: number, last: number, stamp: number): Rows | null => {
    if (sql.stamp.get() !== stamp) return null;
    const id = seriesId(ref);
    if (id === undefined) return [];
    const rows = sql.readRange.all(id, first, last);
    return ref.key === SYSTEM_KEY ? withKeyCounts(id, first, last, rows) : rows;
  });

  /** Adds the writer's unfolded part to the texts of the buckets it touches. */
  function addPending(out: string[], startsMs: readonly number[], pending: PendingSeries): void {
    if (pending.rows.length === 0 && pending.counts.length === 0) return;
    const index = new Map<number, number>();
    startsMs.forEach((ms, i) => index.set(ms, i));
    const trees = new Map<number, Tree>();
    const treeAt = (bucketMs: number): Tree | undefined => {
      const i = index.get(bucketMs);
      if (i === undefined) return undefined;
      let tree = trees.get(i);
      if (!tree) trees.set(i, (tree = parseTree(out[i])));
      return tree;
    };
    for (const { bucketMs, delta } of pending.rows) {
      const tree = treeAt(bucketMs);
      if (tree) applyDelta(tree, delta, splitter);
    }
    for (const { bucketMs, count, keys } of pending.counts) {
      const tree = treeAt(bucketMs);
      if (!tree) continue;
      if (count !== 0) addToLeaf(tree, COUNT_PATH, count);
      for (const [key, n] of keys) addToLeaf(tree, splitter.split(SYSTEM_KEYS_PREFIX + key), n);
    }
    for (const [i, tree] of trees) out[i] = JSON.stringify(tree);
  }

  return {
    kind: 'embedded',
    log: { append: (entries) => writer.append([...entries]), settle: () => writer.settle() },

    async setup(): Promise<SetupResult> {
      return { status: 'ready', message: 'embedded store (tables created by the service migrations)' };
    },

    apply: (writes) => writer.apply(writes),

    async read(ref: SeriesRef, bucketStartsMs: readonly number[]): Promise<string[]> {
      const out = new Array<string>(bucketStartsMs.length).fill('{}');
      if (bucketStartsMs.length === 0) return out;
      const firstMs = bucketStartsMs[0]!;
      const lastMs = bucketStartsMs[bucketStartsMs.length - 1]!;
      for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
        const pending = await writer.pending(ref.sourceId, ref.key, ref.granularity, firstMs, lastMs);
        const rows = storedAt(ref, Math.floor(firstMs / 1000), Math.floor(lastMs / 1000), pending.stamp);
        if (!rows) continue; // a fold committed meanwhile: what it lent may be stored now
        // Rows and bucket starts are both ascending: walk them together.
        let i = 0;
        for (const row of rows) {
          const { bucket, at } = splitRow(row);
          const ms = bucket * 1000;
          while (i < bucketStartsMs.length && bucketStartsMs[i]! < ms) i++;
          if (i === bucketStartsMs.length) break;
          if (bucketStartsMs[i] === ms) out[i] = row.slice(at);
        }
        addPending(out, bucketStartsMs, pending);
        return out;
      }
      throw unavailable('The metric store is busy folding writes, retry later', 1);
    },

    async close(): Promise<void> {
      seriesIds.clear();
    },
  };
}
