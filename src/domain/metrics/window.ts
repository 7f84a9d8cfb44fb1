// The merge state of the metric writer (metric-writer.ts): the points acknowledged since the last
// fold, merged per bucket row, until the fold writes each touched row once. One window per writer
// gathers; the one being folded stays readable until each of its rows has committed.
//
// Two levels keep the cost per point small:
// - groups: tracks of one key whose timestamps share every bucket (the usual case: they share the
//   finest bucket, and the finest bucket lies within one bucket of each coarser granularity) are
//   summed in one group, so a point costs one bucketer call and a few additions;
// - rows: a group is spread into one row per granularity when the window is folded, read, or
//   holds too many groups. An assert first spreads its key's groups (tracks before it keep their
//   place) and is then written into the rows directly.
// The system key's bookkeeping (SPEC 5.1) is counted, not merged: each row counts its tracked and
// untracked points (keys.<key>, keys.__untracked__), each source a `count` per bucket.
import type { PendingCounts, PendingRow, RowDelta } from '../../model/row-delta';
import { type BucketOps, type KeyWrites, SYSTEM_KEY, SYSTEM_KEYS_PREFIX } from '../../model/write-set';
import type { SourcePlan } from './plan';
import { ASSERT_FLAG, KEY_UNIT, LIST_UNIT, UNTRACKED_FLAG, type WirePoints, signature } from './point-wire';
import { samePaths } from './track-groups';

export const UNTRACKED_KEY = '__untracked__';

/** Groups a window holds before it spreads them into rows (bounds its memory). */
const MAX_GROUPS = 200_000;
/** Finest buckets whose bucket vectors a source remembers. */
const MAX_VECTORS = 50_000;

/** One bucket row's pending change (RowDelta) and the points it counts for the system key. */
export class Row implements RowDelta {
  paths: string[];
  values: number[];
  set: Uint8Array | null = null;
  tracked = 0;
  untracked = 0;
  /** true once the fold that writes this row has committed: reads stop adding it */
  folded = false;
  /** the same for its points in the system key's per-key counts (written in a later transaction) */
  countFolded = false;
  /** `paths` is this row's own array (else shared with groups and rows of the same shape) */
  private ownPaths = false;

  constructor(paths: string[]) {
    this.paths = paths;
    this.values = new Array<number>(paths.length).fill(0);
  }

  /** Adds `count` values of `source` from `offset`, leaf i to `paths[i]`. */
  add(paths: string[], source: ArrayLike<number>, offset: number): void {
    if (paths === this.paths || samePaths(paths, this.paths)) {
      const values = this.values;
      for (let i = 0; i < paths.length; i++) values[i]! += source[offset + i]!;
      return;
    }
    for (let i = 0; i < paths.length; i++) this.values[this.indexOf(paths[i]!)]! += source[offset + i]!;
  }

  /** An assert: the given leaves take these values (later tracks add to them). */
  assign(paths: string[], source: ArrayLike<number>, offset: number): void {
    for (let i = 0; i < paths.length; i++) {
      const at = this.indexOf(paths[i]!);
      this.values[at] = source[offset + i]!;
      (this.set ??= new Uint8Array(this.values.length))[at] = 1;
    }
  }

  private indexOf(path: string): number {
    const at = this.paths.indexOf(path);
    if (at >= 0) return at;
    if (!this.ownPaths) {
      this.paths = this.paths.slice();
      this.ownPaths = true;
    }
    this.paths.push(path);
    this.values.push(0);
    if (this.set) {
      const grown = new Uint8Array(this.paths.length);
      grown.set(this.set);
      this.set = grown;
    }
    return this.paths.length - 1;
  }
}

/** Tracks of one key sharing every bucket, summed (spread into rows later). */
class Group {
  readonly sums: number[];
  tracked = 0;
  untracked = 0;
  /** a group of the same buckets with other paths */
  next: Group | null = null;

  constructor(readonly buckets: Float64Array, readonly paths: string[]) {
    this.sums = new Array<number>(paths.length).fill(0);
  }
}

/** The system key's bookkeeping of one bucket: points counted and the untracked ones among them. */
export class CountRow {
  count = 0;
  untracked = 0;
  folded = false;
  /** a write set's own system-key writes (addWriteSet): per-key counts and other leaves */
  keys: Map<string, number> | null = null;
  leaves: Row | null = null;
}

export class WindowKey {
  readonly groups = new Map<number, Group>();
  /** per granularity of the plan: bucket start (ms) -> row */
  readonly rows: Array<Map<number, Row>>;

  constructor(readonly key: string, granularities: number) {
    this.rows = Array.from({ length: granularities }, () => new Map<number, Row>());
  }
}

export class WindowSource {
  readonly keys = new Map<string, WindowKey>();
  /** per granularity: bucket start (ms) -> the system key's counts */
  readonly counts: Array<Map<number, CountRow>>;
  /** finest bucket start -> the bucket of every granularity, or null when they differ within it */
  private readonly vectors = new Map<number, Float64Array | null>();
  private readonly scratch: Float64Array;

  constructor(readonly plan: SourcePlan) {
    this.counts = plan.granularities.map(() => new Map<number, CountRow>());
    this.scratch = new Float64Array(plan.granularities.length);
  }

  keyState(key: string): WindowKey {
    let state = this.keys.get(key);
    if (!state) this.keys.set(key, (state = new WindowKey(key, this.plan.granularities.length)));
    return state;
  }

  /** The shared bucket vector of every instant of a finest bucket, or null if there is none. */
  vectorOf(finestStart: number): Float64Array | null {
    let vector = this.vectors.get(finestStart);
    if (vector === undefined) {
      if (this.vectors.size >= MAX_VECTORS) this.vectors.clear();
      const first = this.bucketsAt(finestStart, new Float64Array(this.scratch.length));
      const last = this.bucketsAt(this.plan.granularities[this.plan.finest]!.next(finestStart) - 1, this.scratch);
      vector = sameVector(first, last) ? first : null;
      this.vectors.set(finestStart, vector);
    }
    return vector;
  }

  bucketsAt(atMs: number, into: Float64Array): Float64Array {
    const granularities = this.plan.granularities;
    for (let i = 0; i < granularities.length; i++) into[i] = granularities[i]!.bucketer(atMs);
    return into;
  }

  countRow(slot: number, bucket: number): CountRow {
    const counts = this.counts[slot]!;
    let row = counts.get(bucket);
    if (!row) counts.set(bucket, (row = new CountRow()));
    return row;
  }
}

function sameVector(a: Float64Array, b: Float64Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i] && !(Number.isNaN(a[i]) && Number.isNaN(b[i]))) return false;
  return true;
}

export class IngestWindow {
  readonly sources = new Map<string, WindowSource>();
  /** points merged into this window */
  points = 0;
  private groupCount = 0;
  /** path lists by their text, so that rows and groups of one shape share one array */
  private readonly shapes = new Map<string, string[]>();

  /** The plan this window merges a source's points with, if it holds any of them. */
  planOf(sourceId: string): SourcePlan | undefined {
    return this.sources.get(sourceId)?.plan;
  }

  /** Merges a request's points, in order. The window must not hold the source under another plan. */
  add(plan: SourcePlan, wire: WirePoints): void {
    let source = this.sources.get(plan.sourceId);
    if (!source) this.sources.set(plan.sourceId, (source = new WindowSource(plan)));
    else if (source.plan !== plan) throw new Error(`window holds source ${plan.sourceId} under other settings`);
    const keys = wire.keys.map((key) => source.keyState(key));
    const pathLists = wire.pathLists.map((list) => this.shape(list));
    const finest = plan.granularities[plan.finest]!.bucketer;
    const { meta, values } = wire;
    const count = meta.length / 2;
    let v = 0;
    for (let i = 0; i < count; i++) {
      const atMs = meta[2 * i]!;
      const packed = meta[2 * i + 1]!;
      const key = Math.floor(packed / KEY_UNIT);
      const low = packed - key * KEY_UNIT;
      const flags = low % LIST_UNIT;
      const paths = pathLists[(low - flags) / LIST_UNIT]!;
      const state = keys[key]!;
      const assert = (flags & ASSERT_FLAG) !== 0;
      const untracked = (flags & UNTRACKED_FLAG) !== 0;
      if (assert) {
        this.spreadKey(source, state);
        this.direct(source, state, atMs, paths, values, v, true, untracked);
      } else {
        const start = finest(atMs);
        const vector = Number.isNaN(start) ? null : source.vectorOf(start);
        if (vector) this.group(state, start, vector, paths, values, v, untracked);
        else this.direct(source, state, atMs, paths, values, v, false, untracked);
      }
      v += paths.length;
    }
    this.points += count;
    if (this.groupCount >= MAX_GROUPS) this.spreadAll();
  }

  /**
   * A write set's operations, row by row (the store contract's `apply`): the source's granularities
   * are those the set names, and the system key's `count` and `keys.*` go to its bookkeeping.
   */
  addWriteSet(sourceId: string, keys: KeyWrites): void {
    if (this.sources.has(sourceId)) throw new Error(`window already holds source ${sourceId}`);
    const texts = [...new Set([...keys.values()].flatMap((byGranularity) => [...byGranularity.keys()]))];
    const none = () => Number.NaN;
    const plan: SourcePlan = { sourceId, granularities: texts.map((text) => ({ text, bucketer: none, next: none })), finest: 0 };
    const source = new WindowSource(plan);
    this.sources.set(sourceId, source);
    for (const [key, byGranularity] of keys) {
      const system = key === SYSTEM_KEY;
      const state = system ? null : source.keyState(key);
      for (const [granularity, buckets] of byGranularity) {
        const slot = texts.indexOf(granularity);
        for (const [bucketMs, ops] of buckets) {
          if (system) addSystemOps(source.countRow(slot, bucketMs), ops);
          else {
            const rows = state!.rows[slot]!;
            let row = rows.get(bucketMs);
            if (!row) rows.set(bucketMs, (row = new Row([])));
            addOps(row, ops);
          }
          this.points++;
        }
      }
    }
  }

  private shape(list: string[]): string[] {
    const text = signature(list);
    let shared = this.shapes.get(text);
    if (!shared) this.shapes.set(text, (shared = list));
    return shared;
  }

  /** Spreads every group into rows (before a fold). */
  spreadAll(): void {
    for (const source of this.sources.values()) for (const state of source.keys.values()) this.spreadKey(source, state);
  }

  /** Rows not folded yet of one series within [firstMs, lastMs], as a read must add them. */
  pendingRows(sourceId: string, key: string, granularity: string, firstMs: number, lastMs: number): PendingRow[] {
    const source = this.sources.get(sourceId);
    const slot = source ? slotOf(source.plan, granularity) : -1;
    const state = source?.keys.get(key);
    if (!source || slot < 0 || !state) return [];
    this.spreadKey(source, state);
    const out: PendingRow[] = [];
    for (const [bucketMs, row] of state.rows[slot]!) {
      if (row.folded || bucketMs < firstMs || bucketMs > lastMs) continue;
      out.push({ bucketMs, delta: { paths: row.paths.slice(), values: row.values.slice(), set: row.set?.slice() ?? null } });
    }
    return out;
  }

  /** The system key's counts not folded yet within [firstMs, lastMs]. */
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
    for (const state of source.keys.values()) {
      this.spreadKey(source, state);
      for (const [bucketMs, row] of state.rows[slot]!) {
        if (!row.countFolded && row.tracked > 0 && bucketMs >= firstMs && bucketMs <= lastMs) entry(bucketMs).keys.push([state.key, row.tracked]);
      }
    }
    for (const [bucketMs, row] of source.counts[slot]!) {
      if (row.folded || bucketMs < firstMs || bucketMs > lastMs) continue;
      const e = entry(bucketMs);
      e.count += row.count;
      if (row.untracked > 0) e.keys.push([UNTRACKED_KEY, row.untracked]);
      if (row.keys) for (const pair of row.keys) e.keys.push(pair);
    }
    return [...byBucket.values()];
  }

  private group(state: WindowKey, start: number, vector: Float64Array, paths: string[], values: Float64Array, offset: number, untracked: boolean): void {
    let group = state.groups.get(start);
    if (!group) {
      state.groups.set(start, (group = new Group(vector, paths)));
      this.groupCount++;
    } else {
      while (group.paths !== paths && !samePaths(group.paths, paths)) {
        if (!group.next) {
          group.next = new Group(vector, paths);
          this.groupCount++;
        }
        group = group.next;
      }
    }
    const sums = group.sums;
    for (let i = 0; i < paths.length; i++) sums[i]! += values[offset + i]!;
    if (untracked) group.untracked++;
    else group.tracked++;
  }

  private spreadKey(source: WindowSource, state: WindowKey): void {
    if (state.groups.size === 0) return;
    for (const group of state.groups.values()) {
      for (let g: Group | null = group; g; g = g.next) {
        this.toRows(source, state, g.buckets, g.paths, g.sums, 0, false, g.tracked, g.untracked);
        this.groupCount--;
      }
    }
    state.groups.clear();
  }

  /** One point written into its rows without a group (asserts; timestamps without a shared vector). */
  private direct(source: WindowSource, state: WindowKey, atMs: number, paths: string[], values: Float64Array, offset: number, assert: boolean, untracked: boolean): void {
    const buckets = source.bucketsAt(atMs, new Float64Array(source.plan.granularities.length));
    this.toRows(source, state, buckets, paths, values, offset, assert, untracked ? 0 : 1, untracked ? 1 : 0);
  }

  private toRows(
    source: WindowSource,
    state: WindowKey,
    buckets: Float64Array,
    paths: string[],
    values: ArrayLike<number>,
    offset: number,
    assert: boolean,
    tracked: number,
    untracked: number,
  ): void {
    for (let slot = 0; slot < buckets.length; slot++) {
      const bucket = buckets[slot]!;
      if (Number.isNaN(bucket)) continue;
      const rows = state.rows[slot]!;
      let row = rows.get(bucket);
      if (!row) rows.set(bucket, (row = new Row(paths)));
      if (assert) row.assign(paths, values, offset);
      else row.add(paths, values, offset);
      row.tracked += tracked;
      row.untracked += untracked;
      const counts = source.countRow(slot, bucket);
      counts.count += tracked + untracked;
      counts.untracked += untracked;
    }
  }
}

function addOps(row: Row, ops: BucketOps): void {
  for (const [map, write] of [[ops.set, 'assign'], [ops.add, 'add']] as const) {
    if (!map) continue;
    const entries = [...map];
    row[write](entries.map((e) => e[0]), entries.map((e) => e[1]), 0);
  }
}

function addSystemOps(counts: CountRow, ops: BucketOps): void {
  const rest: BucketOps = { add: new Map(), set: ops.set };
  for (const [path, amount] of ops.add) {
    if (path === 'count') counts.count += amount;
    else if (path.startsWith(SYSTEM_KEYS_PREFIX)) {
      const key = path.slice(SYSTEM_KEYS_PREFIX.length);
      const keys = (counts.keys ??= new Map());
      keys.set(key, (keys.get(key) ?? 0) + amount);
    } else rest.add.set(path, amount);
  }
  if (rest.add.size > 0 || rest.set) addOps((counts.leaves ??= new Row([])), rest);
}

export function slotOf(plan: SourcePlan, granularity: string): number {
  return plan.granularities.findIndex((g) => g.text === granularity);
}

export { SYSTEM_KEY };
