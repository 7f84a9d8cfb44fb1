// The interfaces of the metric stores: the embedded store of projects and the Trifle::Stats
// layouts of database sources (sqlite, postgres, mysql, redis, mongo). Every method is
// asynchronous and may fail: a network store can be unreachable or slow, and its errors reach the
// client through src/errors.ts (503 with Retry-After on metrics calls, 422 on setup).
//
// A write enters every store by one door, `commit(entries)`: one group commit's accepted points,
// per source in arrival order (the write queue's only call). The embedded store logs them and
// hands them to its metric writer, which merges and folds them; a database source's layout is a
// `WriteSetStore`, which applies a merged write set (src/model/write-set.ts) in one transaction,
// and the registry (index.ts) gives it its door: merge the entries into one write set with the
// merger the engine passes in, then apply it. Stores know nothing of the domain. Modelled on
// Litestream's ReplicaClient: small, every method async, one contract suite (test/drivers/).
import type { WriteSet } from '../model/write-set';
import type { LoggedPoints } from '../model/wire';

export type { LoggedPoints } from '../model/wire';

export type { BucketOps, KeyWrites, SeriesWrites, WriteSet } from '../model/write-set';
export { emptyWriteSet } from '../model/write-set';

/** One series of a source: the unit a read addresses. */
export interface SeriesRef {
  sourceId: string;
  key: string;
  /** granularity text, the series' name (`60m` and `1h` are different series) */
  granularity: string;
}

/** Many series of a source at one granularity: what a multi-key read addresses. */
export interface SeriesRefs {
  sourceId: string;
  keys: readonly string[];
  granularity: string;
}

export interface SetupResult {
  status: 'ready';
  message: string;
}

/** What every store answers besides its writes. */
interface StoreBase {
  /** `embedded`, `sqlite`, `postgres`, ... (for logs and errors) */
  readonly kind: string;
  /** Creates the store's tables/indexes (idempotent). Rejects with an Error meant for the client. */
  setup(): Promise<SetupResult>;
  /**
   * The values of each bucket (ascending starts, epoch ms) as the JSON text of the nested map
   * served to clients: `{}` for an empty bucket, numeric leaves only.
   */
  read(series: SeriesRef, bucketStartsMs: readonly number[]): Promise<string[]>;
  /** Releases connections and file handles; the store may be opened again by the registry. */
  close(): Promise<void>;
}

/** A store as the engine writes and reads it. */
export interface MetricStore extends StoreBase {
  /**
   * Stores one group commit's points, all or none; resolves once they are durable, and reads see
   * them from then on. The entries' wires are moved: do not use them after.
   */
  commit(entries: readonly LoggedPoints[]): Promise<void>;
  /**
   * `read` of many keys of one source and granularity over the same buckets, in one turn (the
   * embedded store: one request to its writer and one read transaction); the keys' texts in their
   * order, each as `read` answers it. Stores without it are read key by key (engine.ts).
   */
  readMany?(series: SeriesRefs, bucketStartsMs: readonly number[]): Promise<string[][]>;
  /** Resolves once every commit before the call is in the buckets (no-op for stores that apply at once). */
  settle(): Promise<void>;
  /**
   * Stores that know every writer of their rows (the embedded store): a text that changes whenever
   * a read of the key may answer differently. It moves on after a commit's points are visible to
   * reads and before the commit resolves, so an answer read after taking the mark is current for
   * as long as the mark is unchanged (the engine keeps such answers: domain/metrics/answers.ts).
   * Absent for stores that others write (database sources).
   */
  changeMark?(sourceId: string, key: string): string;
  /**
   * The merge window of a project's store on a metrics cluster (`merge_window_ms`, ms): the write
   * queue gathers its writes for this long after the first before committing them together, so a
   * hot row is updated at most 1000 / window times a second by each node. Absent or 0: at the next
   * free turn of the event loop.
   */
  readonly mergeWindowMs?: number;
}

/**
 * The layout of a database source: takes a write set already merged per bucket, which the
 * registry makes from a commit's points.
 */
export interface WriteSetStore extends StoreBase {
  /** Applies a whole write set in one transaction; on a rejection nothing of it is stored. */
  apply(writes: WriteSet): Promise<void>;
}

/** Merges a commit's points into one write set (the engine's merger, handed to the registry). */
export type MergeEntries = (entries: readonly LoggedPoints[]) => WriteSet;
