// Expansion of validated points into a write set (drivers/types.ts): every point lands in one
// bucket per allowed granularity of its source (floored in the source's zone), and every point adds
// the system key's bookkeeping to the same buckets: `count` 1 and `keys.<metric key>` 1
// (`keys.__untracked__` for untracked points; their values still go under the metric key).
//
// Merging keeps arrival order: `track` adds (to an asserted value too), `assert` replaces.
import type { BucketOps, KeyWrites, SeriesWrites, WriteSet } from '../../drivers/types';
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
}

export interface PlanInput extends Calendar {
  id: string;
  granularities: readonly string[];
}

export function planFor(source: PlanInput): SourcePlan {
  const granularities: GranularityPlan[] = [];
  for (const text of new Set(source.granularities)) {
    const g = parseGranularity(text);
    if (g) granularities.push({ text, bucketer: createBucketer(g, source) });
  }
  return { sourceId: source.id, granularities };
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

function bucketOps(series: Map<string, SeriesWrites>, granularity: string, bucket: number): BucketOps {
  let buckets = series.get(granularity);
  if (!buckets) series.set(granularity, (buckets = new Map()));
  let ops = buckets.get(bucket);
  if (!ops) buckets.set(bucket, (ops = { add: new Map(), set: null }));
  return ops;
}

/** Merges points of one source into `writes`, in order. */
export function mergePoints(writes: WriteSet, plan: SourcePlan, points: readonly ValidPoint[]): void {
  let keys = writes.sources.get(plan.sourceId);
  if (!keys) writes.sources.set(plan.sourceId, (keys = new Map()));
  const system = granularityMap(keys, SYSTEM_KEY);
  for (const point of points) {
    const metric = granularityMap(keys, point.key);
    const tracking = `keys.${point.untracked ? UNTRACKED_KEY : point.key}`;
    const { paths, values } = point;
    for (const g of plan.granularities) {
      const bucket = g.bucketer(point.atMs);
      if (!Number.isFinite(bucket)) continue;
      const ops = bucketOps(metric, g.text, bucket);
      if (point.assert) for (let i = 0; i < paths.length; i++) setLeaf(ops, paths[i]!, values[i]!);
      else for (let i = 0; i < paths.length; i++) addLeaf(ops, paths[i]!, values[i]!);
      const sys = bucketOps(system, g.text, bucket);
      addLeaf(sys, 'count', 1);
      addLeaf(sys, tracking, 1);
    }
  }
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
