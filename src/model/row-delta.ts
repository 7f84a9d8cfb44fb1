// The pending change of one bucket row of the embedded store, as the metric writer's window holds
// it (domain/metrics/window.ts), folds it (drivers/embedded-fold.ts) and lends it to reads that must
// see points not folded yet (drivers/embedded.ts). Each leaf path carries one number: the amount
// to add (track), or, when its `set` flag is up, the value that replaces the stored leaf (an
// assert, plus the tracks merged after it).
import { type PathSplitter, type Tree, addToLeaf, setLeaf } from './leaves';
import type { LoggedPoints } from './wire';

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
  /**
   * The last log record merged into the windows when the parts were taken: a read adds the
   * acknowledged records after it itself (embedded/store.ts). Absent: the parts hold everything.
   */
  mergedUpTo?: number;
  /** acknowledged appends the writer had not merged, oldest first (the read filters them by mergedUpTo) */
  unmerged?: UnmergedAppend[];
}

/** One acknowledged append of the write log (its records end at `upTo`) and its points. */
export interface UnmergedAppend {
  upTo: number;
  entries: readonly LoggedPoints[];
}

/**
 * A pending part as it crosses from the metric writer's thread to a read: a few arrays instead of
 * an object per row (a year of hourly rows cloned as objects cost a read about 20 ms).
 */
export interface PackedPart {
  fold: number;
  /** the rows' distinct path lists */
  shapes: string[][];
  bucketMs: Float64Array;
  /** per row: its path list in `shapes`; its values follow the row before's in `values` */
  shape: Int32Array;
  values: Float64Array;
  /** per value: 1 where it replaces the stored leaf; null when none does */
  sets: Uint8Array | null;
  counts: PendingCounts[];
}

export function packPart(part: PendingPart): PackedPart {
  const ids = new Map<readonly string[], number>();
  const shapes: string[][] = [];
  const { rows } = part;
  const bucketMs = new Float64Array(rows.length);
  const shape = new Int32Array(rows.length);
  let total = 0;
  let anySet = false;
  for (const { delta } of rows) {
    total += delta.paths.length;
    if (delta.set !== null) anySet = true;
  }
  const values = new Float64Array(total);
  const sets = anySet ? new Uint8Array(total) : null;
  let at = 0;
  rows.forEach(({ bucketMs: ms, delta }, i) => {
    let id = ids.get(delta.paths);
    if (id === undefined) ids.set(delta.paths, (id = shapes.push(delta.paths) - 1));
    bucketMs[i] = ms;
    shape[i] = id;
    values.set(delta.values, at);
    if (sets !== null && delta.set !== null) sets.set(delta.set, at);
    at += delta.paths.length;
  });
  return { fold: part.fold, shapes, bucketMs, shape, values, sets, counts: part.counts };
}

/** The part again, its rows' values views of the packed arrays. */
export function unpackPart(packed: PackedPart): PendingPart {
  const { shapes, bucketMs, shape, values, sets } = packed;
  const rows: PendingRow[] = new Array(bucketMs.length);
  let at = 0;
  for (let i = 0; i < rows.length; i++) {
    const paths = shapes[shape[i]!]!;
    const end = at + paths.length;
    rows[i] = {
      bucketMs: bucketMs[i]!,
      delta: { paths, values: values.subarray(at, end), set: sets === null ? null : sets.subarray(at, end) },
    };
    at = end;
  }
  return { fold: packed.fold, rows, counts: packed.counts };
}

/** The buffers of packed parts, moved rather than copied. */
export function packedBuffers(parts: readonly PackedPart[]): ArrayBuffer[] {
  const out: ArrayBuffer[] = [];
  for (const p of parts)
    for (const a of [p.bucketMs, p.shape, p.values, p.sets])
      if (a && a.buffer instanceof ArrayBuffer) out.push(a.buffer);
  return out;
}
