// The pending change of one bucket row of the embedded store, as the metric writer's window holds
// it (domain/metrics/window.ts), folds it (drivers/embedded-fold.ts) and lends it to reads that must
// see points not folded yet (drivers/embedded.ts). Each leaf path carries one number: the amount
// to add (track), or, when its `set` flag is up, the value that replaces the stored leaf (an
// assert, plus the tracks merged after it).
import { type PathSplitter, type Tree, addToLeaf, setLeaf } from './leaves';

export interface RowDelta {
  paths: string[];
  values: Float64Array | number[];
  /** set[i] = 1: values[i] replaces the stored leaf; null: every leaf is an addition */
  set: Uint8Array | null;
}

/** Applies a delta to a stored tree: the replacements first, then the additions, in path order. */
export function applyDelta(tree: Tree, delta: RowDelta, splitter: PathSplitter): void {
  const { paths, values, set } = delta;
  if (set) {
    for (let i = 0; i < paths.length; i++)
      if (set[i] === 1) setLeaf(tree, splitter.split(paths[i]!), values[i]!);
  }
  for (let i = 0; i < paths.length; i++) {
    if (set === null || set[i] !== 1) addToLeaf(tree, splitter.split(paths[i]!), values[i]!);
  }
}

/**
 * What a read of one series must add to the stored rows: for each bucket with points not folded
 * yet, the deltas in the order they apply (the window being folded, then the newer one).
 */
export interface PendingRow {
  bucketMs: number;
  delta: RowDelta;
}

/** What a read of the system key must add: per bucket, points counted and counts per metric key. */
export interface PendingCounts {
  bucketMs: number;
  count: number;
  /** metric key (or `__untracked__`) -> points */
  keys: Array<[string, number]>;
}

/**
 * What one window of the metric writer holds of a series over a range, and the number of the fold
 * that writes (or wrote) it: a stored row whose `fold` column is at least that number already holds
 * it (a fold writes each row once, and folds commit in their numbers' order).
 */
export interface PendingPart {
  fold: number;
  rows: PendingRow[];
  counts: PendingCounts[];
}

/** The pending part of one series over a range: one part per window, oldest first. */
export interface PendingSeries {
  parts: PendingPart[];
}
