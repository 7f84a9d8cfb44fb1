// The embedded metric store of project sources, inside the service's own database (tables of
// migrations 002, 005 and 006). One row per bucket holding the bucket's nested values as the JSON
// text GET serves, so a year of hourly buckets reads as 8,760 short rows with no parsing.
//
// Writes belong to the metric writer (domain/metrics/metric-writer.ts, on a thread of its own): the
// store's `commit` hands it each group commit's points, which it logs (the point is then
// acknowledged), merges and folds into the rows about once a second.
// This store reads on the event loop's connection and adds what the writer holds unfolded, so a
// read sees every acknowledged point at once, and never waits for a fold nor retries against one:
// the writer lends each window's part tagged with the number of the fold that writes it; the
// read then opens one read transaction (one snapshot) and adds a lent part to a bucket only when
// the stored row's `fold` column is below that number (a fold writes each row once, in one of its
// transactions, and folds commit in their numbers' order). A row the fold committed before the
// snapshot already holds the part; one it commits after is not in the snapshot (docs/storage.md
// "Reads"). The appends the writer had not merged when it answered are merged by the read itself,
// for its series only; the snapshot's fold state tells which of them its rows hold already.
// The system key's per-key counts live in their own table (one row per key), nested under `keys`
// again on reads.
import type { Db } from '../../storage/db';
import { PathSplitter, addToLeaf, parseTree, setLeaf, type Tree } from '../../model/leaves';
import { type PendingSeries, type RowDelta, type UnmergedAppend, applyDelta } from '../../model/row-delta';
import { ShapeRegistry } from '../../model/bucket-shape';
import { PlanCache } from '../../model/plan';
import { partOfAppends } from '../../model/window/appends';
import { SYSTEM_KEY, SYSTEM_KEYS_PREFIX } from '../../model/write-set';
import type { LoggedPoints } from '../../model/wire';
import { statements } from './sql';
import type { MetricStore, SeriesRef, SeriesRefs, SetupResult, WriteSet } from '../types';

/** What the store asks of the metric writer (domain/metrics/writer-client.ts WriterPort). */
export interface EmbeddedWriter {
  append(entries: LoggedPoints[]): Promise<void>;
  /** What the writer holds unfolded of a series at these bucket starts (ascending, epoch ms). */
  pending(
    sourceId: string,
    key: string,
    granularity: string,
    startsMs: readonly number[],
  ): Promise<PendingSeries>;
  /**
   * `pending` of many keys at one moment of the writer, in their order (one request to its
   * thread); a writer without it is asked key by key.
   */
  pendingMany?(
    sourceId: string,
    keys: readonly string[],
    granularity: string,
    startsMs: readonly number[],
  ): Promise<PendingSeries[]>;
  settle(): Promise<void>;
  /**
   * A merged write set folded in one transaction: not a door of the store, which is written only
   * by `commit`; the store contract suite (test/drivers/) writes the embedded tables by it.
   */
  apply(writes: WriteSet): Promise<void>;
  /**
   * A text that changes whenever a read of the series may answer differently: moved on after an
   * append of the key is visible to reads and before it is acknowledged (MetricStore.changeMark);
   * a writer without it (test doubles) leaves every read to the store.
   */
  changeMark?(sourceId: string, key: string): string;
  close(): Promise<void>;
}

const SERIES_CACHE_LIMIT = 100_000;
const COUNT_PATH = ['count'];
const EMPTY = '{}';

/** Stored rows of a range, ascending: each the bucket (epoch seconds) then its JSON text, `1735689600{...}`. */
type Rows = string[];
/** A stored per-key count of the system key: bucket (epoch seconds), key, count, fold. */
type KeyCount = [number, string, number, number];

/** What one read transaction found. */
interface Stored {
  rows: Rows;
  /** bucket (epoch seconds) -> fold, of the rows written by the oldest lent part's fold or later */
  folds: Map<number, number>;
  /** the system key's per-key counts (empty for other keys) */
  counts: KeyCount[];
  /**
   * The unmerged appends the snapshot does not hold whole, by the fold that writes them: the fold
   * in progress in the snapshot (its rows at that number hold them), or NO_FOLD (no row holds them).
   */
  appends: Array<[fold: number, appends: UnmergedAppend[]]>;
}

/** The tag of appends that no fold of the snapshot has begun: no stored row holds them. */
const NO_FOLD = Number.MAX_SAFE_INTEGER;

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
  const plans = new PlanCache();
  /** leaf paths of lent rows, with the JSON template of each list */
  const shapes = new ShapeRegistry();

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
  function withKeyCounts(rows: Rows, counts: KeyCount[]): Rows {
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
    return [...byBucket]
      .sort((a, b) => a[0] - b[0])
      .map(([bucket, tree]) => `${bucket}${JSON.stringify(tree)}`);
  }

  const rowFolds = db
    .prepare<[number, number, number, number], [number, number]>(
      'SELECT bucket, fold FROM metric_buckets WHERE series_id = ? AND bucket BETWEEN ? AND ? AND fold >= ?',
    )
    .raw(true);
  const keyCounts = db
    .prepare<[number, number, number], KeyCount>(
      'SELECT bucket, key, count, fold FROM metric_key_counts WHERE series_id = ? AND bucket BETWEEN ? AND ? ORDER BY bucket, key',
    )
    .raw(true);

  /**
   * The stored rows of the range in one read transaction (one snapshot), with the fold numbers
   * that tell which lent parts they hold: of the rows written by fold `fromFold` or later, and of
   * the system key's per-key counts. The snapshot's fold state sorts the unmerged appends: those
   * up to its `folded_up_to` are in the rows; those of the fold in progress are in the rows that
   * carry its number; the later ones are in none (a fold records its start in its first commit).
   */
  function storedRows(
    ref: SeriesRef,
    first: number,
    last: number,
    lentFrom: number,
    unmerged: UnmergedAppend[],
  ): Stored {
    const appends: Stored['appends'] = [];
    let fromFold = lentFrom;
    if (unmerged.length > 0) {
      const state = sql.foldState.get()!;
      for (const append of unmerged) {
        if (append.upTo <= state.foldedUpTo) continue;
        const fold =
          state.foldingUpTo !== null && append.upTo <= state.foldingUpTo ? state.foldNumber : NO_FOLD;
        if (fold !== NO_FOLD) fromFold = Math.min(fromFold, fold);
        const tail = appends[appends.length - 1];
        if (tail && tail[0] === fold) tail[1].push(append);
        else appends.push([fold, [append]]);
      }
    }
    const id = seriesId(ref);
    if (id === undefined) return { rows: [], folds: new Map(), counts: [], appends };
    const rows = sql.readRange.all(id, first, last);
    const folds = new Map<number, number>(
      Number.isFinite(fromFold) ? rowFolds.all(id, first, last, fromFold) : [],
    );
    if (ref.key !== SYSTEM_KEY) return { rows, folds, counts: [], appends };
    const counts = keyCounts.all(id, first, last);
    return { rows: withKeyCounts(rows, counts), folds, counts, appends };
  }
  const stored = db.transaction(storedRows);
  /** storedRows of many series of one range in one read transaction (one snapshot). */
  const storedMany = db.transaction(
    (
      refs: readonly SeriesRef[],
      first: number,
      last: number,
      lentFroms: readonly number[],
      unmerged: ReadonlyArray<UnmergedAppend[]>,
    ): Stored[] => refs.map((ref, i) => storedRows(ref, first, last, lentFroms[i]!, unmerged[i]!)),
  );

  const oldestFold = (pending: PendingSeries) =>
    pending.parts.reduce((min, p) => Math.min(min, p.fold), Infinity);

  /** A read's texts: the snapshot's rows, then the appends it merges itself and the lent parts it lacks. */
  function assemble(
    ref: SeriesRef,
    bucketStartsMs: readonly number[],
    pending: PendingSeries,
    snapshot: Stored,
  ): string[] {
    const out = new Array<string>(bucketStartsMs.length).fill(EMPTY);
    const firstMs = bucketStartsMs[0]!;
    const lastMs = bucketStartsMs[bucketStartsMs.length - 1]!;
    // The appends the writer had not merged: merged here, for this series only, after the
    // windows' parts (they follow them in the log).
    for (const [fold, appends] of snapshot.appends)
      pending.parts.push(partOfAppends(appends, plans, ref, firstMs, lastMs, fold));
    // Rows and bucket starts are both ascending: walk them together.
    let i = 0;
    for (const row of snapshot.rows) {
      const { bucket, at } = splitRow(row);
      const ms = bucket * 1000;
      while (i < bucketStartsMs.length && bucketStartsMs[i]! < ms) i++;
      if (i === bucketStartsMs.length) break;
      if (bucketStartsMs[i] === ms) out[i] = row.slice(at);
    }
    if (pending.parts.length > 0) addPending(out, bucketStartsMs, pending, snapshot);
    return out;
  }

  /** Adds the lent parts the snapshot does not hold to the texts of the buckets they touch. */
  /** Whether two deltas name the same paths in the same order. */
  function samePaths(a: readonly string[], b: readonly string[]): boolean {
    if (a === b) return true;
    if (a.length !== b.length) return false;
    for (let j = 0; j < a.length; j++) if (a[j] !== b[j]) return false;
    return true;
  }

  /**
   * One delta of `a` then `b` (the same paths) for a bucket with no stored row: what applying both
   * to an empty tree gives, each leaf replaced where `b` sets it and added to otherwise.
   */
  function followedBy(a: RowDelta, b: RowDelta): RowDelta {
    const values = Float64Array.from(a.values);
    const set = a.set || b.set ? new Uint8Array(values.length) : null;
    for (let j = 0; j < values.length; j++) {
      const replaces = b.set !== null && b.set[j] === 1;
      values[j] = replaces ? b.values[j]! : values[j]! + b.values[j]!;
      if (set) set[j] = replaces || (a.set !== null && a.set[j] === 1) ? 1 : 0;
    }
    return { paths: a.paths, values, set };
  }

  function addPending(
    out: string[],
    startsMs: readonly number[],
    pending: PendingSeries,
    snapshot: Stored,
  ): void {
    const trees = new Map<number, Tree>();
    /**
     * Buckets with no stored row and so far one delta: written from that delta's shape (its JSON
     * template, as a fold writes rows) unless another change follows, without a tree.
     */
    const alone = new Map<number, RowDelta>();
    /** the index of a bucket start of the read (ascending startsMs), -1 if it is not one */
    const indexOf = (bucketMs: number): number => {
      let lo = 0;
      let hi = startsMs.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >> 1;
        const ms = startsMs[mid]!;
        if (ms < bucketMs) lo = mid + 1;
        else if (ms > bucketMs) hi = mid - 1;
        else return mid;
      }
      return -1;
    };
    const treeOf = (i: number): Tree => {
      let tree = trees.get(i);
      if (tree) return tree;
      trees.set(i, (tree = parseTree(out[i])));
      const first = alone.get(i);
      if (first) {
        applyDelta(tree, first, splitter);
        alone.delete(i);
      }
      return tree;
    };
    /** whether the snapshot's row of the bucket already holds what fold `fold` writes to it */
    const holds = (bucketMs: number, fold: number) =>
      (snapshot.folds.get(Math.floor(bucketMs / 1000)) ?? 0) >= fold;
    let keyFolds: Map<string, number> | null = null;
    const keyHolds = (bucketMs: number, key: string, fold: number) => {
      keyFolds ??= new Map(snapshot.counts.map(([bucket, k, , f]) => [`${bucket}\u0000${k}`, f]));
      return (keyFolds.get(`${Math.floor(bucketMs / 1000)}\u0000${key}`) ?? 0) >= fold;
    };
    for (const part of pending.parts) {
      for (const { bucketMs, delta } of part.rows) {
        if (holds(bucketMs, part.fold)) continue;
        const i = indexOf(bucketMs);
        if (i < 0) continue;
        if (out[i] === EMPTY && !trees.has(i)) {
          // No stored row: the changes of one path list add up (or replace) as numbers.
          const first = alone.get(i);
          if (!first) {
            alone.set(i, delta);
            continue;
          }
          if (samePaths(first.paths, delta.paths)) {
            alone.set(i, followedBy(first, delta));
            continue;
          }
        }
        applyDelta(treeOf(i), delta, splitter);
      }
      for (const { bucketMs, count, keys } of part.counts) {
        const i = indexOf(bucketMs);
        if (i < 0) continue;
        const tree = treeOf(i);
        if (count !== 0 && !holds(bucketMs, part.fold)) addToLeaf(tree, COUNT_PATH, count);
        for (const [key, n] of keys) {
          if (!keyHolds(bucketMs, key, part.fold))
            addToLeaf(tree, splitter.split(SYSTEM_KEYS_PREFIX + key), n);
        }
      }
    }
    for (const [i, delta] of alone) {
      const shape = shapes.of(delta.paths);
      const values = Float64Array.from(delta.values);
      if (shape.renderable && values.every(Number.isFinite)) out[i] = shape.render(values);
      else {
        const tree = parseTree(out[i]);
        applyDelta(tree, delta, splitter);
        trees.set(i, tree);
      }
    }
    for (const [i, tree] of trees) out[i] = JSON.stringify(tree);
  }

  return {
    kind: 'embedded',
    // The one door: the writer logs the commit's points (acknowledged once logged), merges them
    // and folds them in the background.
    commit: (entries) => writer.append([...entries]),
    settle: () => writer.settle(),
    ...(writer.changeMark ? { changeMark: writer.changeMark.bind(writer) } : {}),

    async setup(): Promise<SetupResult> {
      return { status: 'ready', message: 'embedded store (tables created by the service migrations)' };
    },

    async read(ref: SeriesRef, bucketStartsMs: readonly number[]): Promise<string[]> {
      if (bucketStartsMs.length === 0) return [];
      const firstMs = bucketStartsMs[0]!;
      const lastMs = bucketStartsMs[bucketStartsMs.length - 1]!;
      // What the writer holds unfolded first, then the stored rows: whatever its folds commit in
      // between, the fold numbers of the snapshot tell which lent parts it holds.
      const pending = await writer.pending(ref.sourceId, ref.key, ref.granularity, bucketStartsMs);
      const snapshot = stored(
        ref,
        Math.floor(firstMs / 1000),
        Math.floor(lastMs / 1000),
        oldestFold(pending),
        pending.unmerged ?? [],
      );
      return assemble(ref, bucketStartsMs, pending, snapshot);
    },

    // `read` of many keys: the writer's answers for all of them taken at one moment (one request),
    // then their rows in one read transaction, so that each key's read reasons as `read` does: its
    // answer comes before the snapshot, and the snapshot's fold numbers and fold state tell which
    // lent parts and unmerged appends its rows hold.
    async readMany(refs: SeriesRefs, bucketStartsMs: readonly number[]): Promise<string[][]> {
      if (refs.keys.length === 0) return [];
      if (bucketStartsMs.length === 0) return refs.keys.map(() => []);
      const firstMs = bucketStartsMs[0]!;
      const lastMs = bucketStartsMs[bucketStartsMs.length - 1]!;
      const { sourceId, granularity } = refs;
      const pendings = writer.pendingMany
        ? await writer.pendingMany(sourceId, refs.keys, granularity, bucketStartsMs)
        : await Promise.all(
            refs.keys.map((key) => writer.pending(sourceId, key, granularity, bucketStartsMs)),
          );
      const series = refs.keys.map((key) => ({ sourceId, key, granularity }));
      const snapshots = storedMany(
        series,
        Math.floor(firstMs / 1000),
        Math.floor(lastMs / 1000),
        pendings.map(oldestFold),
        pendings.map((p) => p.unmerged ?? []),
      );
      return snapshots.map((snapshot, i) => assemble(series[i]!, bucketStartsMs, pendings[i]!, snapshot));
    },

    async close(): Promise<void> {
      seriesIds.clear();
    },
  };
}
