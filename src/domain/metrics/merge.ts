// Expansion of validated points into a write set (drivers/types.ts): every point lands in one
// bucket per allowed granularity of its source (floored in the source's zone), and every point adds
// the system key's bookkeeping to the same buckets: `count` 1 and `keys.<metric key>` 1
// (`keys.__untracked__` for untracked points; their values still go under the metric key).
//
// Merging keeps the effect of arrival order: `track` adds (to an asserted value too), `assert`
// replaces. There is one merger: the metric writer's window (model/window/window.ts), which merges the points
// of the embedded store between folds. A database source's store gets each group commit as one
// write set (`mergeCommit`, which the engine hands the driver registry): the commit's points are
// merged into a window of its own, whose rows are then written out as the write set.
import { type LoggedPoints, type WriteSet, emptyWriteSet } from '../../drivers/types';
import type { ValidPoint } from './ingest/points';
import type { PlanCache, SourcePlan } from '../../model/plan';
import { type WirePoints, encodePoints } from '../../model/point-wire';
import { IngestWindow } from '../../model/window/window';

export { PlanCache, planFor, type GranularityPlan, type PlanInput, type SourcePlan } from '../../model/plan';

export { SYSTEM_KEY } from '../../model/write-set';
export { UNTRACKED_KEY, addOp as addLeaf, setOp as setLeaf } from '../../model/window/window';

/** Bytes of rows beyond which an emptied window is not kept for the next write set. */
const SPARE_LIMIT = 4 << 20;
/**
 * An emptied window for the next write set: a window's columns cost more to allocate than a
 * commit of a few points costs to merge (merging is synchronous, so one spare serves every set).
 */
let spare: IngestWindow | null = null;

/** Writes out what a window holds and keeps it, emptied, as the spare. */
function writeOut(window: IngestWindow, writes: WriteSet): void {
  window.toWriteSet(writes);
  const small = window.bytes <= SPARE_LIMIT;
  window.reset();
  if (small) spare = window;
}

/** The window a write set's merging gathers in, kept on the set until `finishMerging`. */
function windowFor(writes: WriteSet, plan: SourcePlan): IngestWindow {
  const merging = (writes.merging ??= new Map());
  let window = merging.get(IngestWindow) as IngestWindow | undefined;
  // A window holds a source under one plan: points under new settings go to a new window, after
  // what the old one holds is written out (in order).
  const held = window?.planOf(plan.sourceId);
  if (window && held !== undefined && held !== plan) {
    writeOut(window, writes);
    window = undefined;
  }
  if (!window) {
    window = spare ?? new IngestWindow();
    spare = null;
    merging.set(IngestWindow, window);
  }
  return window;
}

function mergeWire(writes: WriteSet, plan: SourcePlan, wire: WirePoints): void {
  windowFor(writes, plan).add(plan, wire);
}

/** Merges points of one source into `writes`, in order. */
export function mergePoints(writes: WriteSet, plan: SourcePlan, points: readonly ValidPoint[]): void {
  mergeIntoPending(writes, plan, points);
  finishMerging(writes);
}

/**
 * mergePoints for a group commit: the requests merged into one write set share one window, so
 * tracks of every request that share their buckets are summed before they are spread. The window
 * lives on the write set and goes with it; `finishMerging` writes out what it holds before the set
 * is applied.
 */
export function mergeIntoPending(writes: WriteSet, plan: SourcePlan, points: readonly ValidPoint[]): void {
  if (points.length > 0) mergeWire(writes, plan, encodePoints(points));
}

/** Writes out what the write set's window holds; call before applying it. */
export function finishMerging(writes: WriteSet): void {
  const window = writes.merging?.get(IngestWindow) as IngestWindow | undefined;
  writes.merging = undefined;
  if (window) writeOut(window, writes);
}

/**
 * A group commit's entries (per source, in arrival order) as one write set: the commit's door of a
 * database source's layout (drivers/index.ts). Tracks of every request sharing their buckets are
 * summed before they are spread.
 */
export function mergeCommit(entries: readonly LoggedPoints[], plans: PlanCache): WriteSet {
  const writes = emptyWriteSet();
  for (const e of entries) mergeWire(writes, plans.get(e.settings), e.wire);
  finishMerging(writes);
  return writes;
}
