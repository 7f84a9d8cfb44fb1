// What a read merges itself: the points of acknowledged appends that the metric writer had not
// merged into its windows when it answered the read (embedded/store.ts). Only the read's series is
// merged, in log order, with the window's rules (model/window/rows.ts): a track adds to a leaf, an
// assert replaces it and the tracks after it add to the new value (a pair: its track part, then
// its assert part); the system key counts every point of its source (`count`, a pair as two), per
// key (`keys.<key>`) and the untracked ones (`keys.__untracked__`).
import type { PendingCounts, PendingPart, PendingRow, UnmergedAppend } from '../row-delta';
import type { PlanCache } from '../plan';
import { ASSERT_FLAG, KEY_UNIT, LIST_UNIT, UNTRACKED_FLAG, assertFromOf } from '../point-wire';
import { SYSTEM_KEY } from '../write-set';
import { UNTRACKED_KEY, slotOf } from './window';

/** One bucket's leaves as the appends change them: the value to add, or (set) the one that replaces. */
class Leaves {
  readonly index = new Map<string, number>();
  readonly paths: string[] = [];
  values: number[] = [];
  set: number[] = [];
  /** per path list of a wire (by identity): where its paths sit here */
  private readonly maps = new Map<readonly string[], Int32Array>();

  where(list: readonly string[]): Int32Array {
    let map = this.maps.get(list);
    if (!map) {
      map = new Int32Array(list.length);
      for (let j = 0; j < list.length; j++) {
        let p = this.index.get(list[j]!);
        if (p === undefined) {
          this.index.set(list[j]!, (p = this.paths.push(list[j]!) - 1));
          this.values.push(0);
          this.set.push(0);
        }
        map[j] = p;
      }
      this.maps.set(list, map);
    }
    return map;
  }
}

/**
 * The appends' points of one series within [firstMs, lastMs], as a pending part of fold `fold`
 * (the number of the fold that will write them, as the read's snapshot tells it).
 */
export function partOfAppends(
  appends: readonly UnmergedAppend[],
  plans: PlanCache,
  series: { sourceId: string; key: string; granularity: string },
  firstMs: number,
  lastMs: number,
  fold: number,
): PendingPart {
  const system = series.key === SYSTEM_KEY;
  const buckets = new Map<number, Leaves>();
  const counts = new Map<number, { count: number; keys: Map<string, number> }>();
  for (const { entries } of appends) {
    for (const { settings, wire } of entries) {
      if (settings.id !== series.sourceId) continue;
      const plan = plans.get(settings);
      const slot = slotOf(plan, series.granularity);
      if (slot < 0) continue;
      const { bucketer, next } = plan.granularities[slot]!;
      const k = system ? -1 : wire.keys.indexOf(series.key);
      if (!system && k < 0) continue;
      const { meta, values, pathLists } = wire;
      const n = meta.length / 2;
      // the last bucket found, [start, end): points in time order mostly fall in it
      let start = Number.NaN;
      let end = Number.NaN;
      let leaves: Leaves | undefined;
      // where the last point's paths sit in the last bucket's leaves
      let map: Int32Array = new Int32Array(0);
      let mapPaths: readonly string[] | null = null;
      let mapLeaves: Leaves | undefined;
      let v = 0;
      for (let i = 0; i < n; i++) {
        const packed = meta[2 * i + 1]!;
        const key = Math.floor(packed / KEY_UNIT);
        const low = packed - key * KEY_UNIT;
        const flags = low % LIST_UNIT;
        const list = (low - flags) / LIST_UNIT;
        const paths = pathLists[list]!;
        const setFrom = (flags & ASSERT_FLAG) !== 0 ? 0 : assertFromOf(wire, list);
        const at = v;
        v += paths.length;
        if (!system && key !== k) continue;
        const atMs = meta[2 * i]!;
        if (!(atMs >= start && atMs < end)) {
          start = bucketer(atMs);
          end = Number.isNaN(start) ? Number.NaN : next(start);
          leaves = undefined;
        }
        if (!(start >= firstMs && start <= lastMs)) continue; // NaN too
        if (system) {
          let c = counts.get(start);
          if (!c) counts.set(start, (c = { count: 0, keys: new Map() }));
          const weight = (flags & ASSERT_FLAG) === 0 && setFrom < paths.length ? 2 : 1;
          c.count += weight;
          const name = (flags & UNTRACKED_FLAG) !== 0 ? UNTRACKED_KEY : wire.keys[key]!;
          c.keys.set(name, (c.keys.get(name) ?? 0) + weight);
          continue;
        }
        if (!leaves) {
          leaves = buckets.get(start);
          if (!leaves) buckets.set(start, (leaves = new Leaves()));
        }
        if (paths !== mapPaths || leaves !== mapLeaves) {
          map = leaves.where(paths);
          mapPaths = paths;
          mapLeaves = leaves;
        }
        const sums = leaves.values;
        for (let j = 0; j < setFrom; j++) sums[map[j]!]! += values[at + j]!;
        for (let j = setFrom; j < paths.length; j++) {
          sums[map[j]!] = values[at + j]!;
          leaves.set[map[j]!] = 1;
        }
      }
    }
  }
  const rows: PendingRow[] = [];
  for (const [bucketMs, leaves] of buckets) {
    rows.push({
      bucketMs,
      delta: {
        paths: leaves.paths,
        values: Float64Array.from(leaves.values),
        set: leaves.set.includes(1) ? Uint8Array.from(leaves.set) : null,
      },
    });
  }
  const pendingCounts: PendingCounts[] = [];
  for (const [bucketMs, c] of counts) pendingCounts.push({ bucketMs, count: c.count, keys: [...c.keys] });
  return { fold, rows, counts: pendingCounts };
}
