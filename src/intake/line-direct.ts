// The usual line protocol body read straight into the write path's wire form, in one pass and
// without the parser's objects (a sample, its tag and field pairs, a value object per field) or a
// series key built per line: what Telegraf, Proxmox VE and the bench send, lines of
// `measurement,tag=value,... field=number,... [timestamp]` with tags already sorted, no escapes,
// no string fields. Anything else in a body (a backslash, a quote, a tab, a carriage return, a
// comment, unsorted or repeated tags, a string or non-finite value, a line the parser would refuse,
// a key or time the mapping would refuse, a field name the mapping reorders) makes the whole body
// go through parseLineProtocol and mapLineWire instead (`null` here), which give the errors and
// the rest. For every body it reads, the wires are the ones those two give:
// test/unit/intake-line-direct.test.ts compares both on fixed, random and mutated bodies.
//
// Keys repeat across requests (a sender's series), so a key seen before is found in a bounded
// table by the hash its text has for the cardinality limit (key-limit.ts), compared with the text
// in place: the key string the first request made (checked once for the mapping's key rules, and
// flat: a slice of a body kept in a long-lived table would keep the whole body alive), its hash,
// which the limit's check then takes instead of hashing the key again, and its place in the wire
// being built, so no map of the body's keys is needed either.
import { randomBytes } from 'node:crypto';
import type { Precision } from '../config-listeners';
import { DEFAULT_MAX_LINE_LENGTH } from './line-protocol';
import { type KnownKey, type MappedWire, WireBuilder, goodKey } from './line-wire';
import { hash53Range } from '../lib/key-hash';
import { MAX_TIME_MS, MIN_TIME_MS, fieldSegment } from './mapping';

const NL = 10;
const SPACE = 32;
const COMMA = 44;
const EQUALS = 61;
const MINUS = 45;
const PLUS = 43;
const DOT = 46;
const ZERO = 48;
const NINE = 57;
const HASH = 35;

/** Digits a number may have to be read here exactly (below 2^53); longer ones go through Number(). */
const EXACT_DIGITS = 15;
const POWERS = Array.from({ length: EXACT_DIGITS + 1 }, (_, i) => 10 ** i);
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Fields per pair (line-wire.ts FIELDS_PER_PAIR): a line of more goes the general way. */
const MAX_FIELDS = 500;

const DROPPED_DIGITS: Record<Precision, number> = { ns: 6, us: 3, ms: 0, s: 0, m: 0, h: 0 };
const FACTORS: Record<Precision, number> = { ns: 1, us: 1, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const INT64_MAX = '9223372036854775807';

/**
 * Keys of earlier bodies by their hash53: open addressing over a power-of-two array, each entry
 * checked against the body's text (no slice, no string hashing per line); started over when full.
 */
const MAX_KNOWN_KEYS = 100_000;
/** per table slot: the hash of the key there, and its index in `entries` (-1: free); at most half full */
let hashes = new Float64Array(4096);
let slots = new Int32Array(4096).fill(-1);
let entries: KnownKey[] = [];

/** Mixed with each process's own random number, so that no sender can choose keys that share a slot. */
const SEED = randomBytes(4).readUInt32LE(0);

/**
 * A key's first slot in a table of mask + 1 (a power of two) slots: the top bits of its hash's low
 * 32 bits, seeded, times an odd number (they depend on all 32, where the low bits of a product
 * depend only on the low bits of the hash).
 */
function slotOf(hash: number, mask: number): number {
  return Math.imul((hash >>> 0) ^ SEED, 0x9e3779b1) >>> Math.clz32(mask);
}

/** The known key of text[from, to), its hash53 `hash`; made (and checked) on first sight; null when the mapping refuses it. */
function keyOf(text: string, from: number, to: number, hash: number): KnownKey | null {
  let mask = slots.length - 1;
  let i = slotOf(hash, mask);
  for (let slot = slots[i]!; slot >= 0; slot = slots[i]!) {
    if (hashes[i] === hash) {
      const entry = entries[slot]!;
      if (entry.key.length === to - from && text.startsWith(entry.key, from)) return entry;
    }
    i = (i + 1) & mask;
  }
  // A flat copy: a slice would hold the whole body, and so would `${slice} `.slice(0, -1) (V8
  // makes that a sliced string of 13 characters or more, slower to compare and stringify); JSON
  // keeps lone surrogates as they are, which goodKey then refuses.
  const key = JSON.parse(JSON.stringify(text.slice(from, to))) as string;
  if (!goodKey(key)) return null;
  if (entries.length >= MAX_KNOWN_KEYS) {
    slots.fill(-1);
    entries = [];
  } else if (2 * (entries.length + 1) > slots.length) {
    // twice the room: every known key placed again
    hashes = new Float64Array(2 * slots.length);
    slots = new Int32Array(hashes.length).fill(-1);
    mask = slots.length - 1;
    for (let e = 0; e < entries.length; e++) place(entries[e]!.hash, e);
  }
  const entry: KnownKey = { key, hash, stamp: 0, index: -1 };
  place(hash, entries.push(entry) - 1);
  return entry;
}

function place(hash: number, entry: number): void {
  const mask = slots.length - 1;
  let i = slotOf(hash, mask);
  while (slots[i]! >= 0) i = (i + 1) & mask;
  hashes[i] = hash;
  slots[i] = entry;
}

/** Whether text[a0, a1) sorts strictly before text[b0, b1) (code unit order, as seriesKey sorts tags). */
function before(text: string, a0: number, a1: number, b0: number, b1: number): boolean {
  const n = Math.min(a1 - a0, b1 - b0);
  for (let i = 0; i < n; i++) {
    const x = text.charCodeAt(a0 + i);
    const y = text.charCodeAt(b0 + i);
    if (x !== y) return x < y;
  }
  return a1 - a0 < b1 - b0;
}

/** The digits text[from, to) as a number when there are at most EXACT_DIGITS of them, else -1. */
function digitsValue(text: string, from: number, to: number): number {
  if (to <= from || to - from > EXACT_DIGITS) return -1;
  let value = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) return -1;
    value = value * 10 + (c - ZERO);
  }
  return value;
}

/**
 * A bare field value text[from, to) as the mapping stores it (booleans 1 and 0), or NaN where this
 * reader does not take it (the general parser then decides: an error, a non-finite value, digits
 * past what is read exactly here).
 */
function fieldValue(text: string, from: number, to: number): number {
  const last = text.charCodeAt(to - 1);
  if (last === 105 /* i */ || last === 117 /* u */) {
    let start = from;
    const first = text.charCodeAt(from);
    const negative = first === MINUS;
    if (last === 105 && (negative || first === PLUS)) start++;
    const value = digitsValue(text, start, to - 1);
    if (value < 0) return Number.NaN;
    return negative ? -value : value;
  }
  const first = text.charCodeAt(from);
  if (first === 116 || first === 84 || first === 102 || first === 70) {
    switch (text.slice(from, to)) {
      case 't':
      case 'T':
      case 'true':
      case 'True':
      case 'TRUE':
        return 1;
      case 'f':
      case 'F':
      case 'false':
      case 'False':
      case 'FALSE':
        return 0;
      default:
        return Number.NaN;
    }
  }
  // [+-]digits[.digits] with at most EXACT_DIGITS digits: m / 10^k is then the correctly rounded
  // value of the decimal, which is what Number() gives.
  let i = from;
  const negative = first === MINUS;
  if (negative || first === PLUS) i++;
  let mantissa = 0;
  let digits = 0;
  let fraction = -1;
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c >= ZERO && c <= NINE) {
      mantissa = mantissa * 10 + (c - ZERO);
      digits++;
      if (fraction >= 0) fraction++;
    } else if (c === DOT && fraction < 0) fraction = 0;
    else break;
  }
  if (i === to && digits > 0 && digits <= EXACT_DIGITS) {
    const value = fraction > 0 ? mantissa / POWERS[fraction]! : mantissa;
    return negative ? -value : value;
  }
  const raw = text.slice(from, to);
  if (!FLOAT.test(raw)) return Number.NaN;
  const value = Number(raw);
  return Number.isFinite(value) ? value : Number.NaN;
}

/** A timestamp text[from, to) in milliseconds as the parser computes it, or -1 where this reader does not take it. */
function timestampMs(text: string, from: number, to: number, precision: Precision): number {
  // the parser refuses more than 19 digits and what lies past int64 (this reads no sign)
  if (
    to - from > 19 ||
    (to - from === 19 && text.charCodeAt(from) === NINE && text.slice(from, to) > INT64_MAX)
  )
    return -1;
  const drop = DROPPED_DIGITS[precision];
  if (drop === 0) {
    const value = digitsValue(text, from, to);
    return value < 0 ? -1 : value * FACTORS[precision];
  }
  const kept = to - from - drop;
  if (kept > EXACT_DIGITS) return -1; // as digitsValue would
  // one pass: the kept digits' value, then the dropped ones checked
  let value = 0;
  let i = from;
  for (; i < from + kept; i++) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) return -1;
    value = value * 10 + (c - ZERO);
  }
  for (; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < ZERO || c > NINE) return -1;
  }
  return kept > 0 ? value : to > from ? 0 : -1;
}

/** Scratch of one line's fields (the reader is synchronous). */
const names: string[] = [];
const values: number[] = [];

/**
 * A line protocol body's wires, when this reader takes the whole body (see the head of the file);
 * null sends it to parseLineProtocol and mapLineWire. `nowMs` times lines without a timestamp.
 */
export function mapLineBodyDirect(text: string, precision: Precision, nowMs: number): MappedWire | null {
  if (text.indexOf('\\') >= 0 || text.indexOf('"') >= 0 || text.indexOf('\t') >= 0 || text.indexOf('\r') >= 0)
    return null;
  const now = Math.floor(nowMs);
  const builder = new WireBuilder();
  const result: MappedWire = { wires: [], points: 0, samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
  const length = text.length;
  names.length = 0;
  values.length = 0;
  let pos = 0;
  while (pos < length) {
    const lineStart = pos;
    let c = text.charCodeAt(pos);
    if (c === NL) {
      pos++;
      continue;
    }
    if (c === SPACE || c === HASH) return null;
    let lineEnd = text.indexOf('\n', pos);
    if (lineEnd < 0) lineEnd = length;
    if (lineEnd - lineStart > DEFAULT_MAX_LINE_LENGTH) return null;
    // measurement
    while (pos < lineEnd) {
      c = text.charCodeAt(pos);
      if (c === COMMA || c === SPACE) break;
      pos++;
    }
    if (pos === lineStart) return null;
    // tags, in ascending order of their keys
    let lastKey = -1;
    let lastKeyEnd = -1;
    while (pos < lineEnd && text.charCodeAt(pos) === COMMA) {
      const keyStart = ++pos;
      while (pos < lineEnd) {
        c = text.charCodeAt(pos);
        if (c === COMMA || c === SPACE || c === EQUALS) break;
        pos++;
      }
      if (pos === keyStart || c !== EQUALS || pos === lineEnd) return null;
      if (lastKey >= 0 && !before(text, lastKey, lastKeyEnd, keyStart, pos)) return null;
      lastKey = keyStart;
      lastKeyEnd = pos;
      const valueStart = ++pos;
      while (pos < lineEnd) {
        c = text.charCodeAt(pos);
        if (c === COMMA || c === SPACE || c === EQUALS) break;
        pos++;
      }
      if (pos === valueStart || (pos < lineEnd && c === EQUALS)) return null;
    }
    const seriesEnd = pos;
    if (pos === lineEnd) return null; // no fields
    while (pos < lineEnd && text.charCodeAt(pos) === SPACE) pos++;
    if (pos === lineEnd) return null;
    // fields
    let count = 0;
    let same = true; // the names so far are those of the line before
    for (;;) {
      const nameStart = pos;
      while (pos < lineEnd) {
        c = text.charCodeAt(pos);
        if (c === COMMA || c === SPACE || c === EQUALS) break;
        pos++;
      }
      if (pos === nameStart || pos === lineEnd || c !== EQUALS) return null;
      const nameEnd = pos;
      const valueStart = ++pos;
      while (pos < lineEnd) {
        c = text.charCodeAt(pos);
        if (c === COMMA || c === SPACE) break;
        pos++;
      }
      if (pos === valueStart) return null;
      const value = fieldValue(text, valueStart, pos);
      if (Number.isNaN(value)) return null;
      if (count >= MAX_FIELDS) return null;
      if (
        !same ||
        count >= names.length ||
        names[count]!.length !== nameEnd - nameStart ||
        !text.startsWith(names[count]!, nameStart)
      ) {
        // another field list than the line before: its names as the mapping spells them
        if (same) {
          same = false;
          names.length = count;
        }
        const c0 = text.charCodeAt(nameStart);
        if (c0 >= ZERO && c0 <= NINE) return null; // an array index: the mapping reorders those
        const segment = fieldSegment(text.slice(nameStart, nameEnd));
        for (let i = 0; i < count; i++) if (names[i] === segment) return null; // repeated
        names.push(segment);
      }
      values[count++] = value;
      if (pos < lineEnd && text.charCodeAt(pos) === COMMA) {
        pos++;
        continue;
      }
      break;
    }
    if (same && count !== names.length) names.length = count;
    values.length = count;
    // the optional timestamp
    while (pos < lineEnd && text.charCodeAt(pos) === SPACE) pos++;
    let atMs = now;
    if (pos < lineEnd) {
      const timeStart = pos;
      while (pos < lineEnd && text.charCodeAt(pos) !== SPACE) pos++;
      atMs = timestampMs(text, timeStart, pos, precision);
      if (atMs < 0) return null;
      while (pos < lineEnd && text.charCodeAt(pos) === SPACE) pos++;
      if (pos < lineEnd) return null;
    }
    if (!(atMs >= MIN_TIME_MS && atMs <= MAX_TIME_MS)) return null;
    const key = keyOf(text, lineStart, seriesEnd, hash53Range(text, lineStart, seriesEnd));
    if (key === null) return null;
    result.samples++;
    builder.room(2);
    builder.pair(builder.known(key), atMs, names, values);
    pos = lineEnd + 1;
  }
  builder.finish();
  builder.release();
  result.wires = builder.wires;
  result.points = builder.points;
  result.keyHashes = builder.keyHashes;
  return result;
}
