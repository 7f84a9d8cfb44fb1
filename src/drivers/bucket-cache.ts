// Recently written buckets of the embedded store, for the metric writer's folds (domain/metrics/
// fold.ts). A fold reads every bucket it touches, and the buckets written again are mostly recent
// ones (the current minute, hour, day...), so keeping their values spares a SELECT and a parse
// per bucket. Values are kept as shapes and numbers (model/bucket-shape.ts), about 100 bytes for a
// bucket of a few leaves, or as trees where no shape fits.
//
// Bounded twice: by entries and by an estimate of the bytes they hold. Once full it stops taking
// new buckets and keeps serving those it holds, and only after REFRESH_MISSES x its size of misses
// is it emptied to refill (the working set has moved on). Past the byte bound it is emptied at once.
// The writer empties it too when a transaction fails (values may hold its uncommitted changes) and
// when another connection has committed to the database since its last transaction.
import type { BucketValue } from '../model/bucket-shape';

export interface BucketCacheLimits {
  entries: number;
  /** estimated bytes of the cached values */
  bytes: number;
}

// Sized by bytes: a fold of distinct keys touches a hundred thousand small buckets (live workload:
// 5,000 keys x 64 minutes and the coarser buckets); 32 MB holds about 250,000 of them.
export const DEFAULT_BUCKET_CACHE_LIMITS: BucketCacheLimits = { entries: 500_000, bytes: 32 * 1024 * 1024 };
export const REFRESH_MISSES = 8;

/** Bytes a cached bucket holds: the entry, its number array, or its tree (about 7 bytes per byte of text). */
export function bucketBytes(value: BucketValue, textLength: number): number {
  return value.values ? 96 + value.values.length * 8 : 64 + textLength * 7;
}

export interface CachedBucket {
  value: BucketValue;
  /** the number of the fold that wrote it (metric_buckets.fold) */
  fold: number;
  bytes: number;
}

export class BucketTreeCache {
  private readonly series = new Map<number, Map<number, CachedBucket>>();
  private entries = 0;
  private bytes = 0;
  /** new buckets not taken in since the cache filled up */
  private missesWhenFull = 0;

  constructor(private readonly limits: BucketCacheLimits = DEFAULT_BUCKET_CACHE_LIMITS) {}

  get size(): number {
    return this.entries;
  }

  get(seriesId: number, bucket: number): CachedBucket | undefined {
    return this.series.get(seriesId)?.get(bucket);
  }

  /** Remembers the value a write left in a bucket and its estimated size. */
  set(seriesId: number, bucket: number, value: BucketValue, fold: number, bytes: number): void {
    let buckets = this.series.get(seriesId);
    const old = buckets?.get(bucket);
    if (old) {
      old.value = value;
      old.fold = fold;
      this.bytes += bytes - old.bytes;
      old.bytes = bytes;
    } else {
      if (this.entries >= this.limits.entries) return this.missedWhenFull();
      if (!buckets) this.series.set(seriesId, (buckets = new Map()));
      buckets.set(bucket, { value, fold, bytes });
      this.entries++;
      this.bytes += bytes;
    }
    if (this.bytes > this.limits.bytes) this.clear();
  }

  clear(): void {
    this.series.clear();
    this.entries = 0;
    this.bytes = 0;
    this.missesWhenFull = 0;
  }

  private missedWhenFull(): void {
    if (++this.missesWhenFull > REFRESH_MISSES * this.limits.entries) this.clear();
  }
}
