// The fast path of batch parsing (batch-parser.ts, batch-worker.ts): reads the bytes of a plain
// batch body straight into WirePoints, without JSON.parse and without one object per point, which
// together were the largest CPU cost of batch ingest. It takes only a strict subset of JSON (ASCII
// strings without escapes, numbers as leaves, the known point members once each) and declines
// (null) anything else, so the generic path parses that body and gives every error and every
// unusual case exactly as before. Nothing here throws: a body it cannot vouch for is declined.
import { SYSTEM_KEY } from '../../model/write-set';
import { parseTimestampBytes } from '../../lib/time';
import * as limits from './ingest';
import type { WirePoints } from './point-wire';

const [TAB, LF, CR, SPACE, QUOTE, COMMA, MINUS, DOT, ZERO, NINE, COLON] = [9, 10, 13, 32, 34, 44, 45, 46, 48, 57, 58];
const [OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE, LOWER_E, UPPER_E, PLUS] = [91, 93, 123, 125, 101, 69, 43];

// Bytes inside a string: 0 plain, 1 the closing quote, 2 declined (controls, backslash, non-ASCII:
// escapes and UTF-8 go the generic way, so a string's bytes are its characters).
const IN_STRING = new Uint8Array(256).fill(2);
IN_STRING.fill(0, 0x20, 0x80);
IN_STRING[QUOTE] = 1;
IN_STRING[92] = 2;

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0));
const POINTS = ascii('"points"');
const [TRACK, ASSERT, TRUE, FALSE] = ['"track"', '"assert"', 'true', 'false'].map(ascii) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array];
// The members of a point: a bit each (for duplicates), found by their first letter.
const [SEEN_KEY, SEEN_AT, SEEN_VALUES, SEEN_OPERATION, SEEN_UNTRACKED] = [1, 2, 4, 8, 16];
const MEMBER_NAMES: Uint8Array[] = new Array(17).fill(new Uint8Array(0));
const MEMBER_OF_LETTER = new Uint8Array(256);
for (const [bit, name] of [[SEEN_KEY, 'key'], [SEEN_AT, 'at'], [SEEN_VALUES, 'values'], [SEEN_OPERATION, 'operation'], [SEEN_UNTRACKED, 'untracked']] as const) {
  MEMBER_NAMES[bit] = ascii(`"${name}"`);
  MEMBER_OF_LETTER[name.charCodeAt(0)] = bit;
}

// Shape of a values object (its names and nesting, numbers left out): each name followed by LEAF or
// OPEN, and CLOSE after an object's members. Names hold no byte below 0x20, so this is unambiguous.
const [LEAF, OPEN, CLOSE] = [0, 1, 2];

// Copied: an imported binding is read through a getter under tsx, once per use in the hot loops.
const { MAX_BATCH_POINTS, MAX_DEPTH, MAX_KEY_LENGTH, MAX_LEAVES } = limits;

// Packing limits of WirePoints.meta (point-wire.ts).
const KEY_UNIT = 2 ** 24;
// (never reached: a body has at most MAX_BATCH_POINTS keys and path lists)
const MAX_LISTS = 2 ** 22;

// Powers of ten that are exact doubles: m * 10^k and m / 10^k with m < 2^53 are then one correctly
// rounded operation, the value JSON.parse gives (Clinger's fast path).
const POW10 = Float64Array.from({ length: 23 }, (_, k) => 10 ** k);
const MAX_FAST_DIGITS = 15;

// Scratch reused across calls (the scan is synchronous): the result gets copies of the used part.
const meta = new Float64Array(MAX_BATCH_POINTS * 2);
let values: Float64Array = new Float64Array(1 << 16);
let shape = new Uint8Array(1024);
let lastShape = new Uint8Array(1024);
let lastShapeLength = 0;
// The body is scanned in a copy followed by PAD zero bytes. A zero byte ends every token (it is no
// part of any), so no loop needs a bounds check, and no read runs past the array: one that did would
// slow every later read at that spot (V8 then compiles it to allow undefined), by a sixth overall.
// PAD covers the longest look-ahead: a key's length past its start.
const PAD = 512;
const SMALL = 1 << 16;
let padded = new Uint8Array(SMALL);
// Strings of the body are decoded from `text`, a Buffer over `padded` (latin1: a char per byte).
const NO_TEXT = Buffer.alloc(0);
let text = NO_TEXT;

const isDigit = (c: number | undefined) => c !== undefined && c >= ZERO && c <= NINE;

/** The first byte at or after `p` that is not JSON white space. */
function skipSpace(b: Uint8Array, p: number): number {
  // small enough to be inlined everywhere: most bodies have no white space, and this is one comparison
  return b[p]! > SPACE ? p : pastSpace(b, p);
}

function pastSpace(b: Uint8Array, p: number): number {
  for (let c = b[p]!; c === SPACE || c === LF || c === CR || c === TAB; c = b[++p]!);
  return p;
}

/** The index of the quote closing a string whose content starts at `p`, or -1. */
function stringEnd(b: Uint8Array, p: number): number {
  for (;;) {
    const kind = IN_STRING[b[p]!]!;
    if (kind === 1) return p;
    if (kind === 2) return -1;
    p++;
  }
}

function startsWith(b: Uint8Array, p: number, expected: Uint8Array): boolean {
  for (let i = 0; i < expected.length; i++) if (b[p + i] !== expected[i]) return false;
  return true;
}

/** The start of a member's value: past the colon after its name (ending before `p`), or -1. */
function valueAfter(b: Uint8Array, p: number): number {
  p = skipSpace(b, p);
  return b[p] === COLON ? skipSpace(b, p + 1) : -1;
}

function sameRanges(b: Uint8Array, start: number, end: number, otherStart: number, otherEnd: number): boolean {
  if (end - start !== otherEnd - otherStart) return false;
  for (let i = 0; i < end - start; i++) if (b[start + i] !== b[otherStart + i]) return false;
  return true;
}

/**
 * Reads a JSON number at `p` into out[at]; returns the index after it, or -1 when it is not a
 * number in JSON's grammar or not finite.
 */
function scanNumber(b: Uint8Array, p: number, out: Float64Array, at: number): number {
  const start = p;
  const negative = b[p] === MINUS;
  if (negative) p++;
  let mantissa = 0;
  let digits = 0; // significant ones: leading zeros do not count
  let scale = 0; // digits after the point
  if (b[p] === ZERO) p++;
  else if (isDigit(b[p])) {
    while (isDigit(b[p])) {
      mantissa = mantissa * 10 + (b[p++]! - ZERO);
      digits++;
    }
  } else return -1;
  if (b[p] === DOT) {
    if (!isDigit(b[++p])) return -1;
    while (isDigit(b[p])) {
      const d = b[p++]! - ZERO;
      if (mantissa !== 0 || d !== 0) digits++;
      mantissa = mantissa * 10 + d;
      scale++;
    }
  }
  let exponent = 0;
  if (b[p] === LOWER_E || b[p] === UPPER_E) {
    const sign = b[++p] === MINUS ? -1 : 1;
    if (b[p] === MINUS || b[p] === PLUS) p++;
    if (!isDigit(b[p])) return -1;
    while (isDigit(b[p])) {
      // past 2^30 it is only counted as huge (the slow path then reads it)
      exponent = exponent < 2 ** 30 ? exponent * 10 + (b[p]! - ZERO) : 2 ** 31;
      p++;
    }
    exponent *= sign;
  }
  const k = exponent - scale;
  let value: number;
  if (digits <= MAX_FAST_DIGITS && k >= -22 && k <= 22 && exponent !== 2 ** 31 && exponent !== -(2 ** 31)) {
    value = k >= 0 ? mantissa * POW10[k]! : mantissa / POW10[-k]!;
    if (negative) value = -value;
  } else {
    value = Number(text.toString('latin1', start, p)); // what JSON.parse gives for a JSON number
    if (!Number.isFinite(value)) return -1;
  }
  out[at] = value;
  return p;
}

function growValues(): Float64Array {
  const grown = new Float64Array(values.length * 2);
  grown.set(values);
  return (values = grown);
}

/** Room in `shape` for `more` bytes after `length`. */
function reserveShape(length: number, more: number): void {
  if (length + more <= shape.length) return;
  const grown = new Uint8Array((length + more) * 2);
  grown.set(shape.subarray(0, length));
  shape = grown;
}

/** Starts `shape` as the last shape's first `length` bytes (so far the same); returns `length`. */
function diverge(length: number): number {
  reserveShape(0, length + 2);
  shape.set(lastShape.subarray(0, length));
  return length;
}

// Set by scanValues (module state rather than a returned object: nothing is allocated per point).
/** bytes of the shape in `shape`, or -1 when it is the last shape */
let shapeLength = 0;
let leafCount = 0;

/**
 * Reads the values object at `p` (a `{`): its numbers into `values` from `at`, its leaf count into
 * `leafCount`, and its shape: while its names are the last point's, they are only compared with
 * `lastShape` (cursor `j`); from the first difference on, the shape is written to `shape`.
 * Returns the index after the object, or -1.
 */
function scanValues(b: Uint8Array, p: number, at: number): number {
  if (b[p] !== OPEN_BRACE) return -1;
  p = skipSpace(b, p + 1);
  if (b[p] === CLOSE_BRACE) return -1; // no leaves
  const last = lastShape;
  const lastLength = lastShapeLength;
  let j = lastList >= 0 ? 0 : -1;
  let k = 0; // while matching: where the last shape has the current name's marker
  let length = 0;
  let depth = 1;
  let leaves = 0;
  let out = values;
  for (;;) {
    // a member: "name": {... or "name": number
    if (b[p] !== QUOTE) return -1;
    const name = p + 1;
    let end = name;
    if (j >= 0) {
      k = j; // names in the last shape end at their marker, below every name byte
      while (k < lastLength && last[k]! >= SPACE && b[end] === last[k]) {
        k++;
        end++;
      }
      if (k === j || k === lastLength || last[k]! > OPEN || b[end] !== QUOTE) {
        length = diverge(j);
        j = -1;
      }
    }
    if (j < 0) {
      end = stringEnd(b, name);
      if (end < 0) return -1;
      reserveShape(length, end - name + 2); // the name, its marker, maybe CLOSE
      for (let i = name; i < end; i++) shape[length++] = b[i]!;
    }
    p = skipSpace(b, end + 1);
    if (b[p] !== COLON) return -1;
    p = skipSpace(b, p + 1);
    const marker = b[p] === OPEN_BRACE ? OPEN : LEAF;
    if (j >= 0) {
      if (last[k] === marker) j = k + 1;
      else {
        length = diverge(k); // the name matched, its kind did not
        j = -1;
      }
    }
    if (j < 0) shape[length++] = marker;
    if (marker === OPEN) {
      if (depth++ >= MAX_DEPTH) return -1;
      p = skipSpace(b, p + 1);
      if (b[p] !== CLOSE_BRACE) continue;
      depth--; // an empty object: no leaves, but its name stays in the shape (for duplicates)
      p++;
      if (j >= 0 && j < lastLength && last[j] === CLOSE) j++;
      else {
        if (j >= 0) length = diverge(j);
        j = -1;
        shape[length++] = CLOSE;
      }
    } else {
      if (leaves === MAX_LEAVES) return -1;
      if (at + leaves === out.length) out = growValues();
      p = scanNumber(b, p, out, at + leaves++);
      if (p < 0) return -1;
    }
    // then commas or closing braces
    for (;;) {
      p = skipSpace(b, p);
      if (b[p] === COMMA) {
        p = skipSpace(b, p + 1);
        break;
      }
      if (b[p] !== CLOSE_BRACE) return -1;
      p++;
      if (--depth === 0) {
        if (j === lastLength) shapeLength = -1;
        else shapeLength = j >= 0 ? diverge(j) : length;
        leafCount = leaves;
        return p;
      }
      if (j >= 0 && j < lastLength && last[j] === CLOSE) j++;
      else {
        if (j >= 0) length = diverge(j);
        j = -1;
        reserveShape(length, 1);
        shape[length++] = CLOSE;
      }
    }
  }
}

// Per call: the strings of the body, each made once. Consecutive points mostly repeat their key and
// always their shape, so both are compared with the last point's bytes before anything else.
let keys: string[] = [];
let lastKeyStart = -1;
let lastKeyEnd = -1;
let lastKey = -1;
let lastAtLength = 24; // a guess at where the timestamp's closing quote is (the last one's length)
let pathLists: string[][] = [];
let listByShape = new Map<string, number>();
let listByPaths = new Map<string, number>();
let lastList = -1;

// The keys of the body by a hash of their bytes, so a key seen before costs no string: open
// addressing, a slot holding a key index when stamped with the current call.
const KEY_SLOTS = 1 << 15; // over 3 per key at most (a body has at most MAX_BATCH_POINTS keys)
const slotKey = new Int32Array(KEY_SLOTS);
const slotCall = new Int32Array(KEY_SLOTS);
let call = 0;
const keyStarts = new Int32Array(MAX_BATCH_POINTS);
const keyEnds = new Int32Array(MAX_BATCH_POINTS);

/** The index of the key whose string starts at `start` (its closing quote then at lastKeyEnd), or -1. */
function scanKey(b: Uint8Array, start: number): number {
  let hash = 0x811c9dc5; // FNV-1a
  let spaced = false; // not only spaces
  let end = start;
  for (;;) {
    const c = b[end]!;
    const kind = IN_STRING[c]!;
    if (kind === 1) break;
    if (kind === 2) return -1;
    hash = Math.imul(hash ^ c, 0x01000193);
    spaced ||= c !== SPACE;
    end++;
  }
  let slot = hash & (KEY_SLOTS - 1);
  let k = -1;
  while (slotCall[slot] === call) {
    const known = slotKey[slot]!;
    if (sameRanges(b, start, end, keyStarts[known]!, keyEnds[known]!)) {
      k = known;
      break;
    }
    slot = (slot + 1) & (KEY_SLOTS - 1);
  }
  if (k < 0) {
    // ASCII without controls: one character per byte, and blank means only spaces
    if (end === start || end - start > MAX_KEY_LENGTH || !spaced) return -1;
    const key = asciiString(b, start, end);
    if (key === SYSTEM_KEY) return -1;
    k = keys.push(key) - 1;
    keyStarts[k] = start;
    keyEnds[k] = end;
    slotCall[slot] = call;
    slotKey[slot] = k;
  }
  lastKeyStart = start;
  lastKeyEnd = end;
  return (lastKey = k);
}

/**
 * The ASCII bytes b[start, end) as a string. Short ones (keys, mostly) through fromCharCode with
 * fixed arguments: a third of the cost of a Buffer decode, which crosses into C++ (the bytes past
 * `end`, padding at worst, are cut off).
 */
function asciiString(b: Uint8Array, start: number, end: number): string {
  if (end - start > 16) return text.toString('latin1', start, end);
  const s = start;
  return String.fromCharCode(b[s]!, b[s + 1]!, b[s + 2]!, b[s + 3]!, b[s + 4]!, b[s + 5]!, b[s + 6]!, b[s + 7]!, b[s + 8]!, b[s + 9]!, b[s + 10]!, b[s + 11]!, b[s + 12]!, b[s + 13]!, b[s + 14]!, b[s + 15]!).slice(0, end - start);
}

/** A values member name whose path the generic walk gives in document order, each once. */
function plainName(name: string): boolean {
  // empty names join ambiguously; digit-led ones may enumerate first; dotted ones are deduplicated
  return name.length > 0 && !isDigit(name.charCodeAt(0)) && !name.includes('.') && name !== '__proto__';
}

/** The leaf paths of a shape (see LEAF), or null when a name is not plain or repeats in its object. */
function pathsOf(sig: string): string[] | null {
  const paths: string[] = [];
  const outer: string[] = [];
  const names: Set<string>[] = [new Set()];
  let prefix = '';
  let start = 0;
  for (let i = 0; i < sig.length; i++) {
    const c = sig.charCodeAt(i);
    if (c > CLOSE) continue;
    if (c === CLOSE) {
      prefix = outer.pop()!;
      names.pop();
    } else {
      const name = sig.slice(start, i);
      const siblings = names[names.length - 1]!;
      if (!plainName(name) || siblings.has(name)) return null;
      siblings.add(name);
      const path = prefix === '' ? name : `${prefix}.${name}`;
      if (c === LEAF) paths.push(path);
      else {
        outer.push(prefix);
        prefix = path;
        names.push(new Set());
      }
    }
    start = i + 1;
  }
  return paths;
}

/** The path list index of the shape just scanned, or -1 when the generic path would differ. */
function listOfShape(): number {
  if (shapeLength < 0) return lastList;
  const sig = Buffer.from(shape.buffer, 0, shapeLength).toString('latin1');
  let l = listByShape.get(sig);
  if (l === undefined) {
    const paths = pathsOf(sig);
    if (paths === null) return -1;
    // shapes that differ only by empty objects spell the same list (encodePoints shares it too)
    const joined = paths.join('\0');
    l = listByPaths.get(joined);
    if (l === undefined) {
      if (pathLists.length >= MAX_LISTS) return -1;
      listByPaths.set(joined, (l = pathLists.push(paths) - 1));
    }
    listByShape.set(sig, l);
  }
  [lastShape, shape] = [shape, lastShape];
  lastShapeLength = shapeLength;
  return (lastList = l);
}

/**
 * Reads the point object at `p` whose values start at values[at] into meta[m] (its time) and
 * meta[m + 1] (key, path list, flags). Returns the index after it, or -1.
 */
function scanPoint(b: Uint8Array, p: number, at: number, m: number): number {
  if (b[p] !== OPEN_BRACE) return -1;
  p = skipSpace(b, p + 1);
  let seen = 0;
  let key = -1;
  let list = -1;
  let flags = 0;
  let atMs = 0;
  for (;;) {
    // member names are told apart by their first letter, then compared whole (closing quote included)
    const member = MEMBER_OF_LETTER[b[p + 1]! & 255]!; // (past the end: undefined & 255 is 0, no member)
    if (member === 0 || !startsWith(b, p, MEMBER_NAMES[member]!)) return -1; // others are left to the generic path
    p = valueAfter(b, p + MEMBER_NAMES[member]!.length);
    if (p < 0) return -1;
    if (member === SEEN_KEY) {
      if (b[p] !== QUOTE) return -1;
      const start = p + 1;
      p = start + lastKeyEnd - lastKeyStart;
      // the last key's bytes then a quote: that key (its bytes were checked), found with no string scan
      if (lastKey >= 0 && b[p] === QUOTE && sameRanges(b, start, p, lastKeyStart, lastKeyEnd)) key = lastKey;
      else if ((key = scanKey(b, start)) < 0) return -1;
      else p = lastKeyEnd;
      p++;
    } else if (member === SEEN_AT) {
      if (b[p] !== QUOTE) return -1;
      const start = p + 1;
      // parseTimestampBytes checks every byte up to `end`: the string needs no scan of its own, and
      // mostly ends where the last one did (else, or when that quote is a later one, it is searched)
      let end = start + lastAtLength;
      if (b[end] !== QUOTE || Number.isNaN((atMs = parseTimestampBytes(b, start, end)))) {
        for (end = start; end < start + 41 && b[end] !== QUOTE; end++);
        if (b[end] !== QUOTE || Number.isNaN((atMs = parseTimestampBytes(b, start, end)))) return -1;
      }
      lastAtLength = end - start;
      p = end + 1;
    } else if (member === SEEN_VALUES) {
      if ((p = scanValues(b, p, at)) < 0 || (list = listOfShape()) < 0) return -1;
    } else if (member === SEEN_OPERATION) {
      if (startsWith(b, p, TRACK)) p += TRACK.length;
      else if (startsWith(b, p, ASSERT)) {
        p += ASSERT.length;
        flags |= 1;
      } else return -1;
    } else {
      if (startsWith(b, p, FALSE)) p += FALSE.length;
      else if (startsWith(b, p, TRUE)) {
        p += TRUE.length;
        flags |= 2;
      } else return -1;
    }
    if ((seen & member) !== 0) return -1;
    seen |= member;
    p = skipSpace(b, p);
    if (b[p] === CLOSE_BRACE) break;
    if (b[p] !== COMMA) return -1;
    p = skipSpace(b, p + 1);
  }
  if ((seen & (SEEN_KEY | SEEN_AT | SEEN_VALUES)) !== (SEEN_KEY | SEEN_AT | SEEN_VALUES)) return -1;
  meta[m] = atMs;
  meta[m + 1] = key * KEY_UNIT + list * 4 + flags;
  return p + 1;
}

function reset(bytes: Uint8Array): void {
  if (padded.length < bytes.length + PAD) padded = new Uint8Array(bytes.length + PAD);
  padded.set(bytes);
  padded.fill(0, bytes.length, bytes.length + PAD);
  text = Buffer.from(padded.buffer, 0, bytes.length);
  keys = [];
  if (++call === 2 ** 31) {
    call = 1;
    slotCall.fill(0);
  }
  lastKey = lastList = -1;
  pathLists = [];
  listByShape = new Map();
  listByPaths = new Map();
}

/** The points of a batch body as WirePoints, or null when the body is outside the fast path (the caller then parses it the generic way). */
export function scanBatch(bytes: Uint8Array): WirePoints | null {
  reset(bytes);
  const b = padded; // a plain Uint8Array, whatever the caller passed: the loops stay monomorphic
  let count = 0;
  let leaves = 0;
  let p = skipSpace(b, 0);
  if (b[p] !== OPEN_BRACE) return done(null);
  p = skipSpace(b, p + 1);
  if (!startsWith(b, p, POINTS) || (p = valueAfter(b, p + POINTS.length)) < 0 || b[p] !== OPEN_BRACKET) return done(null);
  p = skipSpace(b, p + 1);
  for (;;) {
    if (count === MAX_BATCH_POINTS) return done(null);
    p = scanPoint(b, p, leaves, count * 2);
    if (p < 0) return done(null);
    count++;
    leaves += leafCount;
    p = skipSpace(b, p);
    if (b[p] === CLOSE_BRACKET) break;
    if (b[p] !== COMMA) return done(null);
    p = skipSpace(b, p + 1);
  }
  p = skipSpace(b, p + 1);
  if (b[p] !== CLOSE_BRACE || skipSpace(b, p + 1) !== bytes.length) return done(null);
  return done({ keys, pathLists, meta: meta.slice(0, count * 2), values: values.slice(0, leaves) });
}

/** Drops what the call held on to (the body, a scratch array grown for an unusually large one). */
function done(result: WirePoints | null): WirePoints | null {
  text = NO_TEXT;
  if (padded.length > 1 << 22) padded = new Uint8Array(SMALL);
  keys = [];
  pathLists = [];
  if (values.length > 1 << 20) values = new Float64Array(1 << 16);
  return result;
}
