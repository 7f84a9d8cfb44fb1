// Validated points in a form that crosses a thread boundary cheaply (domain/metrics/ingest/batch-parser.ts): strings once
// each (keys, and leaf path lists shared by the points that spell the same leaves), numbers in two
// Float64Arrays whose buffers are transferred rather than copied. Decoding gives points with the
// same path list the same `paths` array, which the merge step compares by identity first.
import { AppError, type AppErrorOptions, type ErrorKind } from '../errors';
import type { ValidPoint } from './point';
import { samePaths } from './track-groups';

export type { WirePoints } from './wire';
import type { WirePoints } from './wire';

const FIELDS = 2;
export const ASSERT_FLAG = 1;
export const UNTRACKED_FLAG = 2;
const ASSERT = ASSERT_FLAG;
const UNTRACKED = UNTRACKED_FLAG;
// Indexes packed into one double (exact below 2^53): path lists below 2^22, keys below 2^29, far
// above what a write log entry holds (its points are bounded by the write queue).
export const KEY_UNIT = 2 ** 24;
export const LIST_UNIT = 4;

function leafCountOf(points: readonly ValidPoint[]): number {
  let count = 0;
  for (const p of points) count += p.values.length;
  return count;
}

/** An unambiguous text for a list of paths (lengths first). */
export function signature(paths: readonly string[]): string {
  let text = `${paths.length}`;
  for (const p of paths) text += `:${p.length}:${p}`;
  return text;
}

/** Where encodePoints puts its numbers (default: new arrays). */
export type DoublesAllocator = (length: number) => Float64Array;

const newDoubles: DoublesAllocator = (length) => new Float64Array(length);

export function encodePoints(
  points: readonly ValidPoint[],
  alloc: DoublesAllocator = newDoubles,
): WirePoints {
  const keyIndex = new Map<string, number>();
  const listIndex = new Map<string, number>();
  const keys: string[] = [];
  const pathLists: string[][] = [];
  const meta = alloc(points.length * FIELDS);
  const values = alloc(leafCountOf(points));
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
    meta[m] = p.atMs;
    meta[m + 1] =
      k * KEY_UNIT + lastList * LIST_UNIT + (p.assert ? ASSERT : 0) + (p.untracked ? UNTRACKED : 0);
    for (let j = 0; j < p.values.length; j++) values[v++] = p.values[j]!;
  }
  return { keys, pathLists, meta, values };
}

/** Where a path list's assert part starts in a wire (its length: the list is no pair). */
export function assertFromOf(wire: WirePoints, list: number): number {
  const from = wire.assertFrom?.[list];
  return from === undefined || from < 0 ? wire.pathLists[list]!.length : from;
}

/** The points a wire stands for: a pair counts as the two it holds. */
export function wirePointCount(wire: WirePoints): number {
  const meta = wire.meta;
  const count = meta.length / FIELDS;
  const assertFrom = wire.assertFrom;
  if (assertFrom === undefined) return count;
  // per path list: 1 when a point on it is a pair unless it has the assert flag
  const lists = wire.pathLists;
  const pairList = new Uint8Array(lists.length);
  let anyPair = false;
  for (let l = 0; l < lists.length; l++) {
    if (assertFromOf(wire, l) < lists[l]!.length) {
      pairList[l] = 1;
      anyPair = true;
    }
  }
  if (!anyPair) return count;
  let pairs = 0;
  for (let m = 1; m < meta.length; m += FIELDS) {
    const packed = meta[m]!;
    // below KEY_UNIT (2^24), an int32: the list index x LIST_UNIT (4) and the flags
    const low = (packed - Math.floor(packed / KEY_UNIT) * KEY_UNIT) | 0;
    pairs += pairList[low >> 2]! & ~low & ASSERT;
  }
  return count + pairs;
}

/** The wire's points; a pair gives its track point, then its assert point. */
export function decodePoints(wire: WirePoints): ValidPoint[] {
  const { keys, pathLists, meta, values } = wire;
  const count = meta.length / FIELDS;
  const points: ValidPoint[] = [];
  let v = 0;
  for (let i = 0; i < count; i++) {
    const m = i * FIELDS;
    const packed = meta[m + 1]!;
    const key = Math.floor(packed / KEY_UNIT);
    const low = packed - key * KEY_UNIT;
    const flags = low % LIST_UNIT;
    const list = (low - flags) / LIST_UNIT;
    const paths = pathLists[list]!;
    const assert = (flags & ASSERT) !== 0;
    const split = assert ? paths.length : assertFromOf(wire, list);
    const point = (from: number, to: number, asserted: boolean): ValidPoint => {
      const leafValues: number[] = new Array(to - from);
      for (let j = from; j < to; j++) leafValues[j - from] = values[v + j]!;
      return {
        key: keys[key]!,
        atMs: meta[m]!,
        assert: asserted,
        untracked: (flags & UNTRACKED) !== 0,
        paths: from === 0 && to === paths.length ? paths : paths.slice(from, to),
        values: leafValues,
      };
    };
    points.push(point(0, split, assert));
    if (split < paths.length) points.push(point(split, paths.length, true));
    v += paths.length;
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

/**
 * WirePoints as the pieces of one byte string, the body of a write-log record (drivers/
 * embedded/log.ts), without copying the numbers: meta and values as doubles (the machine's byte
 * order: the log is read back by the same machine), then the strings, the point count and the pairs' assert starts (when any) as JSON,
 * then that JSON's length as 4 bytes.
 */
export function wireToParts(wire: WirePoints): Buffer[] {
  const strings: unknown[] = [wire.keys, wire.pathLists, wire.meta.length / FIELDS];
  if (wire.assertFrom !== undefined) strings.push(wire.assertFrom);
  const json = Buffer.from(JSON.stringify(strings));
  const length = Buffer.allocUnsafe(4); // a piece of its own: the JSON is not copied again
  length.writeUInt32LE(json.length, 0);
  const view = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return [view(wire.meta), view(wire.values), json, length];
}

export function wireToBytes(wire: WirePoints): Buffer {
  return Buffer.concat(wireToParts(wire));
}

export function wireFromBytes(bytes: Uint8Array): WirePoints {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headLength = buf.readUInt32LE(buf.length - 4);
  const headStart = buf.length - 4 - headLength;
  const [keys, pathLists, count, assertFrom] = JSON.parse(
    buf.toString('utf8', headStart, buf.length - 4),
  ) as [string[], string[][], number, number[] | undefined];
  // a copy: the doubles must be aligned, which a slice of the caller's buffer need not be
  const doubles = new Float64Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + headStart));
  const wire: WirePoints = {
    keys,
    pathLists,
    meta: doubles.subarray(0, count * FIELDS),
    values: doubles.subarray(count * FIELDS),
  };
  if (assertFrom !== undefined) wire.assertFrom = assertFrom;
  return wire;
}

/**
 * Encodes write-log bodies into one reused buffer, in wireToBytes' layout, so a commit's bodies
 * need no allocation of their own. The bodies stay valid until `reset`, which the write queue
 * calls before the next commit.
 */
export class WireScratch {
  private buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;

  reset(): void {
    this.used = 0;
  }

  encode(points: readonly ValidPoint[]): Buffer {
    this.used = Math.ceil(this.used / 8) * 8;
    const start = this.used;
    this.ensure((points.length * FIELDS + leafCountOf(points)) * 8);
    const wire = encodePoints(points, (length) => {
      const doubles = new Float64Array(this.buf.buffer, this.buf.byteOffset + this.used, length);
      this.used += length * 8;
      return doubles;
    });
    const head = Buffer.from(JSON.stringify([wire.keys, wire.pathLists, points.length]));
    this.ensure(head.length + 4);
    head.copy(this.buf, this.used);
    this.buf.writeUInt32LE(head.length, this.used + head.length);
    this.used += head.length + 4;
    return this.buf.subarray(start, this.used);
  }

  /** Room for `bytes` more; a new buffer keeps what is used (bodies already handed out keep the old one). */
  private ensure(bytes: number): void {
    if (this.used + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.used + bytes));
    this.buf.copy(grown, 0, 0, this.used);
    this.buf = grown;
  }
}
