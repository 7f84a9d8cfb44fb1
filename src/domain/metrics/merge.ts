// Expansion of validated points into a write set (drivers/types.ts): every point lands in one
// bucket per allowed granularity of its source (floored in the source's zone), and every point adds
// the system key's bookkeeping to the same buckets: `count` 1 and `keys.<metric key>` 1
// (`keys.__untracked__` for untracked points; their values still go under the metric key).
//
// Merging keeps the effect of arrival order: `track` adds (to an asserted value too), `assert`
// replaces.
import type { BucketOps, KeyWrites, SeriesWrites, WriteSet } from '../../drivers/types';
import { nominalMaxMs } from './calendar';
import { createBucketer, parseGranularity, type Calendar } from './granularity';
import type { ValidPoint } from './ingest';

export const SYSTEM_KEY = '__system__key__';
export const UNTRACKED_KEY = '__untracked__';

export interface GranularityPlan {
  text: string;
  bucketer: (atMs: number) => number;
}

/** What merging needs of a source: its id and a bucketer per allowed granularity. */
export interface SourcePlan {
  sourceId: string;
  granularities: GranularityPlan[];
  /** index of the granularity with the shortest buckets */
  finest: number;
}

export interface PlanInput extends Calendar {
  id: string;
  granularities: readonly string[];
}

export function planFor(source: PlanInput): SourcePlan {
  const granularities: GranularityPlan[] = [];
  let finest = 0;
  let shortest = Infinity;
  for (const text of new Set(source.granularities)) {
    const g = parseGranularity(text);
    if (!g) continue;
    if (nominalMaxMs(g) < shortest) {
      shortest = nominalMaxMs(g);
      finest = granularities.length;
    }
    granularities.push({ text, bucketer: createBucketer(g, source) });
  }
  return { sourceId: source.id, granularities, finest };
}

/** Plans cached per source and settings; a full cache is simply emptied (plans are cheap to rebuild). */
export class PlanCache {
  private readonly plans = new Map<string, SourcePlan>();
  constructor(private readonly limit = 1000) {}

  get(source: PlanInput): SourcePlan {
    const id = `${source.id}|${source.timeZone}|${source.beginningOfWeek}|${source.granularities.join(',')}`;
    let plan = this.plans.get(id);
    if (!plan) {
      if (this.plans.size >= this.limit) this.plans.clear();
      plan = planFor(source);
      this.plans.set(id, plan);
    }
    return plan;
  }
}

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
  private readonly series: SeriesWrites[];
  private readonly lastBucket: number[];
  private readonly lastOps: Array<BucketOps | null>;

  constructor(keys: KeyWrites, plan: SourcePlan, key: string) {
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

/** Tracks of one key that fell into the same bucket of every granularity, summed. */
interface TrackGroup {
  buckets: number[];
  leaves: Map<string, number>;
  tracked: number;
  untracked: number;
}

function sameBuckets(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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

  constructor(writes: WriteSet, private readonly plan: SourcePlan) {
    let keys = writes.sources.get(plan.sourceId);
    if (!keys) writes.sources.set(plan.sourceId, (keys = new Map()));
    this.keys = keys;
    this.system = this.slotsOf(SYSTEM_KEY);
  }

  add(point: ValidPoint): void {
    const buckets = this.plan.granularities.map((g) => g.bucketer(point.atMs));
    if (point.assert) {
      this.spreadGroups();
      this.spread(point.key, buckets, point.paths, point.values, setLeaf, point.untracked ? 0 : 1, point.untracked ? 1 : 0);
      return;
    }
    let byBucket = this.groups.get(point.key);
    if (!byBucket) this.groups.set(point.key, (byBucket = new Map()));
    const finest = buckets[this.plan.finest]!;
    let group = byBucket.get(finest);
    if (!group) byBucket.set(finest, (group = { buckets, leaves: new Map(), tracked: 0, untracked: 0 }));
    else if (!sameBuckets(group.buckets, buckets)) {
      this.spread(point.key, buckets, point.paths, point.values, addLeaf, point.untracked ? 0 : 1, point.untracked ? 1 : 0);
      return;
    }
    for (let i = 0; i < point.paths.length; i++) {
      const path = point.paths[i]!;
      group.leaves.set(path, (group.leaves.get(path) ?? 0) + point.values[i]!);
    }
    if (point.untracked) group.untracked++;
    else group.tracked++;
  }

  spreadGroups(): void {
    for (const [key, byBucket] of this.groups) {
      for (const g of byBucket.values()) this.spread(key, g.buckets, [...g.leaves.keys()], [...g.leaves.values()], addLeaf, g.tracked, g.untracked);
    }
    this.groups.clear();
  }

  private slotsOf(key: string): KeySlots {
    let slots = this.slots.get(key);
    if (!slots) this.slots.set(key, (slots = new KeySlots(this.keys, this.plan, key)));
    return slots;
  }

  /** Writes leaves into every granularity's bucket, with the system key's bookkeeping. */
  private spread(
    key: string,
    buckets: readonly number[],
    paths: readonly string[],
    values: readonly number[],
    write: (ops: BucketOps, path: string, value: number) => void,
    tracked: number,
    untracked: number,
  ): void {
    const metric = this.slotsOf(key);
    for (let slot = 0; slot < buckets.length; slot++) {
      const bucket = buckets[slot]!;
      if (!Number.isFinite(bucket)) continue;
      const ops = metric.ops(slot, bucket);
      for (let i = 0; i < paths.length; i++) write(ops, paths[i]!, values[i]!);
      const sys = this.system.ops(slot, bucket);
      addLeaf(sys, 'count', tracked + untracked);
      if (tracked > 0) addLeaf(sys, `keys.${key}`, tracked);
      if (untracked > 0) addLeaf(sys, `keys.${UNTRACKED_KEY}`, untracked);
    }
  }
}

/** Merges points of one source into `writes`, in order. */
export function mergePoints(writes: WriteSet, plan: SourcePlan, points: readonly ValidPoint[]): void {
  const merger = new Merger(writes, plan);
  for (const point of points) merger.add(point);
  merger.spreadGroups();
}

/** Number of leaf operations in a write set (for logs and benchmarks). */
export function countOps(writes: WriteSet): number {
  let n = 0;
  for (const keys of writes.sources.values()) {
    for (const series of keys.values()) {
      for (const buckets of series.values()) {
        for (const ops of buckets.values()) n += ops.add.size + (ops.set?.size ?? 0);
      }
    }
  }
  return n;
}
