// Validated points in a form that crosses a thread boundary cheaply (batch-parser.ts): strings once
// each (keys, and leaf path lists shared by the points that spell the same leaves), numbers in two
// Float64Arrays whose buffers are transferred rather than copied. Decoding gives points with the
// same path list the same `paths` array, which the merge step compares by identity first.
import { AppError, type AppErrorOptions, type ErrorKind } from '../../errors';
import type { ValidPoint } from './ingest';
import { samePaths } from './track-groups';

export interface WirePoints {
  keys: string[];
  pathLists: string[][];
  /** per point: key index, atMs, flags (1 assert, 2 untracked), path list index */
  meta: Float64Array;
  /** every point's leaf values, in order */
  values: Float64Array;
}

const FIELDS = 4;
const ASSERT = 1;
const UNTRACKED = 2;

/** An unambiguous text for a list of paths (lengths first). */
function signature(paths: readonly string[]): string {
  let text = `${paths.length}`;
  for (const p of paths) text += `:${p.length}:${p}`;
  return text;
}

export function encodePoints(points: readonly ValidPoint[]): WirePoints {
  const keyIndex = new Map<string, number>();
  const listIndex = new Map<string, number>();
  const keys: string[] = [];
  const pathLists: string[][] = [];
  const meta = new Float64Array(points.length * FIELDS);
  let leafCount = 0;
  for (const p of points) leafCount += p.values.length;
  const values = new Float64Array(leafCount);
  let lastPaths: readonly string[] | null = null;
  let lastList = -1;
  let v = 0;
  for (let i = 0; i < points.length; i++) {
    const p = points[i]!;
    let k = keyIndex.get(p.key);
    if (k === undefined) keyIndex.set(p.key, (k = keys.push(p.key) - 1));
    // consecutive points mostly spell the same leaves: compare with the last list before hashing
    if (p.paths !== lastPaths && (lastPaths === null || !samePaths(p.paths, lastPaths))) {
      const sig = signature(p.paths);
      let l = listIndex.get(sig);
      if (l === undefined) listIndex.set(sig, (l = pathLists.push(p.paths.slice()) - 1));
      lastList = l;
    }
    lastPaths = p.paths;
    const m = i * FIELDS;
    meta[m] = k;
    meta[m + 1] = p.atMs;
    meta[m + 2] = (p.assert ? ASSERT : 0) | (p.untracked ? UNTRACKED : 0);
    meta[m + 3] = lastList;
    for (let j = 0; j < p.values.length; j++) values[v++] = p.values[j]!;
  }
  return { keys, pathLists, meta, values };
}

export function decodePoints(wire: WirePoints): ValidPoint[] {
  const { keys, pathLists, meta, values } = wire;
  const count = meta.length / FIELDS;
  const points: ValidPoint[] = new Array(count);
  let v = 0;
  for (let i = 0; i < count; i++) {
    const m = i * FIELDS;
    const paths = pathLists[meta[m + 3]!]!;
    const leafValues: number[] = new Array(paths.length);
    for (let j = 0; j < paths.length; j++) leafValues[j] = values[v++]!;
    const flags = meta[m + 2]!;
    points[i] = {
      key: keys[meta[m]!]!,
      atMs: meta[m + 1]!,
      assert: (flags & ASSERT) !== 0,
      untracked: (flags & UNTRACKED) !== 0,
      paths,
      values: leafValues,
    };
  }
  return points;
}

/** An error as plain data (structured clone keeps no class). */
export interface WireError {
  kind: ErrorKind;
  message: string;
  options: AppErrorOptions;
}

export function encodeError(err: unknown): WireError {
  if (err instanceof AppError) return { kind: err.kind, message: err.message, options: err.options };
  return { kind: 'internal', message: err instanceof Error ? err.message : String(err), options: {} };
}

export function decodeError(wire: WireError): AppError {
  return new AppError(wire.kind, wire.message, wire.options);
}
