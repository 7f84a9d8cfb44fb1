// The fast path of batch parsing (domain/metrics/ingest/batch-parser.ts, domain/metrics/ingest/batch-worker.ts): reads the bytes of a plain
// batch body straight into WirePoints, without JSON.parse and without one object per point, which
// together were the largest CPU cost of batch ingest. It takes only a strict subset of JSON (ASCII
// strings without escapes, numbers as leaves, the known point members once each) and declines
// (null) anything else, so the generic path parses that body and gives every error and every
// unusual case exactly as before. Nothing here throws: a body it cannot vouch for is declined.
import { parseTimestampBytes } from '../../../shared/time';
import * as limits from './points';
import type { WirePoints } from '../../../model/point-wire';
import { scanNumber } from './batch-scan-numbers';
import {
  CLOSE,
  LEAF,
  OPEN,
  QUOTE,
  SPACE,
  beginStrings,
  dropStrings,
  keyAt,
  keyEnd,
  listOf,
  stringEnd,
  takeStrings,
} from './batch-scan-strings';

// Copied: an imported binding is read through a getter where modules are compiled to CommonJS.
const { MAX_BATCH_POINTS, MAX_DEPTH, MAX_LEAVES } = limits;

const [TAB, LF, CR, COMMA, COLON] = [9, 10, 13, 44, 58];
const [OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE] = [91, 93, 123, 125];

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const POINTS = ascii('"points"');
const [TRACK, ASSERT, TRUE, FALSE] = ['"track"', '"assert"', 'true', 'false'].map(ascii) as [
  Uint8Array,
  Uint8Array,
  Uint8Array,
  Uint8Array,
];
// The members of a point: a bit each (for duplicates), found by their first letter.
const [KEY, AT, VALUES, OPERATION, UNTRACKED] = [1, 2, 4, 8, 16];
const MEMBER_NAMES: Uint8Array[] = new Array(17).fill(new Uint8Array(0));
const MEMBER_OF_LETTER = new Uint8Array(256);
for (const [bit, name] of [
  [KEY, 'key'],
  [AT, 'at'],
  [VALUES, 'values'],
  [OPERATION, 'operation'],
  [UNTRACKED, 'untracked'],
] as const) {
  MEMBER_NAMES[bit] = ascii(`"${name}"`);
  MEMBER_OF_LETTER[name.charCodeAt(0)] = bit;
}

// meta[1] of a point: key x 2^24 + path list x 4 + flags (model/point-wire.ts). A body has at most
// MAX_BATCH_POINTS keys and path lists, far below the 2^29 and 2^22 the packing allows.
const KEY_UNIT = 2 ** 24;

// The body is scanned in a copy followed by PAD zero bytes. A zero byte ends every token (it is no
// part of any), so no loop needs a bounds check, and no read runs past the array: one that did would
// slow every later read at that spot (V8 then compiles it to allow undefined), by a sixth overall.
// PAD covers the longest look-ahead: a key's length past its start.
const PAD = 512;
const SMALL = 1 << 16;
let padded = new Uint8Array(SMALL);
let words = new DataView(padded.buffer); // the same bytes, read four at a time
// Scratch reused across calls (the scan is synchronous): the result gets copies of the used part.
const meta = new Float64Array(MAX_BATCH_POINTS * 2);
let values = new Float64Array(SMALL);
let shape = new Uint8Array(1024);

/** The first byte at or after `p` that is not JSON white space. */
function skipSpace(b: Uint8Array, p: number): number {
  // small enough to be inlined everywhere: most bodies have no white space, and this is one comparison
  return b[p]! > SPACE ? p : pastSpace(b, p);
}

function pastSpace(b: Uint8Array, p: number): number {
  for (let c = b[p]!; c === SPACE || c === LF || c === CR || c === TAB; c = b[++p]!);
  return p;
}

function startsWith(b: Uint8Array, p: number, expected: Uint8Array): boolean {
  for (let i = 0; i < expected.length; i++) if (b[p + i] !== expected[i]) return false;
  return true;
}

/** The start of a member's value: past the colon after its name (which ends before `p`), or -1. */
function valueAfter(b: Uint8Array, p: number): number {
  p = skipSpace(b, p);
  return b[p] === COLON ? skipSpace(b, p + 1) : -1;
}

// The last point read in full, as a template for the next ones: its bytes in the body, and where in
// them its key, time and numbers are (holes). A point with the same bytes around the holes has the
// same members in the same order, the same shape and flags: matching it is byte comparisons and
// reading the holes, no member or shape logic. Set by scanPoint, used by matchPoint.
const [HOLE_KEY, HOLE_AT, HOLE_NUMBER] = [0, 1, 2];
const holeStarts = new Int32Array(MAX_LEAVES + 2);
const holeEnds = new Int32Array(MAX_LEAVES + 2);
const holeKinds = new Uint8Array(MAX_LEAVES + 2);
let holes = 0;
let template = -1; // where the template starts (-1: none yet in this body)
let templateEnd = 0;
let templatePacked = 0; // path list x 4 + flags
// Set by the point readers (module state rather than a returned object: nothing is allocated per point).
let leafCount = 0;
let shapeLength = 0;
let atEnd = 0;

function hole(start: number, end: number, kind: number): void {
  holeStarts[holes] = start;
  holeEnds[holes] = end;
  holeKinds[holes++] = kind;
}

/** The time of the string whose content starts at `start` (its closing quote at atEnd), or NaN. */
function timeAt(b: Uint8Array, start: number): number {
  // parseTimestampBytes checks every byte up to `end`, so the string needs no scan of its own: its
  // quote is searched for (and found in the padding at worst)
  let end = start + 20;
  while (b[end] !== QUOTE && end < start + 41) end++;
  atEnd = end;
  return b[end] === QUOTE ? parseTimestampBytes(b, start, end) : NaN;
}

/**
 * Reads the values object at `p` (a `{`): its numbers into values from `at`, their count into
 * leafCount, and the index of its path list. Returns the index after it, or -1.
 */
function scanValues(b: Uint8Array, p: number, at: number): number {
  if (b[p] !== OPEN_BRACE) return -1;
  p = skipSpace(b, p + 1);
  if (b[p] === CLOSE_BRACE) return -1; // no leaves
  let length = 0;
  let depth = 1;
  let leaves = 0;
  for (;;) {
    // a member: "name": {... or "name": number
    if (b[p] !== QUOTE) return -1;
    const end = stringEnd(b, p + 1);
    if (end < 0) return -1;
    if (length + end - p + 2 > shape.length)
      shape = grown(shape, Math.max(shape.length * 2, length + end - p + 2)); // name, marker, CLOSE
    for (let i = p + 1; i < end; i++) shape[length++] = b[i]!;
    p = valueAfter(b, end + 1);
    if (p < 0) return -1;
    if (b[p] === OPEN_BRACE) {
      if (depth++ >= MAX_DEPTH) return -1;
      shape[length++] = OPEN;
      p = skipSpace(b, p + 1);
      if (b[p] !== CLOSE_BRACE) continue;
      depth--; // an empty object: no leaves, but its name stays in the shape (for duplicates)
      shape[length++] = CLOSE;
      p++;
    } else {
      if (leaves === MAX_LEAVES) return -1;
      if (at + leaves === values.length) values = grown(values, values.length * 2);
      shape[length++] = LEAF;
      const start = p;
      if ((p = scanNumber(b, p, values, at + leaves++)) < 0) return -1;
      hole(start, p, HOLE_NUMBER);
    }
    // then commas or closing braces
    for (p = skipSpace(b, p); b[p] !== COMMA; p = skipSpace(b, p)) {
      if (b[p] !== CLOSE_BRACE) return -1;
      p++;
      if (--depth === 0) {
        leafCount = leaves;
        shapeLength = length;
        return p;
      }
      if (length === shape.length) shape = grown(shape, length * 2);
      shape[length++] = CLOSE;
    }
    p = skipSpace(b, p + 1);
  }
}

function grown<T extends Uint8Array | Float64Array>(array: T, length: number): T {
  const bigger = new (array.constructor as new (length: number) => T)(length);
  bigger.set(array);
  return bigger;
}

/**
 * Reads the point object at `p` whose values start at values[at] into meta[m] (its time) and
 * meta[m + 1] (key, path list, flags), and makes it the template. Returns the index after it, or -1.
 */
function scanPoint(b: Uint8Array, p: number, at: number, m: number): number {
  if (b[p] !== OPEN_BRACE) return -1;
  const start = p;
  p = skipSpace(b, p + 1);
  let seen = 0;
  let key = -1;
  let list = -1;
  let flags = 0;
  let atMs = NaN;
  holes = 0;
  for (;;) {
    // member names are told apart by their first letter, then compared whole (closing quote included);
    // any other member (which the generic path ignores) declines the body
    const member = b[p] === QUOTE ? MEMBER_OF_LETTER[b[p + 1]!]! : 0;
    if (member === 0 || (seen & member) !== 0 || !startsWith(b, p, MEMBER_NAMES[member]!)) return -1;
    seen |= member;
    if ((p = valueAfter(b, p + MEMBER_NAMES[member]!.length)) < 0) return -1;
    if (member === KEY) {
      if (b[p] !== QUOTE || (key = keyAt(b, p + 1)) < 0) return -1;
      hole(p + 1, keyEnd, HOLE_KEY);
      p = keyEnd + 1;
    } else if (member === AT) {
      if (b[p] !== QUOTE || Number.isNaN((atMs = timeAt(b, p + 1)))) return -1;
      hole(p + 1, atEnd, HOLE_AT);
      p = atEnd + 1;
    } else if (member === VALUES) {
      if ((p = scanValues(b, p, at)) < 0 || (list = listOf(shape, shapeLength)) < 0) return -1;
    } else if (member === OPERATION) {
      if (startsWith(b, p, TRACK)) p += TRACK.length;
      else if (startsWith(b, p, ASSERT)) {
        p += ASSERT.length;
        flags |= 1;
      } else return -1;
    } else if (startsWith(b, p, FALSE)) p += FALSE.length;
    else if (startsWith(b, p, TRUE)) {
      p += TRUE.length;
      flags |= 2;
    } else return -1;
    p = skipSpace(b, p);
    if (b[p] === CLOSE_BRACE) break;
    if (b[p] !== COMMA) return -1;
    p = skipSpace(b, p + 1);
  }
  if ((seen & (KEY | AT | VALUES)) !== (KEY | AT | VALUES)) return -1;
  template = start;
  templateEnd = p + 1;
  templatePacked = list * 4 + flags;
  meta[m] = atMs;
  meta[m + 1] = key * KEY_UNIT + templatePacked;
  return p + 1;
}

/** The index past the bytes at `p` when they equal the template's from `t` to `end`, or -1. */
function sameAs(b: Uint8Array, p: number, t: number, end: number): number {
  const length = end - t;
  if (length < 4) {
    for (let i = 0; i < length; i++) if (b[p + i] !== b[t + i]) return -1;
    return p + length;
  }
  // four at a time, the last four overlapping the chunk before: a chunk is only read past one that
  // matched (and so lay in the body), so within the body or its padding
  for (let i = 0; i < length - 4; i += 4)
    if (words.getInt32(p + i, true) !== words.getInt32(t + i, true)) return -1;
  return words.getInt32(p + length - 4, true) === words.getInt32(end - 4, true) ? p + length : -1;
}

/** Reads the point at `p` as scanPoint does when it matches the template; the index after it, or -1. */
function matchPoint(b: Uint8Array, p: number, at: number, m: number): number {
  let t = template;
  let key = -1;
  let atMs = NaN;
  let leaves = 0;
  for (let h = 0; h < holes; h++) {
    if ((p = sameAs(b, p, t, holeStarts[h]!)) < 0) return -1;
    const kind = holeKinds[h];
    if (kind === HOLE_NUMBER) {
      if (at + leaves === values.length) values = grown(values, values.length * 2);
      if ((p = scanNumber(b, p, values, at + leaves++)) < 0) return -1;
    } else if (kind === HOLE_KEY) {
      if ((key = keyAt(b, p)) < 0) return -1;
      p = keyEnd;
    } else {
      if (Number.isNaN((atMs = timeAt(b, p)))) return -1;
      p = atEnd;
    }
    t = holeEnds[h]!;
  }
  if ((p = sameAs(b, p, t, templateEnd)) < 0) return -1;
  leafCount = leaves;
  meta[m] = atMs;
  meta[m + 1] = key * KEY_UNIT + templatePacked;
  return p;
}

/** The points of a batch body as WirePoints, or null when the body is outside the fast path (the caller then parses it the generic way). */
export function scanBatch(bytes: Uint8Array): WirePoints | null {
  const n = bytes.length;
  if (padded.length < n + PAD) words = new DataView((padded = new Uint8Array(n + PAD)).buffer);
  padded.set(bytes);
  padded.fill(0, n, n + PAD);
  const b = padded; // a plain Uint8Array, whatever the caller passed: the loops stay monomorphic
  beginStrings();
  template = -1;
  const result = scan(b, n);
  if (result === null) dropStrings();
  if (padded.length > 1 << 22) words = new DataView((padded = new Uint8Array(SMALL)).buffer); // let go of an unusually large body
  if (values.length > 1 << 20) values = new Float64Array(SMALL);
  return result;
}

function scan(b: Uint8Array, n: number): WirePoints | null {
  let p = skipSpace(b, 0);
  if (b[p] !== OPEN_BRACE) return null;
  p = skipSpace(b, p + 1);
  if (!startsWith(b, p, POINTS) || (p = valueAfter(b, p + POINTS.length)) < 0 || b[p] !== OPEN_BRACKET)
    return null;
  p = skipSpace(b, p + 1);
  let count = 0;
  let leaves = 0;
  for (;;) {
    if (count === MAX_BATCH_POINTS) return null;
    // points mostly repeat the last one's form: matched against it, else (or when that fails) read in full
    let next = template >= 0 ? matchPoint(b, p, leaves, count * 2) : -1;
    if (next < 0 && (next = scanPoint(b, p, leaves, count * 2)) < 0) return null;
    p = skipSpace(b, next);
    count++;
    leaves += leafCount;
    if (b[p] === CLOSE_BRACKET) break;
    if (b[p] !== COMMA) return null;
    p = skipSpace(b, p + 1);
  }
  p = skipSpace(b, p + 1);
  if (b[p] !== CLOSE_BRACE || skipSpace(b, p + 1) !== n) return null;
  return { ...takeStrings(), meta: meta.slice(0, count * 2), values: values.slice(0, leaves) };
}
