// The one interface every metric store implements: the embedded store of projects and the
// Trifle::Stats layouts of database sources (sqlite, postgres, mysql, redis, mongo). Every method
// is asynchronous and may fail: a network store can be unreachable or slow, and its errors reach
// the client through src/errors.ts (503 with Retry-After on metrics calls, 422 on setup).
//
// Stores know nothing of the domain: they take a write set (src/model/write-set.ts), already
// merged per bucket, and answer reads by bucket start. Modelled on Litestream's ReplicaClient:
// small, every method async, one contract suite (test/drivers/) for all of them.
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

export interface SetupResult {
  status: 'ready';
  message: string;
}

/**
 * The door of a store that takes accepted points whole and merges and folds them itself (the
 * embedded store's metric writer): a point is acknowledged once its entry is in the write log,
 * and reads see it at once, folded or not.
 */
export interface WriteLog {
  /** Logs and merges one group commit's points, all or none. The wires are moved: do not use them after. */
  append(entries: readonly LoggedPoints[]): Promise<void>;
  /** Resolves once every point acknowledged before the call is folded into the buckets. */
  settle(): Promise<void>;
}

export interface MetricStore {
  /** present on stores that acknowledge writes by a log append and fold them in the background */
  readonly log?: WriteLog;
  /** `embedded`, `sqlite`, `postgres`, ... (for logs and errors) */
  readonly kind: string;
  /** Creates the store's tables/indexes (idempotent). Rejects with an Error meant for the client. */
  setup(): Promise<SetupResult>;
  /** Applies a whole write set in one transaction; on a rejection nothing of it is stored. */
  apply(writes: WriteSet): Promise<void>;
  /**
   * The values of each bucket (ascending starts, epoch ms) as the JSON text of the nested map
   * served to clients: `{}` for an empty bucket, numeric leaves only.
   */
  read(series: SeriesRef, bucketStartsMs: readonly number[]): Promise<string[]>;
  /** Releases connections and file handles; the store may be opened again by the registry. */
  close(): Promise<void>;
}
