// The merge state of the metric writer (embedded/metric-writer.ts): the points acknowledged since the last
// fold, merged per bucket row, until the fold writes each touched row once. One window gathers
// while the one before is folded; that one stays readable until each of its rows has committed.
//
// Two levels keep the cost per point small (model/window/rows.ts holds both as columns of numbers):
// - groups: tracks of one key whose timestamps share every bucket (the usual case: they share the
//   finest bucket, and the finest bucket lies within one bucket of each coarser granularity) are
//   summed in one group, so a point costs one bucketer call and a few additions;
// - rows: a group is spread into one row per granularity when the window is folded, read, or
//   holds too many groups. An assert first spreads its key's groups (tracks before it keep their
//   place) and is then written into the rows directly.
// - pairs (a track and an assert in one point, model/wire.ts; each line protocol sample) are grouped
//   too: a pair group adds its track part and keeps the latest values of its assert part. A key's
//   groups are spread after its rows' writes, so only the order among its groups matters: while
//   one of them sets a leaf that another adds to (Shapes.conflict), the key is spread before the
//   new group is taken; and a key holding pair groups spreads them in the order of their last
//   writes, so the latest set of a leaf lands last in every coarser bucket.
// The system key's bookkeeping (SPEC 5.1) is counted, not merged: each row counts its tracked and
// untracked points (keys.<key>, keys.__untracked__), each source a `count` per bucket.
import type { PendingCounts, PendingRow, RowDelta } from '../row-delta';
import { type BucketOps, type KeyWrites, SYSTEM_KEY, SYSTEM_KEYS_PREFIX, type WriteSet } from '../write-set';
import type { SourcePlan } from '../plan';
import {
  ASSERT_FLAG,
  KEY_UNIT,
  LIST_UNIT,
  UNTRACKED_FLAG,
  type WirePoints,
  assertFromOf,
} from '../point-wire';
import { CountRow, Groups, ID_UNIT, Rows, Shapes, columnSize, type LeafWrite } from './rows';
import { SlotTable } from './table';

export { CountRow } from './rows';
export const UNTRACKED_KEY = '__untracked__';

/** Group slots a window holds before its owner spreads them all into rows (spreadIfFull). */
const MAX_GROUPS = 500_000;
/** ... and before it spreads them itself, in the middle of an add (bounds its memory). */
const HARD_MAX_GROUPS = 2 * MAX_GROUPS;
/** Groups spread between two calls of a window's `poll` (a key of a year of minutes holds 525,600). */
const POLL_EVERY_GROUPS = 4096;
/** Finest buckets whose bucket vectors a source remembers. */
const MAX_VECTORS = 50_000;
/** WindowSource.finestIdOf's mark of a finest bucket whose buckets differ within it (above any bucket id) */
const NO_VECTOR = ID_UNIT;

export class WindowKey {
  /** per granularity of the plan: the window's series index, -1 until it has a row */
  readonly series: Int32Array;
  /** the first live group of the key, -1 for none */
  groupHead = -1;
  /** whether one of the key's live groups is a pair's, and then the shapes of its live groups */
  readonly groupShapes: number[] = [];
  hasPairs = false;
  /** a shape in groupShapes (-1: none), the last one met: a key's points mostly bring one shape */
  lastShape = -1;

  constructor(
    readonly key: string,
    readonly index: number,
    readonly source: WindowSource,
  ) {
    this.series = new Int32Array(source.plan.granularities.length).fill(-1);
  }
}

/**
 * One source in a window. Its buckets get small integer ids, and each finest bucket remembers the
 * ids of the buckets it lies in, one per granularity.
 */
export class WindowSource {
  readonly keys = new Map<string, WindowKey>();
  /** per granularity: bucket id -> the system key's counts */
  readonly counts: Array<Map<number, CountRow>>;
  /** bucket id -> bucket start (ms) */
  readonly starts: number[] = [];
  /** finest bucket id -> the bucket ids of every granularity (for the finest buckets that have them) */
  readonly vectorById: Array<Int32Array | undefined> = [];
  /** per granularity: bucket start -> bucket id */
  private readonly ids: Array<Map<number, number>>;
  /**
   * finest bucket start -> its id when its vector is known (vectorById), NO_VECTOR when the buckets
   * differ within it: a table of numbers, probed by every point of a body that spans many finest
   * buckets (a Map keyed by doubles cost a tenth of merging such a body)
   */
  private readonly finestIds = new SlotTable(1024);
  private lastStart = Number.NaN;
  private lastFinestId = -1;
  /**
   * the writer thread's key number -> the key's state, in epoch `numbersEpoch` (numbers count every
   * source's keys, a source holds some of them: an array with holes)
   */
  byNumber: Array<WindowKey | undefined> = [];
  numbersEpoch = -1;

  constructor(readonly plan: SourcePlan) {
    this.counts = plan.granularities.map(() => new Map<number, CountRow>());
    this.ids = plan.granularities.map(() => new Map<number, number>());
  }

  /** The id of a bucket the source has, else -1. */
  knownBucketId(slot: number, bucketMs: number): number {
    return this.ids[slot]!.get(bucketMs) ?? -1;
  }

  bucketId(slot: number, bucketMs: number): number {
    if (Number.isNaN(bucketMs)) return -1;
    const ids = this.ids[slot]!;
    let id = ids.get(bucketMs);
    if (id === undefined) ids.set(bucketMs, (id = this.starts.push(bucketMs) - 1));
    return id;
  }

  /** The bucket ids of an instant. */
  bucketIdsAt(atMs: number): Int32Array {
    const granularities = this.plan.granularities;
    const ids = new Int32Array(granularities.length);
    for (let i = 0; i < granularities.length; i++)
      ids[i] = this.bucketId(i, granularities[i]!.bucketer(atMs));
    return ids;
  }

  /**
   * The id of a finest bucket whose instants share the buckets of every granularity (its vector,
   * vectorById), or -1 if they differ within it.
   */
  finestIdOf(finestStart: number): number {
    if (finestStart === this.lastStart) return this.lastFinestId;
    const table = this.finestIds;
    let at = table.place(finestStart);
    let code = table.valueAt(at);
    if (code < 0) {
      if (table.size > MAX_VECTORS) {
        table.reset();
        at = table.place(finestStart);
      }
      const vector = this.vectorAt(finestStart);
      code = vector ? vector[this.plan.finest]! : NO_VECTOR;
      table.setValue(at, code);
    }
    this.lastStart = finestStart;
    this.lastFinestId = code === NO_VECTOR ? -1 : code;
    return this.lastFinestId;
  }

  /** The bucket ids shared by every instant of a finest bucket (kept in vectorById), or null if they differ within it. */
  private vectorAt(finestStart: number): Int32Array | null {
    const granularities = this.plan.granularities;
    const last = granularities[this.plan.finest]!.next(finestStart) - 1;
    const vector = new Int32Array(granularities.length);
    for (let i = 0; i < granularities.length; i++) {
      const bucket = granularities[i]!.bucketer(finestStart);
      const atLast = granularities[i]!.bucketer(last);
      if (bucket !== atLast && !(Number.isNaN(bucket) && Number.isNaN(atLast))) return null;
      vector[i] = this.bucketId(i, bucket);
    }
    this.vectorById[vector[this.plan.finest]!] = vector;
    return vector;
  }

  countRow(slot: number, id: number): CountRow {
    const counts = this.counts[slot]!;
    let row = counts.get(id);
    if (!row) counts.set(id, (row = new CountRow(this.starts[id]!)));
    return row;
  }
}

export class IngestWindow {
  readonly sources = new Map<string, WindowSource>();
  readonly shapes = new Shapes();
  private rowColumns: Rows;
  private groups: Groups;
  /** every key of the window, by index */
  private keys: WindowKey[] = [];
  /** per series (a key in one granularity): its key, granularity, and first row (-1: none) */
  readonly seriesKey: WindowKey[] = [];
  readonly seriesSlot: number[] = [];
  readonly seriesHead: number[] = [];
  /** per series: how many rows it has */
  readonly seriesRows: number[] = [];
  /** points merged into this window */
  points = 0;
  /** wire points merged into this window: each group's last write is numbered with it */
  private seq = 0;
  /**
   * Called every few thousand groups of a long spread (the metric writer answers reads there):
   * it must not change the window, only read it (pendingRows, pendingCounts).
   */
  poll: (() => void) | null = null;
  /** inside add: a read must not see the window (it holds part of a merge), so no poll */
  private adding = false;
  /** the most groups held at once (sizes the next window's group columns) */
  private maxGroups = 0;
  /** the write being merged: one object reused for every point, so merging allocates nothing per point */
  private readonly leaf: LeafWrite = {
    shape: 0,
    values: [],
    offset: 0,
    assert: false,
    tracked: 0,
    untracked: 0,
  };
  /** a key's groups spread into rows before an assert: its own object, as the assert's is still to be written */
  private readonly spread: LeafWrite = {
    shape: 0,
    values: [],
    offset: 0,
    assert: false,
    tracked: 0,
    untracked: 0,
  };

  /** `expected`: rows and groups a window is likely to hold (the last one's), to size its columns */
  constructor(private readonly expected: { rows: number; groups: number } = { rows: 0, groups: 0 }) {
    this.rowColumns = new Rows(this.shapes, expected.rows);
    this.groups = new Groups(this.shapes, expected.groups);
  }

  /** Empties the window for reuse as a new one: its columns, the largest memory it holds, stay. */
  reset(): void {
    this.sources.clear();
    this.shapes.reset();
    this.rows.reset();
    this.groups.reset();
    this.keys.length = 0;
    this.seriesKey.length = 0;
    this.seriesSlot.length = 0;
    this.seriesHead.length = 0;
    this.seriesRows.length = 0;
    this.points = 0;
    this.seq = 0;
    this.maxGroups = 0;
  }

  get rows(): Rows {
    return this.rowColumns;
  }

  /**
   * Lets the rows' columns go when they are larger than a fresh window's. A window that gathers
   * mostly holds groups; its rows are spread when it is folded, and sized then (reserveRows): so
   * only the window being folded holds row columns for all its rows, not the one gathering too.
   */
  releaseRows(): void {
    if (this.rowColumns.count === 0 && this.rowColumns.capacity > columnSize(0))
      this.rowColumns = new Rows(this.shapes, 0);
  }

  /** Room for `rows` rows at once (e.g. the last fold's), unless the window holds rows already. */
  reserveRows(rows: number): void {
    if (this.rowColumns.count === 0 && this.rowColumns.capacity < columnSize(rows))
      this.rowColumns = new Rows(this.shapes, rows);
  }

  /** what this window held, for sizing the next */
  get held(): { rows: number; groups: number } {
    return { rows: this.rows.count, groups: Math.max(this.groups.count, this.maxGroups) };
  }

  /** about the bytes the window's rows, groups and their numbers take (what its memory grows with) */
  get bytes(): number {
    return (
      (this.rows.count + this.groups.count) * 48 +
      (this.rows.values.length + this.groups.sums.length) * 9 +
      this.keys.length * 160
    );
  }

  /** The plan this window merges a source's points with, if it holds any of them. */
  planOf(sourceId: string): SourcePlan | undefined {
    return this.sources.get(sourceId)?.plan;
  }

  /** Merges a request's points, in order. The window must not hold the source under another plan. */
  add(plan: SourcePlan, wire: WirePoints): void {
    this.adding = true;
    try {
      this.addPoints(plan, wire);
    } finally {
      this.adding = false;
    }
  }

  /** Spreads every group into rows once the window holds MAX_GROUPS of them; true if it did. */
  spreadIfFull(): boolean {
    if (this.groups.count < MAX_GROUPS) return false;
    this.spreadAll();
    return true;
  }

  private addPoints(plan: SourcePlan, wire: WirePoints): void {
    const source = this.source(plan);
    const keys =
      wire.keyNumbers !== undefined && wire.keyEpoch !== undefined
        ? this.keysByNumber(source, wire.keys, wire.keyNumbers, wire.keyEpoch)
        : wire.keys.map((key) => this.keyState(source, key));
    const shapes = wire.pathLists.map((list, l) => this.shapes.id(list, assertFromOf(wire, l)));
    const finest = plan.granularities[plan.finest]!.bucketer;
    const { meta, values } = wire;
    const sizes = shapes.map((id) => this.shapes.sizes[id]!);
    const count = meta.length / 2;
    let points = 0;
    let v = 0;
    for (let i = 0; i < count; i++) {
      const atMs = meta[2 * i]!;
      const packed = meta[2 * i + 1]!;
      const k = Math.floor(packed / KEY_UNIT);
      // below KEY_UNIT (2^24): as an int32, `%` is not a floating-point remainder (a call)
      const low = (packed - k * KEY_UNIT) | 0;
      const flags = low % LIST_UNIT;
      const list = (low - flags) / LIST_UNIT;
      const shape = shapes[list]!;
      const state = keys[k]!;
      const assert = (flags & ASSERT_FLAG) !== 0;
      const pair = !assert && this.shapes.isPair(shape);
      // a pair stands for two points (its track and its assert)
      const weight = pair ? 2 : 1;
      const untracked = (flags & UNTRACKED_FLAG) !== 0 ? weight : 0;
      const start = assert ? Number.NaN : finest(atMs);
      const finestId = Number.isNaN(start) ? -1 : source.finestIdOf(start);
      const leaf = this.leaf;
      leaf.shape = shape;
      leaf.values = values;
      leaf.offset = v;
      leaf.assert = assert;
      leaf.tracked = weight - untracked;
      leaf.untracked = untracked;
      this.seq++;
      if (finestId >= 0) this.addToGroup(state, finestId, leaf);
      else {
        // tracks commute with tracks; anything else keeps its place after the key's groups
        if (assert || pair || state.hasPairs) this.spreadKey(state);
        this.toRows(state, source.bucketIdsAt(atMs), leaf);
      }
      points += weight;
      v += sizes[list]!;
    }
    this.points += points;
    if (this.groups.count >= HARD_MAX_GROUPS) this.spreadAll();
  }

  /**
   * A write set's operations, row by row (the store contract's `apply`): the source's granularities
   * are those the set names, and the system key's `count` and `keys.*` go to its bookkeeping.
   */
  addWriteSet(sourceId: string, writes: KeyWrites): void {
    if (this.sources.has(sourceId)) throw new Error(`window already holds source ${sourceId}`);
    const texts = [...new Set([...writes.values()].flatMap((byGranularity) => [...byGranularity.keys()]))];
    const none = () => Number.NaN;
    const source = this.source({
      sourceId,
      granularities: texts.map((text) => ({ text, bucketer: none, next: none })),
      finest: 0,
    });
    for (const [key, byGranularity] of writes) {
      const state = key === SYSTEM_KEY ? null : this.keyState(source, key);
      for (const [granularity, buckets] of byGranularity) {
        const slot = texts.indexOf(granularity);
        for (const [bucketMs, ops] of buckets) {
          const id = source.bucketId(slot, bucketMs);
          const ids = new Int32Array(texts.length).fill(-1);
          ids[slot] = id;
          if (!state) addSystemOps(source.countRow(slot, id), ops);
          else {
            for (const [map, assert] of [
              [ops.set, true],
              [ops.add, false],
            ] as const) {
              if (!map || map.size === 0) continue;
              const entries = [...map];
              const leaf = {
                shape: this.shapes.id(entries.map((e) => e[0])),
                values: entries.map((e) => e[1]),
                offset: 0,
                assert,
                tracked: 0,
                untracked: 0,
              };
              this.toRows(state, ids, leaf);
            }
          }
          this.points++;
        }
      }
    }
  }

  /**
   * The window's rows as write-set operations (the merged write set a database source's layout
   * applies, merge.ts): each row's leaves under its key, and the system key's bookkeeping as
   * leaves of its own buckets (`count`, `keys.<key>`, `keys.__untracked__`). Spreads every group.
   */
  toWriteSet(writes: WriteSet): void {
    this.spreadAll();
    const rows = this.rows;
    for (const [sourceId, source] of this.sources) {
      let keys = writes.sources.get(sourceId);
      if (!keys) writes.sources.set(sourceId, (keys = new Map()));
      const texts = source.plan.granularities.map((g) => g.text);
      // the system key first: `count` leads each of its buckets, the per-key counts follow
      for (let slot = 0; slot < texts.length; slot++) {
        for (const row of source.counts[slot]!.values()) {
          const ops = opsOf(keys, SYSTEM_KEY, texts[slot]!, row.bucketMs);
          addOp(ops, 'count', row.count);
        }
      }
      for (const state of source.keys.values()) {
        for (let slot = 0; slot < texts.length; slot++) {
          const series = state.series[slot]!;
          if (series < 0) continue;
          for (const r of this.rowsOf(series).reverse()) {
            const bucketMs = rows.bucketMs[r]!;
            const { paths, values, set } = rows.delta(r);
            const ops = opsOf(keys, state.key, texts[slot]!, bucketMs);
            for (let i = 0; i < paths.length; i++) {
              if (set !== null && set[i] === 1) setOp(ops, paths[i]!, values[i]!);
              else addOp(ops, paths[i]!, values[i]!);
            }
            const tracked = rows.tracked[r]!;
            const untracked = rows.untracked[r]!;
            if (tracked > 0)
              addOp(opsOf(keys, SYSTEM_KEY, texts[slot]!, bucketMs), SYSTEM_KEYS_PREFIX + state.key, tracked);
            if (untracked > 0)
              addOp(
                opsOf(keys, SYSTEM_KEY, texts[slot]!, bucketMs),
                SYSTEM_KEYS_PREFIX + UNTRACKED_KEY,
                untracked,
              );
          }
        }
      }
    }
  }

  /** Spreads every group into rows, a key per step (the fold's first work: the window no longer gathers). */
  *spreadInSteps(): Generator<void> {
    for (const state of this.keys) {
      this.spreadKey(state);
      yield;
    }
  }

  /** Spreads every group into rows; the group table starts over. */
  spreadAll(): void {
    for (const state of this.keys) this.spreadKey(state);
    this.maxGroups = Math.max(this.maxGroups, this.groups.count);
    this.groups.reset();
  }

  /** The rows of a series, newest first. */
  rowsOf(series: number): number[] {
    const out: number[] = [];
    for (let r = this.seriesHead[series]!; r >= 0; r = this.rows.next[r]!) out.push(r);
    return out;
  }

  /**
   * Rows not folded yet of one series at the given bucket starts (ascending), as a read must add
   * them, in the order they apply: the series' rows (looked up one by one when the range has fewer
   * buckets than the series has rows, else found by walking them), then the key's groups (tracks
   * merged after every row's writes) summed per bucket. Changes nothing: a read may be answered
   * in the middle of a spread (`poll`), and a spread's groups are either live or in the rows.
   */
  pendingRows(sourceId: string, key: string, granularity: string, startsMs: readonly number[]): PendingRow[] {
    const source = this.sources.get(sourceId);
    const slot = source ? slotOf(source.plan, granularity) : -1;
    const state = source?.keys.get(key);
    if (!source || slot < 0 || !state || startsMs.length === 0) return [];
    const out: PendingRow[] = [];
    const firstMs = startsMs[0]!;
    const lastMs = startsMs[startsMs.length - 1]!;
    const series = state.series[slot]!;
    if (series >= 0) {
      const rows = this.rows;
      const take = (r: number) => {
        if (!rows.folded(r)) out.push({ bucketMs: rows.bucketMs[r]!, delta: copy(rows.delta(r)) });
      };
      if (startsMs.length < this.seriesRows[series]!) {
        for (const ms of startsMs) {
          const id = source.knownBucketId(slot, ms);
          const r = id < 0 ? -1 : rows.table.find(series * ID_UNIT + id);
          if (r >= 0) take(r);
        }
      } else {
        for (let r = this.seriesHead[series]!; r >= 0; r = rows.next[r]!) {
          const bucketMs = rows.bucketMs[r]!;
          if (bucketMs >= firstMs && bucketMs <= lastMs) take(r);
        }
      }
    }
    const groups = this.groups;
    if (state.hasPairs) {
      // groups that set leaves: each as it is spread, in the order of their last writes
      for (const g of this.groupsOf(state)) {
        const id = source.vectorById[groups.finest[g]!]![slot]!;
        if (id < 0) continue;
        const bucketMs = source.starts[id]!;
        if (bucketMs < firstMs || bucketMs > lastMs) continue;
        const shape = groups.shape[g]!;
        const n = this.shapes.sizes[shape]!;
        const setFrom = this.shapes.assertFrom[shape]!;
        let set: Uint8Array | null = null;
        if (setFrom < n) (set = new Uint8Array(n)).fill(1, setFrom);
        const at = groups.at[g]!;
        out.push({
          bucketMs,
          delta: { paths: this.shapes.pathsOf(shape), values: groups.sums.data.slice(at, at + n), set },
        });
      }
      return out;
    }
    // the groups, summed per bucket of the granularity and shape
    const sums = new Map<number, Map<number, Float64Array>>();
    let lastBucket = Number.NaN;
    let lastShape = -1;
    let values: Float64Array = new Float64Array(0);
    for (let g = state.groupHead; g >= 0; g = groups.nextOfKey[g]!) {
      if (groups.live[g] === 0) continue;
      const id = source.vectorById[groups.finest[g]!]![slot]!;
      if (id < 0) continue;
      const bucketMs = source.starts[id]!;
      if (bucketMs < firstMs || bucketMs > lastMs) continue;
      const shape = groups.shape[g]!;
      const n = this.shapes.sizes[shape]!;
      // a key's groups come newest first: neighbours mostly share the bucket and shape
      if (bucketMs !== lastBucket || shape !== lastShape) {
        let byShape = sums.get(bucketMs);
        if (!byShape) sums.set(bucketMs, (byShape = new Map()));
        let found = byShape.get(shape);
        if (!found) byShape.set(shape, (found = new Float64Array(n)));
        values = found;
        lastBucket = bucketMs;
        lastShape = shape;
      }
      const at = groups.at[g]!;
      for (let i = 0; i < n; i++) values[i]! += groups.sums.data[at + i]!;
    }
    for (const [bucketMs, byShape] of sums) {
      for (const [shape, values] of byShape)
        out.push({ bucketMs, delta: { paths: this.shapes.pathsOf(shape), values, set: null } });
    }
    return out;
  }

  /** The system key's counts not folded yet within [firstMs, lastMs]; changes nothing (pendingRows). */
  pendingCounts(sourceId: string, granularity: string, firstMs: number, lastMs: number): PendingCounts[] {
    const source = this.sources.get(sourceId);
    const slot = source ? slotOf(source.plan, granularity) : -1;
    if (!source || slot < 0) return [];
    const byBucket = new Map<number, PendingCounts>();
    const entry = (bucketMs: number) => {
      let e = byBucket.get(bucketMs);
      if (!e) byBucket.set(bucketMs, (e = { bucketMs, count: 0, keys: [] }));
      return e;
    };
    const inRange = (ms: number) => ms >= firstMs && ms <= lastMs;
    const groups = this.groups;
    for (const state of source.keys.values()) {
      const series = state.series[slot]!;
      for (const r of series < 0 ? [] : this.rowsOf(series)) {
        const bucketMs = this.rows.bucketMs[r]!;
        const tracked = this.rows.tracked[r]!;
        if (tracked > 0 && !this.rows.countFolded(r) && inRange(bucketMs))
          entry(bucketMs).keys.push([state.key, tracked]);
      }
      // groups not spread yet: their points are in no count row either
      const perBucket = new Map<number, [tracked: number, untracked: number]>();
      for (let g = state.groupHead; g >= 0; g = groups.nextOfKey[g]!) {
        if (groups.live[g] === 0) continue;
        const id = source.vectorById[groups.finest[g]!]![slot]!;
        if (id < 0 || !inRange(source.starts[id]!)) continue;
        const bucketMs = source.starts[id]!;
        const sum = perBucket.get(bucketMs);
        if (sum) {
          sum[0] += groups.tracked[g]!;
          sum[1] += groups.untracked[g]!;
        } else perBucket.set(bucketMs, [groups.tracked[g]!, groups.untracked[g]!]);
      }
      for (const [bucketMs, [tracked, untracked]] of perBucket) {
        const e = entry(bucketMs);
        e.count += tracked + untracked;
        if (tracked > 0) e.keys.push([state.key, tracked]);
        if (untracked > 0) e.keys.push([UNTRACKED_KEY, untracked]);
      }
    }
    for (const row of source.counts[slot]!.values()) {
      if (row.folded || !inRange(row.bucketMs)) continue;
      const e = entry(row.bucketMs);
      e.count += row.count;
      if (row.untracked > 0) e.keys.push([UNTRACKED_KEY, row.untracked]);
      if (row.keys) for (const pair of row.keys) e.keys.push(pair);
    }
    return [...byBucket.values()];
  }

  private source(plan: SourcePlan): WindowSource {
    let source = this.sources.get(plan.sourceId);
    if (!source) this.sources.set(plan.sourceId, (source = new WindowSource(plan)));
    else if (source.plan !== plan)
      throw new Error(`window holds source ${plan.sourceId} under other settings`);
    return source;
  }

  /** The states of a wire's keys, found by the writer thread's numbers of them where the source met them before. */
  private keysByNumber(
    source: WindowSource,
    names: readonly string[],
    numbers: Int32Array,
    epoch: number,
  ): WindowKey[] {
    if (source.numbersEpoch !== epoch) {
      source.byNumber = [];
      source.numbersEpoch = epoch;
    }
    const byNumber = source.byNumber;
    const out = new Array<WindowKey>(numbers.length);
    for (let i = 0; i < numbers.length; i++) {
      const n = numbers[i]!;
      let state = byNumber[n];
      if (state === undefined) byNumber[n] = state = this.keyState(source, names[i]!);
      out[i] = state;
    }
    return out;
  }

  private keyState(source: WindowSource, key: string): WindowKey {
    let state = source.keys.get(key);
    if (!state) {
      state = new WindowKey(key, this.keys.length, source);
      source.keys.set(key, state);
      this.keys.push(state);
    }
    return state;
  }

  /** Adds a track (or a pair) to the group of its key, finest bucket and shape. */
  private addToGroup(state: WindowKey, finestId: number, leaf: LeafWrite): void {
    const { shape, values, offset } = leaf;
    const shapes = this.shapes;
    // tracks commute: the shapes of a key's groups are followed only once it holds pairs
    if (shape !== state.lastShape && (state.hasPairs || shapes.isPair(shape))) {
      if (!state.groupShapes.includes(shape)) {
        if (!state.hasPairs)
          this.spreadKey(state); // the first pair: the key's tracks before it go to rows
        else {
          // a shape new to the key's groups: spread them first if their order would then matter
          for (const other of state.groupShapes) {
            if (shapes.conflict(shape, other)) {
              this.spreadKey(state);
              break;
            }
          }
        }
        state.groupShapes.push(shape);
        if (shapes.isPair(shape)) state.hasPairs = true;
      }
      state.lastShape = shape;
    }
    const groups = this.groups;
    const g = groups.find(state.index, finestId, shape);
    if (groups.revived) {
      groups.nextOfKey[g] = state.groupHead;
      state.groupHead = g;
    }
    const sums = groups.sums.data;
    const at = groups.at[g]!;
    const n = shapes.sizes[shape]!;
    const setFrom = shapes.assertFrom[shape]!;
    for (let i = 0; i < setFrom; i++) sums[at + i]! += values[offset + i]!;
    for (let i = setFrom; i < n; i++) sums[at + i] = values[offset + i]!;
    groups.tracked[g]! += leaf.tracked;
    groups.untracked[g]! += leaf.untracked;
    groups.seq[g] = this.seq;
  }

  /** A key's live groups, in the order they are spread: their last writes' when it holds pairs. */
  private groupsOf(state: WindowKey): number[] {
    const groups = this.groups;
    const out: number[] = [];
    for (let g = state.groupHead; g >= 0; g = groups.nextOfKey[g]!) if (groups.live[g] !== 0) out.push(g);
    if (state.hasPairs) out.sort((a, b) => groups.seq[a]! - groups.seq[b]!);
    return out;
  }

  private spreadKey(state: WindowKey): void {
    state.groupShapes.length = 0;
    state.lastShape = -1;
    if (state.groupHead < 0) {
      state.hasPairs = false;
      return;
    }
    const groups = this.groups;
    const source = state.source;
    const leaf = this.spread;
    let n = 0;
    for (const g of this.groupsOf(state)) {
      if (++n % POLL_EVERY_GROUPS === 0 && !this.adding) this.poll?.();
      const vector = source.vectorById[groups.finest[g]!]!;
      leaf.shape = groups.shape[g]!;
      leaf.values = groups.sums.data;
      leaf.offset = groups.at[g]!;
      leaf.assert = false;
      leaf.tracked = groups.tracked[g]!;
      leaf.untracked = groups.untracked[g]!;
      this.toRows(state, vector, leaf);
      groups.live[g] = 0;
    }
    state.groupHead = -1;
    state.hasPairs = false;
  }

  /** Writes leaves into the rows of the given bucket ids (one per granularity), with the system key's counts. */
  private toRows(state: WindowKey, ids: Int32Array, leaf: LeafWrite): void {
    const { shape, tracked, untracked } = leaf;
    const source = state.source;
    const rows = this.rows;
    for (let slot = 0; slot < ids.length; slot++) {
      const id = ids[slot]!;
      if (id < 0) continue;
      let series = state.series[slot]!;
      if (series < 0) {
        series = state.series[slot] = this.seriesKey.push(state) - 1;
        this.seriesSlot.push(slot);
        this.seriesHead.push(-1);
        this.seriesRows.push(0);
      }
      const row = rows.find(series, id, source.starts[id]!, shape, this.seriesHead[series]!);
      if (rows.created) {
        this.seriesHead[series] = row;
        this.seriesRows[series]!++;
      }
      rows.write(row, leaf);
      if (tracked + untracked === 0) continue; // a write set's row: its counts come with the set
      rows.tracked[row]! += tracked;
      rows.untracked[row]! += untracked;
      const counts = source.countRow(slot, id);
      counts.count += tracked + untracked;
      counts.untracked += untracked;
    }
  }
}

/** A row's delta that stays as it is (its paths are a shape's, never changed; its numbers are copied). */
function copy(delta: RowDelta): RowDelta {
  return { paths: delta.paths, values: delta.values.slice(), set: delta.set?.slice() ?? null };
}

/** The operations of a key's bucket in a write set, created on first use. */
function opsOf(keys: KeyWrites, key: string, granularity: string, bucketMs: number): BucketOps {
  let byGranularity = keys.get(key);
  if (!byGranularity) keys.set(key, (byGranularity = new Map()));
  let buckets = byGranularity.get(granularity);
  if (!buckets) byGranularity.set(granularity, (buckets = new Map()));
  let ops = buckets.get(bucketMs);
  if (!ops) buckets.set(bucketMs, (ops = { add: new Map(), set: null }));
  return ops;
}

/** A track of a leaf: added to the value an assert set before it, else to the amount to add. */
export function addOp(ops: BucketOps, path: string, amount: number): void {
  const set = ops.set;
  if (set !== null && set.has(path)) set.set(path, set.get(path)! + amount);
  else ops.add.set(path, (ops.add.get(path) ?? 0) + amount);
}

/** An assert of a leaf: replaces the stored value and whatever was added before it. */
export function setOp(ops: BucketOps, path: string, value: number): void {
  (ops.set ??= new Map()).set(path, value);
  ops.add.delete(path);
}

function addSystemOps(counts: CountRow, ops: BucketOps): void {
  const leaves: Array<[string, number, boolean]> = [];
  for (const [path, amount] of ops.add) {
    if (path === 'count') counts.count += amount;
    else if (path.startsWith(SYSTEM_KEYS_PREFIX)) {
      const key = path.slice(SYSTEM_KEYS_PREFIX.length);
      const keys = (counts.keys ??= new Map());
      keys.set(key, (keys.get(key) ?? 0) + amount);
    } else leaves.push([path, amount, false]);
  }
  for (const [path, value] of ops.set ?? []) leaves.push([path, value, true]);
  if (leaves.length > 0) {
    counts.leaves = {
      paths: leaves.map((l) => l[0]),
      values: leaves.map((l) => l[1]),
      set: Uint8Array.from(leaves, (l) => (l[2] ? 1 : 0)),
    };
  }
}

export function slotOf(plan: SourcePlan, granularity: string): number {
  return plan.granularities.findIndex((g) => g.text === granularity);
}

export { ID_UNIT, SYSTEM_KEY };
