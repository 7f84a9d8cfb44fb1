// Expansion of validated points into a write set (drivers/types.ts): every point lands in one
// bucket per allowed granularity of its source (floored in the source's zone), and every point adds
// the system key's bookkeeping to the same buckets: `count` 1 and `keys.<metric key>` 1
// (`keys.__untracked__` for untracked points; their values still go under the metric key).
//
// Merging keeps the effect of arrival order: `track` adds (to an asserted value too), `assert`
// replaces. A database source's store gets each group commit as one write set (`mergeCommit`,
// which the engine hands the driver registry); the embedded store's metric writer merges into its
// window instead (window.ts).
import { type BucketOps, type KeyWrites, type LoggedPoints, type SeriesWrites, type WriteSet, emptyWriteSet } from '../../drivers/types';
import type { ValidPoint } from './ingest';
import type { PlanCache, SourcePlan } from './plan';
import { decodePoints } from './point-wire';
import { SlotRun, TrackGroup, sameBuckets } from './track-groups';

export { PlanCache, planFor, type GranularityPlan, type PlanInput, type SourcePlan } from './plan';

export { SYSTEM_KEY } from '../../model/write-set';
import { SYSTEM_KEY } from '../../model/write-set';
export const UNTRACKED_KEY = '__untracked__';
const UNTRACKED_PATH = `keys.${UNTRACKED_KEY}`;

type LeafOp = (ops: BucketOps, path: string, value: number) => void;

/**
 * Leaves written into a bucket: `write` applies each path's value (adds or sets it), and the system
 * key's bookkeeping counts `tracked` and `untracked` points.
 */
interface BucketLeaves {
  readonly paths: readonly string[];
  readonly values: readonly number[];
  readonly write: LeafOp;
  readonly tracked: number;
  readonly untracked: number;
}

/** Track groups a merger holds before it spreads them (bounds a fold window's memory). */
const MAX_GROUPS = 10_000;

export function addLeaf(ops: BucketOps, path: string, amount: number): void {
  const set = ops.set;
  if (set !== null && set.has(path)) set.set(path, set.get(path)! + amount);
  else ops.add.set(path, (ops.add.get(path) ?? 0) + amount);
}

export function setLeaf(ops: BucketOps, path: string, value: number): void {
  (ops.set ??= new Map()).set(path, value);
  ops.add.delete(path);
}

function granularityMap(keys: KeyWrites, key: string): Map<string, SeriesWrites> {
  let map = keys.get(key);
  if (!map) keys.set(key, (map = new Map()));
  return map;
}

/**
 * The buckets of one key, one slot per planned granularity, remembering the last bucket used:
 * points of a batch mostly share a key and, for all but the finest granularities, a bucket.
 */
class KeySlots {
  /** the key's leaf in the system key: `keys.<key>` */
  readonly systemPath: string;
  private readonly series: SeriesWrites[];
  private readonly lastBucket: number[];
  private readonly lastOps: Array<BucketOps | null>;

  constructor(keys: KeyWrites, plan: SourcePlan, key: string) {
    this.systemPath = `keys.${key}`;
    const byGranularity = granularityMap(keys, key);
    this.series = plan.granularities.map((g) => {
      let buckets = byGranularity.get(g.text);
      if (!buckets) byGranularity.set(g.text, (buckets = new Map()));
      return buckets;
    });
    this.lastBucket = plan.granularities.map(() => Number.NaN);
    this.lastOps = plan.granularities.map(() => null);
  }

  ops(slot: number, bucket: number): BucketOps {
    if (this.lastBucket[slot] === bucket) return this.lastOps[slot]!;
    const buckets = this.series[slot]!;
    let ops = buckets.get(bucket);
    if (!ops) buckets.set(bucket, (ops = { add: new Map(), set: null }));
    this.lastBucket[slot] = bucket;
    this.lastOps[slot] = ops;
    return ops;
  }
}

/**
 * Merges points in order. Tracks commute, so tracks sharing every bucket are first summed in a
 * group and spread over the granularities once per group; an assert first spreads the groups
 * gathered so far, which keeps every assert between the tracks before and after it.
 */
class Merger {
  private readonly keys: KeyWrites;
  private readonly slots = new Map<string, KeySlots>();
  private readonly system: KeySlots;
  private readonly groups = new Map<string, Map<number, TrackGroup>>();
  private groupCount = 0;
  /** the group of the previous track, for the next point of the same key and finest bucket */
  private last: { key: string; finest: number; group: TrackGroup } | null = null;
  /** bucket starts of the point being merged, one per granularity (reused) */
  private readonly scratch: number[];
  /** one run per granularity while groups are spread (reused) */
  private readonly runs: SlotRun[];

  constructor(writes: WriteSet, private readonly plan: SourcePlan) {
    let keys = writes.sources.get(plan.sourceId);
    if (!keys) writes.sources.set(plan.sourceId, (keys = new Map()));
    this.keys = keys;
    this.system = this.slotsOf(SYSTEM_KEY);
    this.scratch = plan.granularities.map(() => Number.NaN);
    this.runs = plan.granularities.map(() => new SlotRun());
  }

  add(point: ValidPoint): void {
    const buckets = this.scratch;
    const granularities = this.plan.granularities;
    for (let i = 0; i < granularities.length; i++) buckets[i] = granularities[i]!.bucketer(point.atMs);
    const tracked = point.untracked ? 0 : 1;
    const leaves = (write: LeafOp): BucketLeaves => ({ paths: point.paths, values: point.values, write, tracked, untracked: 1 - tracked });
    if (point.assert) {
      this.spreadGroups();
      this.spread(point.key, buckets, leaves(setLeaf));
      return;
    }
    const group = this.groupFor(point, buckets);
    if (group) group.add(point);
    else this.spread(point.key, buckets, leaves(addLeaf));
  }

  spreadGroups(): void {
    for (const [key, byBucket] of this.groups) this.spreadKeyGroups(key, byBucket.values());
    this.groups.clear();
    this.groupCount = 0;
    this.last = null;
  }

  /** Spreads the groups of one key, summing consecutive groups per granularity bucket first. */
  private spreadKeyGroups(key: string, groups: Iterable<TrackGroup>): void {
    const metric = this.slotsOf(key);
    const runs = this.runs;
    for (const group of groups) {
      const [paths, values] = group.leaves();
      for (let slot = 0; slot < runs.length; slot++) {
        const bucket = group.buckets[slot]!;
        if (!Number.isFinite(bucket)) continue;
        const run = runs[slot]!;
        if (run.matches(bucket, paths)) run.add(values, group.tracked, group.untracked);
        else {
          this.writeRun(metric, slot, run);
          run.start(bucket, paths, values, group.tracked, group.untracked);
        }
      }
    }
    for (let slot = 0; slot < runs.length; slot++) this.writeRun(metric, slot, runs[slot]!);
  }

  private writeRun(metric: KeySlots, slot: number, run: SlotRun): void {
    if (!run.open) return;
    this.writeSlot(metric, slot, run.bucket, { paths: run.paths, values: run.sums, write: addLeaf, tracked: run.tracked, untracked: run.untracked });
    run.close();
  }

  /** The group of these buckets, or null when another point claimed its finest bucket with others. */
  private groupFor(point: ValidPoint, buckets: readonly number[]): TrackGroup | null {
    const key = point.key;
    const finest = buckets[this.plan.finest]!;
    let group: TrackGroup | undefined;
    if (this.last && this.last.key === key && this.last.finest === finest) group = this.last.group;
    else {
      let byBucket = this.groups.get(key);
      if (!byBucket) this.groups.set(key, (byBucket = new Map()));
      group = byBucket.get(finest);
      if (!group) {
        // A fold window of distinct keys makes a group per point: spread them early instead of
        // holding them all (bucket operations are shared by points, groups are not).
        if (this.groupCount >= MAX_GROUPS) {
          this.spreadGroups();
          return this.groupFor(point, buckets);
        }
        byBucket.set(finest, (group = new TrackGroup(buckets.slice(), point)));
        this.groupCount++;
      }
      this.last = { key, finest, group };
    }
    return sameBuckets(group.buckets, buckets) ? group : null;
  }

  private slotsOf(key: string): KeySlots {
    let slots = this.slots.get(key);
    if (!slots) this.slots.set(key, (slots = new KeySlots(this.keys, this.plan, key)));
    return slots;
  }

  /** Writes leaves into every granularity's bucket, with the system key's bookkeeping. */
  private spread(key: string, buckets: readonly number[], leaves: BucketLeaves): void {
    const metric = this.slotsOf(key);
    for (let slot = 0; slot < buckets.length; slot++) {
      const bucket = buckets[slot]!;
      if (Number.isFinite(bucket)) this.writeSlot(metric, slot, bucket, leaves);
    }
  }

  /** Writes leaves into one granularity's bucket, with the system key's bookkeeping. */
  private writeSlot(metric: KeySlots, slot: number, bucket: number, leaves: BucketLeaves): void {
    const { paths, values, write, tracked, untracked } = leaves;
    const ops = metric.ops(slot, bucket);
    for (let i = 0; i < paths.length; i++) write(ops, paths[i]!, values[i]!);
    const sys = this.system.ops(slot, bucket);
    addLeaf(sys, 'count', tracked + untracked);
    if (tracked > 0) addLeaf(sys, metric.systemPath, tracked);
    if (untracked > 0) addLeaf(sys, UNTRACKED_PATH, untracked);
  }
}

/** Merges points of one source into `writes`, in order. */
export function mergePoints(writes: WriteSet, plan: SourcePlan, points: readonly ValidPoint[]): void {
  const merger = new Merger(writes, plan);
  for (const point of points) merger.add(point);
  merger.spreadGroups();
}

/**
 * mergePoints for a group commit: the requests merged into one write set share one merger per plan, so tracks of every request that share
 * their buckets are summed before they are spread. The mergers live on the write set and go with
 * it; `finishMerging` spreads what they hold before the set is applied.
 */
export function mergeIntoPending(writes: WriteSet, plan: SourcePlan, points: readonly ValidPoint[]): void {
  const mergers = (writes.merging ??= new Map());
  let merger = mergers.get(plan) as Merger | undefined;
  if (!merger) mergers.set(plan, (merger = new Merger(writes, plan)));
  for (const point of points) merger.add(point);
}

/** Spreads the track groups still held by the write set's mergers; call before applying it. */
export function finishMerging(writes: WriteSet): void {
  if (!writes.merging) return;
  for (const merger of writes.merging.values()) (merger as Merger).spreadGroups();
  writes.merging = undefined;
}

/**
 * A group commit's entries (per source, in arrival order) as one write set: the commit's door of a
 * database source's layout (drivers/index.ts). Tracks of every request sharing their buckets are
 * summed before they are spread.
 */
export function mergeCommit(entries: readonly LoggedPoints[], plans: PlanCache): WriteSet {
  const writes = emptyWriteSet();
  for (const e of entries) mergeIntoPending(writes, plans.get(e.settings), decodePoints(e.wire));
  finishMerging(writes);
  return writes;
}
