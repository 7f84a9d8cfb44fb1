// A fold writes a window of the metric writer (model/window/window.ts) into the embedded tables: every touched
// bucket row is read (or taken from the cache of parsed buckets), changed and written once; the
// system key's per-key counts are added blind. The work is cut into short transactions (a few
// milliseconds each, `step`), so the service's other writers never wait long for the write lock.
//
// Exactly once: each row a fold writes records the fold's number, and metric_fold_state records
// the fold in progress (its number and last log record). A fold interrupted by a crash is rebuilt
// from the write log after the restart and run again under its number: rows that already carry
// it are skipped, so no point counts twice. The same number tells a read whether a stored row
// already holds what the writer lent it of this fold's window (drivers/embedded.ts). Each commit
// raises the stamp in metric_fold_state, and only then are its rows marked folded in the window.
import { SYSTEM_KEY } from '../../model/write-set';
import type { FoldTarget } from './fold-target';
import {
  type CountRow,
  type IngestWindow,
  UNTRACKED_KEY,
  type WindowKey,
  type WindowSource,
} from '../../model/window/window';

/** Work items between two looks at the clock. */
const CLOCK_EVERY = 32;

/** The system key's per-key counts of one bucket: the metric rows that count points in it. */
interface CountGroup {
  bucketMs: number;
  /** window rows, whose series name the keys */
  rows: number[];
}

/**
 * A fold of one window. Its work is a generator that yields after each piece (a series found or
 * created, a row written), so that `step` can stop at its time budget; the work goes in the order
 * of the tables' keys, so each transaction walks neighbouring B-tree pages instead of jumping
 * across the tables: series by id with their buckets ascending, then the per-key counts grouped by
 * system series and bucket, then the system key's count rows.
 */
export class Fold {
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
   * Commits the next transaction: work until `budgetMs` has passed. `stamp` is recorded with it.
   * `poll` runs every few pieces of work: the writer answers its messages there (appends touch the
   * log and the gathering window, never this transaction). On an error nothing of this
   * transaction stays and the next step starts over from what is not marked done.
   */
  step(budgetMs: number, stamp: number, poll?: () => void): void {
    const target = this.target;
    const deadline = performance.now() + budgetMs;
    this.wroteRows = [];
    this.wroteKeyCounts = [];
    this.wroteTotals = [];
    target.begin();
    try {
      this.work ??= this.pieces();
      let n = 0;
      for (;;) {
        if (this.work.next().done) {
          this.done = true;
          break;
        }
        if (++n % CLOCK_EVERY !== 0) continue;
        poll?.();
        if (performance.now() >= deadline) break;
      }
      if (!this.started) target.sql.startFold.run(this.upTo, this.number, stamp);
      if (this.done) target.sql.finishFold.run(this.upTo, stamp);
      else target.sql.setStamp.run(stamp);
      target.commit();
    } catch (err) {
      target.rollback();
      this.work = null; // series it created may be rolled back: start over
      this.done = false;
      throw err;
    }
    this.started = true;
    const rows = this.window.rows;
    for (const r of this.wroteRows) rows.markFolded(r);
    for (const r of this.wroteKeyCounts) rows.markCountFolded(r);
    for (const row of this.wroteTotals) row.folded = true;
  }

  private *pieces(): Generator<void> {
    yield* this.window.spreadInSteps();
    const ids = yield* this.seriesIds();
    const order = Array.from(ids.keys()).sort((a, b) => ids[a]! - ids[b]!);
    yield* this.bucketRows(order, ids);
    yield* this.keyCounts(order);
    yield* this.countRows();
  }

  /** The database id of each series of the window, found or created one by one. */
  private *seriesIds(): Generator<void, Float64Array> {
    const { target, window } = this;
    const ids = new Float64Array(window.seriesKey.length);
    const known = new Map<WindowKey, Map<string, number>>();
    for (let series = 0; series < ids.length; series++) {
      const state = window.seriesKey[series]!;
      const { sourceId, granularities } = state.source.plan;
      let byGranularity = known.get(state);
      if (!byGranularity) known.set(state, (byGranularity = target.idsOf(sourceId, state.key)));
      ids[series] = target.seriesId(
        byGranularity,
        sourceId,
        state.key,
        granularities[window.seriesSlot[series]!]!.text,
      );
      yield;
    }
    return ids;
  }

  private *bucketRows(order: number[], ids: Float64Array): Generator<void> {
    const { target, window } = this;
    const { rows } = window;
    for (const series of order) {
      // newest first: points that came in time order are ascending once reversed (no sort)
      const list = window.rowsOf(series).reverse();
      if (!ascending(list, rows.bucketMs)) list.sort((a, b) => rows.bucketMs[a]! - rows.bucketMs[b]!);
      for (const r of list) {
        if (rows.folded(r)) continue;
        target.writeBucket(ids[series]!, rows.bucketMs[r]!, this.number, rows.delta(r), 0);
        this.wroteRows.push(r);
        yield;
      }
    }
  }

  private *keyCounts(order: number[]): Generator<void> {
    const { window } = this;
    const { rows } = window;
    // per source and granularity (one system series each): bucket id -> group
    const groups = new Map<WindowSource, Array<Map<number, CountGroup>>>();
    let n = 0;
    for (const series of order) {
      const state = window.seriesKey[series]!;
      const slot = window.seriesSlot[series]!;
      let bySlot = groups.get(state.source);
      if (!bySlot) groups.set(state.source, (bySlot = []));
      const byBucket = (bySlot[slot] ??= new Map());
      for (let r = window.seriesHead[series]!; r >= 0; r = rows.next[r]!) {
        if (rows.tracked[r] === 0 || rows.countFolded(r)) continue;
        const bucket = rows.bucket[r]!;
        const group = byBucket.get(bucket);
        if (group) group.rows.push(r);
        else byBucket.set(bucket, { bucketMs: rows.bucketMs[r]!, rows: [r] });
        if (++n % 256 === 0) yield;
      }
    }
    // In the order of the table's key: system series, then bucket (one system series at a time,
    // so that no list of every group of the window is built at once).
    const lists: Array<[number, Map<number, CountGroup>]> = [];
    for (const [source, bySlot] of groups) {
      bySlot.forEach((byBucket, slot) => lists.push([this.systemIdOf(source, slot), byBucket]));
    }
    lists.sort((a, b) => a[0] - b[0]);
    for (const [systemId, byBucket] of lists) {
      const sorted = [...byBucket.values()].sort((a, b) => a.bucketMs - b.bucketMs);
      byBucket.clear();
      yield;
      for (const group of sorted) {
        for (const r of group.rows) {
          if (rows.countFolded(r)) continue;
          this.target.addKeyCount(
            systemId,
            group.bucketMs,
            window.seriesKey[rows.series[r]!]!.key,
            rows.tracked[r]!,
            this.number,
          );
          this.wroteKeyCounts.push(r);
          yield;
        }
      }
    }
  }

  private *countRows(): Generator<void> {
    const target = this.target;
    for (const source of this.window.sources.values()) {
      for (let slot = 0; slot < source.counts.length; slot++) {
        const systemId = this.systemIdOf(source, slot);
        const counts = [...source.counts[slot]!.values()].sort((a, b) => a.bucketMs - b.bucketMs);
        for (const row of counts) {
          if (row.folded) continue;
          const { bucketMs } = row;
          target.writeBucket(systemId, bucketMs, this.number, row.leaves, row.count);
          if (row.untracked > 0)
            target.addKeyCount(systemId, bucketMs, UNTRACKED_KEY, row.untracked, this.number);
          if (row.keys)
            for (const [key, count] of row.keys)
              target.addKeyCount(systemId, bucketMs, key, count, this.number);
          this.wroteTotals.push(row);
          yield;
        }
      }
    }
  }

  private systemIdOf(source: WindowSource, slot: number): number {
    const { sourceId, granularities } = source.plan;
    return this.target.seriesId(
      this.target.idsOf(sourceId, SYSTEM_KEY),
      sourceId,
      SYSTEM_KEY,
      granularities[slot]!.text,
    );
  }
}

function ascending(list: readonly number[], bucketMs: Float64Array): boolean {
  for (let i = 1; i < list.length; i++) if (bucketMs[list[i - 1]!]! > bucketMs[list[i]!]!) return false;
  return true;
}
