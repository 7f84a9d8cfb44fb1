// Recently written buckets of the embedded store, for the metric writer's folds (domain/metrics/
// embedded/fold-target.ts). A fold reads every bucket it touches, and the buckets written again are mostly
// recent ones (the current minute, hour, day...), so keeping their values spares a SELECT and a
// parse per bucket: it halves a fold of the live workload.
//
// Kept as columns: a bucket's key (series id, bucket start), its shape (model/bucket-shape.ts), the
// fold that wrote it, and its numbers in one shared array; a cached bucket costs about 70 bytes
// besides its numbers, where an object per bucket cost over 200 bytes of V8 heap. Buckets that no
// shape fits are kept as trees beside the columns.
//
// Bounded by entries and by the bytes of numbers (plus an estimate for trees): once full it stops
// taking new buckets and keeps serving those it holds, and only after REFRESH_MISSES x its size of
// misses is it emptied to refill (the working set has moved on). When the numbers' array is used
// up (a bucket that changes shape takes a new place in it) it is emptied at once. The writer
// empties it too when a transaction fails (values may hold its uncommitted changes) and when
// another connection has committed to the database since its last transaction.
import type { BucketValue, Shape } from '../../model/bucket-shape';

export interface BucketCacheLimits {
  entries: number;
  /** bytes of the cached buckets' numbers (trees counted at about 7 bytes per byte of text) */
  bytes: number;
}

// A fold of the live workload touches about 100,000 buckets (5,000 keys x 64 minutes, and the
// coarser buckets), one of the wide workload about 140,000 (and the hours of a day): 200,000
// entries and 12 MB of numbers hold them (a line protocol bucket of three fields holds 9 numbers,
// 72 bytes; at 8 MB a wide fold read and parsed a fifth of its buckets again, a third of its time).
export const DEFAULT_BUCKET_CACHE_LIMITS: BucketCacheLimits = { entries: 200_000, bytes: 12 * 1024 * 1024 };
export const REFRESH_MISSES = 8;

export interface CachedBucket {
  value: BucketValue;
  /** the number of the fold that wrote it (metric_buckets.fold) */
  fold: number;
}

export class BucketCache {
  private readonly capacity: number;
  private readonly mask: number;
  /** hash slot -> entry, -1 free */
  private readonly slots: Int32Array;
  private readonly series: Float64Array;
  private readonly buckets: Float64Array;
  private readonly folds: Float64Array;
  private readonly offsets: Int32Array;
  private readonly shapes: Array<Shape | null>;
  /** entry -> a bucket kept as a tree, and the bytes it is counted at */
  private readonly trees = new Map<number, { value: BucketValue; bytes: number }>();
  private readonly numbers: Float64Array;
  private used = 0;
  private treeBytes = 0;
  private entries = 0;
  /** new buckets not taken in since the cache filled up */
  private missesWhenFull = 0;

  constructor(private readonly limits: BucketCacheLimits = DEFAULT_BUCKET_CACHE_LIMITS) {
    this.capacity = Math.max(1, limits.entries);
    const tableSize = 2 ** Math.ceil(Math.log2(this.capacity * 2));
    this.mask = tableSize - 1;
    this.slots = new Int32Array(tableSize).fill(-1);
    this.series = new Float64Array(this.capacity);
    this.buckets = new Float64Array(this.capacity);
    this.folds = new Float64Array(this.capacity);
    this.offsets = new Int32Array(this.capacity);
    this.shapes = new Array<Shape | null>(this.capacity).fill(null);
    this.numbers = new Float64Array(Math.max(1, Math.floor(limits.bytes / 8)));
  }

  get size(): number {
    return this.entries;
  }

  get(seriesId: number, bucket: number): CachedBucket | undefined {
    const entry = this.find(seriesId, bucket);
    if (entry < 0) return undefined;
    const shape = this.shapes[entry];
    const value: BucketValue = shape
      ? {
          shape,
          values: this.numbers.subarray(this.offsets[entry]!, this.offsets[entry]! + shape.paths.length),
        }
      : this.trees.get(entry)!.value;
    return { value, fold: this.folds[entry]! };
  }

  /** Remembers the value a write left in a bucket; `textLength` is the length of its JSON text. */
  set(seriesId: number, bucket: number, value: BucketValue, fold: number, textLength: number): void {
    let entry = this.find(seriesId, bucket);
    if (entry < 0) {
      if (this.entries >= this.capacity) return this.missedWhenFull();
      entry = this.entries++;
      this.series[entry] = seriesId;
      this.buckets[entry] = bucket;
      this.slots[this.free(seriesId, bucket)] = entry;
      this.shapes[entry] = null;
    }
    this.folds[entry] = fold;
    if (!value.shape) {
      this.dropTree(entry);
      this.shapes[entry] = null;
      this.trees.set(entry, { value, bytes: 7 * textLength });
      this.treeBytes += 7 * textLength;
    } else if (!this.holds(entry, value)) {
      this.dropTree(entry);
      const n = value.values.length;
      if (this.used + n > this.numbers.length) return this.clear();
      this.numbers.set(value.values, this.used);
      this.offsets[entry] = this.used;
      this.shapes[entry] = value.shape;
      this.used += n;
    }
    if (this.used * 8 + this.treeBytes > this.limits.bytes) this.clear();
  }

  clear(): void {
    if (this.entries === 0) return;
    this.slots.fill(-1);
    this.shapes.fill(null, 0, this.entries);
    this.trees.clear();
    this.entries = 0;
    this.used = 0;
    this.treeBytes = 0;
    this.missesWhenFull = 0;
  }

  /** The value is the entry's own numbers, changed in place (the usual case: nothing to copy). */
  private holds(entry: number, value: BucketValue & { shape: Shape }): boolean {
    return (
      this.shapes[entry] === value.shape &&
      value.values.buffer === this.numbers.buffer &&
      value.values.byteOffset === this.offsets[entry]! * 8
    );
  }

  private dropTree(entry: number): void {
    const tree = this.trees.get(entry);
    if (!tree) return;
    this.trees.delete(entry);
    this.treeBytes -= tree.bytes;
  }

  private find(seriesId: number, bucket: number): number {
    let i = hash(seriesId, bucket) & this.mask;
    for (;;) {
      const entry = this.slots[i]!;
      if (entry < 0) return -1;
      if (this.series[entry] === seriesId && this.buckets[entry] === bucket) return entry;
      i = (i + 1) & this.mask;
    }
  }

  private free(seriesId: number, bucket: number): number {
    let i = hash(seriesId, bucket) & this.mask;
    while (this.slots[i]! >= 0) i = (i + 1) & this.mask;
    return i;
  }

  private missedWhenFull(): void {
    if (++this.missesWhenFull > REFRESH_MISSES * this.capacity) this.clear();
  }
}

function hash(seriesId: number, bucket: number): number {
  let h =
    Math.imul(seriesId | 0, 0x9e3779b1) ^
    Math.imul((bucket | 0) ^ ((bucket / 4_294_967_296) | 0), 0x85ebca6b);
  h ^= h >>> 15;
  return Math.imul(h, 0x2c1b3c6d) ^ (h >>> 12);
}
