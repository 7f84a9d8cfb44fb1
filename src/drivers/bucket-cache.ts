// Parsed values of recently written buckets, for the embedded store's writes. A write reads every
// bucket it touches, and the buckets written again are mostly recent ones (the current minute,
// hour, day...), so keeping their parsed trees spares a SELECT and a JSON.parse per bucket.
//
// Bounded twice: by entries and by the JSON length of the cached trees (a system-key bucket of a
// high-cardinality source can hold thousands of leaves). Every tree it takes in ends up in the old
// generation, so a cache that churns costs memory: once full it stops taking new buckets and keeps
// serving those it holds, and only after REFRESH_MISSES x its size of misses is it emptied to
// refill (the working set has moved on). Past the text bound it is emptied at once.
// The store empties it too when a transaction fails (trees may hold its uncommitted changes) and
// when another connection has committed to the database since its last transaction.
import type { Tree } from '../model/leaves';

export interface BucketCacheLimits {
  entries: number;
  /** sum of the JSON text lengths of the cached trees */
  textLength: number;
}

// Sized by bytes: a fold window of distinct keys touches tens of thousands of small buckets, which
// an entry count of a few thousand made thrash. Small buckets take about 7 bytes of heap per byte
// of JSON text: 2 MB of text (about 14 MB of trees) holds the ~35,000 rows a fold of 5,000 keys
// touches; 8 MB kept the service over 250 MB RSS under the live workload (bench/memory.ts).
export const DEFAULT_BUCKET_CACHE_LIMITS: BucketCacheLimits = { entries: 500_000, textLength: 2_000_000 };
export const REFRESH_MISSES = 8;

interface Entry {
  tree: Tree;
  textLength: number;
}

export class BucketTreeCache {
  private readonly series = new Map<number, Map<number, Entry>>();
  private entries = 0;
  private textLength = 0;
  /** new buckets not taken in since the cache filled up */
  private missesWhenFull = 0;

  constructor(private readonly limits: BucketCacheLimits = DEFAULT_BUCKET_CACHE_LIMITS) {}

  get size(): number {
    return this.entries;
  }

  get(seriesId: number, bucket: number): Tree | undefined {
    return this.series.get(seriesId)?.get(bucket)?.tree;
  }

  /** Remembers the tree a write left in a bucket; `textLength` is the length of its JSON text. */
  set(seriesId: number, bucket: number, tree: Tree, textLength: number): void {
    let buckets = this.series.get(seriesId);
    const old = buckets?.get(bucket);
    if (old) {
      old.tree = tree;
      this.textLength += textLength - old.textLength;
      old.textLength = textLength;
    } else {
      if (this.entries >= this.limits.entries) return this.missedWhenFull();
      if (!buckets) this.series.set(seriesId, (buckets = new Map()));
      buckets.set(bucket, { tree, textLength });
      this.entries++;
      this.textLength += textLength;
    }
    if (this.textLength > this.limits.textLength) this.clear();
  }

  clear(): void {
    this.series.clear();
    this.entries = 0;
    this.textLength = 0;
    this.missesWhenFull = 0;
  }

  private missedWhenFull(): void {
    if (++this.missesWhenFull > REFRESH_MISSES * this.limits.entries) this.clear();
  }
}
