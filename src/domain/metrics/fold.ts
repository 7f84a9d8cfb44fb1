// A fold writes a window of the metric writer (window.ts) into the embedded tables: every touched
// bucket row is read (or taken from the cache of parsed buckets), changed and written once; the
// system key's per-key counts are added blind. The work is cut into short transactions (a few
// milliseconds each, `step`), so the service's other writers never wait long for the write lock.
//
// Exactly once: each row a fold writes records the fold's number, and metric_fold_state records
// the fold in progress (its number and last log record). A fold interrupted by a crash is rebuilt
// from the write log after the restart and run again under its number: rows that already carry
// it are skipped, so no point counts twice. Each commit raises the stamp that reads compare
// (drivers/embedded.ts), and only then are its rows marked folded in the window.
import type { Db } from '../../storage/db';
import { BucketTreeCache, bucketBytes, type BucketCacheLimits } from '../../drivers/bucket-cache';
import { bucketUpserts, keyCountUpserts, statements, type FoldState } from '../../drivers/embedded-sql';
import { type BucketValue, ShapeRegistry, applyToBucket, parseBucket, renderBucket } from '../../model/bucket-shape';
import type { RowDelta } from '../../model/row-delta';
import { SYSTEM_KEY } from '../../model/write-set';
import { type CountRow, ID_UNIT, type IngestWindow, UNTRACKED_KEY, type WindowSource } from './window';

const COUNT_PATHS = ['count'];
/** Work items between two looks at the clock. */
const CLOCK_EVERY = 32;

/** The embedded tables as folds write them: statements, known series ids, parsed buckets. */
export class FoldTarget {
  readonly sql: ReturnType<typeof statements>;
  readonly upserts;
  readonly keyCounts;
  readonly cache: BucketTreeCache;
  readonly shapes = new ShapeRegistry();
  /** the delta of a count row (its one value changes before each use) */
  private readonly countDelta: RowDelta = { paths: COUNT_PATHS, values: new Float64Array(1), set: null };
  private readonly seriesIds = new Map<string, number>();
  /** series created by the transaction in progress: known for good once it commits */
  private created: Array<[string, number]> = [];
  private dataVersion = Number.NaN;

  constructor(readonly db: Db, cacheLimits?: BucketCacheLimits) {
    this.sql = statements(db);
    this.upserts = bucketUpserts(db);
    this.keyCounts = keyCountUpserts(db);
    this.cache = new BucketTreeCache(cacheLimits);
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
    for (const [name, id] of this.created) this.seriesIds.set(name, id);
    this.created = [];
  }

  rollback(): void {
    if (this.db.inTransaction) this.db.exec('ROLLBACK');
    this.cache.clear(); // trees may hold the rolled-back changes
    this.created = [];
  }

  /** The id of a series, created if missing (inside the open transaction). */
  seriesId(sourceId: string, key: string, granularity: string): number {
    const name = `${sourceId}\u0000${key}\u0000${granularity}`;
    const known = this.seriesIds.get(name);
    if (known !== undefined) return known;
    let id = this.sql.findSeries.get(sourceId, key, granularity);
    if (id === undefined) {
      id = Number(this.sql.addSeries.run(sourceId, key, granularity).lastInsertRowid);
      this.created.push([name, id]);
    } else {
      if (this.seriesIds.size >= 200_000) this.seriesIds.clear();
      this.seriesIds.set(name, id);
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
    this.cache.set(id, bucket, value, fold, bucketBytes(value, text.length));
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

/** A series of the window and its id in the database. */
interface SeriesRows {
  id: number;
  series: number;
}

/** The system key's per-key counts of one bucket: the metric rows that count points in it. */
interface CountGroup {
  systemId: number;
  bucketMs: number;
  keys: string[];
  rows: number[];
}

/**
 * A fold's work in the order of the tables' keys, so each transaction walks neighbouring B-tree
 * pages instead of jumping across the tables: series by id with their buckets ascending, then the
 * per-key counts grouped by system series and bucket, then the system key's count rows.
 */
interface FoldPlan {
  series: SeriesRows[];
  counts: CountGroup[];
  totals: Array<{ systemId: number; rows: CountRow[] }>;
}

export class Fold {
  private plan: FoldPlan | null = null;
  private work: Generator<void> | null = null;
  private started = false;
  /** what the transaction in progress wrote: marked once it commits */
  private wroteRows: number[] = [];
  private wroteKeyCounts: number[] = [];
  private wroteTotals: CountRow[] = [];
  done = false;

  constructor(
    private readonly target: FoldTarget,
    readonly window: IngestWindow,
    /** this fold's number (the `fold` its rows carry) */
    readonly number: number,
    /** the last log record it covers */
    readonly upTo: number,
  ) {}

  /**
   * Commits the next transaction: work until `budgetMs` has passed (the first one also finds or
   * creates every series of the window). `stamp` is recorded with it. On an error nothing of this
   * transaction stays and the next step starts over from what is not marked done.
   */
  step(budgetMs: number, stamp: number): void {
    const target = this.target;
    const deadline = performance.now() + budgetMs;
    this.wroteRows = [];
    this.wroteKeyCounts = [];
    this.wroteTotals = [];
    target.begin();
    try {
      this.plan ??= this.makePlan();
      this.work ??= this.items();
      let n = 0;
      for (;;) {
        if (this.work.next().done) {
          this.done = true;
          break;
        }
        if (++n % CLOCK_EVERY === 0 && performance.now() >= deadline) break;
      }
      if (!this.started) target.sql.startFold.run(this.upTo, this.number, stamp);
      if (this.done) target.sql.finishFold.run(this.upTo, stamp);
      else target.sql.setStamp.run(stamp);
      target.commit();
    } catch (err) {
      target.rollback();
      this.plan = null; // its series ids may be rolled back
      this.work = null;
      this.done = false;
      throw err;
    }
    this.started = true;
    const rows = this.window.rows;
    for (const r of this.wroteRows) rows.markFolded(r);
    for (const r of this.wroteKeyCounts) rows.markCountFolded(r);
    for (const row of this.wroteTotals) row.folded = true;
  }

  private makePlan(): FoldPlan {
    const { target, window } = this;
    const plan: FoldPlan = { series: [], counts: [], totals: [] };
    const systemIds = new Map<WindowSource, number[]>();
    const systemIdsOf = (source: WindowSource) => {
      let ids = systemIds.get(source);
      if (!ids) systemIds.set(source, (ids = source.plan.granularities.map((g) => target.seriesId(source.plan.sourceId, SYSTEM_KEY, g.text))));
      return ids;
    };
    const groups = new Map<WindowSource, Map<number, CountGroup>>();
    const { rows } = window;
    for (let series = 0; series < window.seriesKey.length; series++) {
      const state = window.seriesKey[series]!;
      const { source } = state;
      const slot = window.seriesSlot[series]!;
      plan.series.push({ id: target.seriesId(source.plan.sourceId, state.key, source.plan.granularities[slot]!.text), series });
      let bySlot = groups.get(source);
      if (!bySlot) groups.set(source, (bySlot = new Map()));
      for (const r of window.rowsOf(series)) {
        if (rows.tracked[r] === 0 || rows.countFolded(r)) continue;
        const key = slot * ID_UNIT + rows.bucket[r]!;
        let group = bySlot.get(key);
        if (!group) bySlot.set(key, (group = { systemId: systemIdsOf(source)[slot]!, bucketMs: rows.bucketMs[r]!, keys: [], rows: [] }));
        group.keys.push(state.key);
        group.rows.push(r);
      }
    }
    for (const bySlot of groups.values()) plan.counts.push(...bySlot.values());
    for (const source of window.sources.values()) {
      const ids = systemIdsOf(source);
      source.counts.forEach((counts, slot) => plan.totals.push({ systemId: ids[slot]!, rows: [...counts.values()] }));
    }
    plan.series.sort((a, b) => a.id - b.id);
    plan.counts.sort((a, b) => a.systemId - b.systemId || a.bucketMs - b.bucketMs);
    return plan;
  }

  /** Writes the plan's rows one by one (inside the open transaction), yielding after each. */
  private *items(): Generator<void> {
    const { target, window } = this;
    const { rows } = window;
    const plan = this.plan!;
    for (const { id, series } of plan.series) {
      const list = window.rowsOf(series);
      if (list.length > 1) list.sort((a, b) => rows.bucketMs[a]! - rows.bucketMs[b]!);
      for (const r of list) {
        if (rows.folded(r)) continue;
        target.writeBucket(id, rows.bucketMs[r]!, this.number, rows.delta(r), 0);
        this.wroteRows.push(r);
        yield;
      }
    }
    for (const group of plan.counts) {
      for (let i = 0; i < group.rows.length; i++) {
        const r = group.rows[i]!;
        if (rows.countFolded(r)) continue;
        target.addKeyCount(group.systemId, group.bucketMs, group.keys[i]!, rows.tracked[r]!, this.number);
        this.wroteKeyCounts.push(r);
        yield;
      }
    }
    for (const { systemId, rows: counts } of plan.totals) {
      counts.sort((a, b) => a.bucketMs - b.bucketMs);
      for (const row of counts) {
        if (row.folded) continue;
        const { bucketMs } = row;
        target.writeBucket(systemId, bucketMs, this.number, row.leaves, row.count);
        if (row.untracked > 0) target.addKeyCount(systemId, bucketMs, UNTRACKED_KEY, row.untracked, this.number);
        if (row.keys) for (const [key, count] of row.keys) target.addKeyCount(systemId, bucketMs, key, count, this.number);
        this.wroteTotals.push(row);
        yield;
      }
    }
  }
}
