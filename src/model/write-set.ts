// The merged write set the write queue hands a store: the group commit of many points, per source,
// metric key, granularity and bucket, the pending operation of every leaf path. A store applies a
// whole write set in one transaction, so a flush either commits every point merged into it or none.

/** The key under which every write is counted (SPEC 5.1); only the service writes it. */
export const SYSTEM_KEY = '__system__key__';
/** The system key's per-key counts: `keys.<metric key>` */
export const SYSTEM_KEYS_PREFIX = 'keys.';

/** A leaf of a metric key in a source (overflow checks). */
export interface LargeLeaf {
  sourceId: string;
  key: string;
  path: string;
}

/** Pending operations of one bucket, by dot path. */
export interface BucketOps {
  /** amounts to add to the stored leaf (track) */
  add: Map<string, number>;
  /** values that replace the stored leaf (assert); tracks merged after an assert add to it here */
  set: Map<string, number> | null;
}

/** Bucket start (epoch ms) -> operations. */
export type SeriesWrites = Map<number, BucketOps>;

/** Metric key -> granularity text -> buckets. */
export type KeyWrites = Map<string, Map<string, SeriesWrites>>;

/** Source id -> its writes. One write set per store per flush. */
export interface WriteSet {
  sources: Map<string, KeyWrites>;
  /**
   * Merge state shared by the requests merged into this set, by source plan (merge.ts); stores
   * ignore it. Held here rather than in a WeakMap so that it dies young with the set.
   */
  merging?: Map<object, object>;
  /**
   * Stores with a write log: the id of the last log entry this set folds. The store removes the
   * entries up to it in the transaction that applies the set, so each entry is applied once.
   */
  logUpTo?: number;
}

export function emptyWriteSet(): WriteSet {
  return { sources: new Map() };
}
