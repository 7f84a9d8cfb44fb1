// The embedded tables as the metric writer's folds (embedded/fold.ts) write them: the statements, the ids
// of known series, the cache of recently written buckets, and one bucket's read-change-write.
import type { Db } from '../../storage/db';
import { BucketCache, type BucketCacheLimits } from './bucket-cache';
import { bucketUpserts, keyCountUpserts, statements, type FoldState } from './sql';
import {
  type BucketValue,
  ShapeRegistry,
  applyToBucket,
  parseBucket,
  renderBucket,
} from '../../model/bucket-shape';
import type { RowDelta } from '../../model/row-delta';

const COUNT_PATHS = ['count'];
/** Series ids remembered before the memory is started over. */
const SERIES_LIMIT = 200_000;

/** The embedded tables as folds write them: statements, known series ids, parsed buckets. */
export class FoldTarget {
  readonly sql: ReturnType<typeof statements>;
  readonly upserts;
  readonly keyCounts;
  readonly cache: BucketCache;
  readonly shapes = new ShapeRegistry();
  /** the delta of a count row (its one value changes before each use) */
  private readonly countDelta: RowDelta = { paths: COUNT_PATHS, values: new Float64Array(1), set: null };
  /** source and key -> granularity -> series id */
  private readonly seriesIds = new Map<string, Map<string, number>>();
  private knownSeries = 0;
  /** series created by the transaction in progress: known for good once it commits */
  private created: Array<[Map<string, number>, string, number]> = [];
  private dataVersion = Number.NaN;

  constructor(
    readonly db: Db,
    cacheLimits?: BucketCacheLimits,
  ) {
    this.sql = statements(db);
    this.upserts = bucketUpserts(db);
    this.keyCounts = keyCountUpserts(db);
    this.cache = new BucketCache(cacheLimits);
  }

  state(): FoldState {
    return this.sql.foldState.get()!;
  }

  /** Opens a write transaction; cached buckets are dropped if another connection committed since. */
  begin(): void {
    this.db.exec('BEGIN IMMEDIATE');
    const version = this.sql.dataVersion.get()!;
    if (version !== this.dataVersion) this.cache.clear();
    this.dataVersion = version;
    this.upserts.begin();
    this.keyCounts.begin();
  }

  commit(): void {
    this.upserts.flush();
    this.keyCounts.flush();
    this.db.exec('COMMIT');
    for (const [ids, granularity, id] of this.created) ids.set(granularity, id);
    this.created = [];
  }

  rollback(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.cache.clear(); // trees may hold the rolled-back changes
    this.created = [];
  }

  /** The series ids known for a key of a source, by granularity (seriesId fills it). */
  idsOf(sourceId: string, key: string): Map<string, number> {
    const name = `${sourceId}\u0000${key}`;
    let ids = this.seriesIds.get(name);
    if (!ids) {
      if (this.knownSeries >= SERIES_LIMIT) {
        this.seriesIds.clear();
        this.knownSeries = 0;
      }
      this.seriesIds.set(name, (ids = new Map()));
    }
    return ids;
  }

  /** The id of a series, found or created (inside the open transaction); `ids` is idsOf(sourceId, key). */
  seriesId(ids: Map<string, number>, sourceId: string, key: string, granularity: string): number {
    const known = ids.get(granularity);
    if (known !== undefined) return known;
    let id = this.sql.findSeries.get(sourceId, key, granularity);
    if (id === undefined) {
      id = Number(this.sql.addSeries.run(sourceId, key, granularity).lastInsertRowid);
      this.created.push([ids, granularity, id]);
    } else {
      ids.set(granularity, id);
      this.knownSeries++;
    }
    return id;
  }

  /**
   * Adds a delta (and a count) to a bucket row on behalf of fold `fold`; false when the row already
   * carries that fold's number (an interrupted attempt of the same fold wrote it).
   */
  writeBucket(id: number, bucketMs: number, fold: number, delta: RowDelta | null, count: number): boolean {
    const bucket = Math.floor(bucketMs / 1000);
    const cached = this.cache.get(id, bucket);
    let value: BucketValue;
    let stored: number;
    if (cached) {
      value = cached.value;
      stored = cached.fold;
    } else {
      const row = this.sql.getBucket.get(id, bucket);
      value = parseBucket(row?.[0], this.shapes);
      stored = row?.[1] ?? 0;
    }
    if (stored >= fold) return false;
    if (delta) value = applyToBucket(value, delta, this.shapes.of(delta.paths), this.shapes);
    if (count !== 0) {
      this.countDelta.values[0] = count;
      value = applyToBucket(value, this.countDelta, this.shapes.of(COUNT_PATHS), this.shapes);
    }
    const text = renderBucket(value);
    this.upserts.add(id, bucket, text, fold);
    this.cache.set(id, bucket, value, fold, text.length);
    return true;
  }

  addKeyCount(systemId: number, bucketMs: number, key: string, count: number, fold: number): void {
    this.keyCounts.add(systemId, Math.floor(bucketMs / 1000), key, count, fold);
  }

  clear(): void {
    this.cache.clear();
    this.seriesIds.clear();
  }
}
