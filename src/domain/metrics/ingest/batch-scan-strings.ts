// The strings of a batch body read by domain/metrics/ingest/batch-scan.ts: its keys and leaf path lists, each made once
// per body from the bytes (a point's key is found by comparing bytes; a string is made only for a
// key or values shape the body has not had yet), and the byte tests the scanner shares.
import { SYSTEM_KEY } from '../../../model/write-set';
import * as limits from './points';

// Copied: an imported binding is read through a getter where modules are compiled to CommonJS.
const { MAX_BATCH_POINTS, MAX_KEY_LENGTH } = limits;

export const [SPACE, QUOTE, ZERO, NINE] = [32, 34, 48, 57];

// Bytes inside a string: 0 plain, 1 the closing quote, 2 declined (controls, backslash, non-ASCII:
// escapes and UTF-8 go the generic way, so a string's bytes are its characters).
export const IN_STRING = new Uint8Array(256).fill(2);
IN_STRING.fill(0, 0x20, 0x80);
IN_STRING[QUOTE] = 1;
IN_STRING[92] = 2;

export const isDigit = (c: number) => c >= ZERO && c <= NINE;

/** The index of the quote closing a string whose content starts at `p`, or -1 (a zero byte ends the body). */
export function stringEnd(b: Uint8Array, p: number): number {
  for (;;) {
    const kind = IN_STRING[b[p]!]!;
    if (kind === 1) return p;
    if (kind === 2) return -1;
    p++;
  }
}

/** The ASCII bytes b[start, end) as a string. */
export function asciiString(b: Uint8Array, start: number, end: number): string {
  // short ones (keys, mostly) through fromCharCode with fixed arguments: a third of the cost of a
  // Buffer decode, which crosses into C++ (the bytes past `end`, padding at worst, are cut off)
  if (end - start > 16) return Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1');
  const s = start;
  return String.fromCharCode(
    b[s]!,
    b[s + 1]!,
    b[s + 2]!,
    b[s + 3]!,
    b[s + 4]!,
    b[s + 5]!,
    b[s + 6]!,
    b[s + 7]!,
    b[s + 8]!,
    b[s + 9]!,
    b[s + 10]!,
    b[s + 11]!,
    b[s + 12]!,
    b[s + 13]!,
    b[s + 14]!,
    b[s + 15]!,
  ).slice(0, end - start);
}

// Per body. Points mostly repeat the last point's key: compared with its bytes first.
// (the keys in a scratch array, sliced at the end: cheaper than growing a new one per body; it
// holds on to the last body's keys until the next overwrites them)
const keys: string[] = new Array(MAX_BATCH_POINTS).fill('');
let keyCount = 0;
let lastKeyStart = 0;
let lastKeyEnd = 0;
let lastKey = -1;
/** where the string of the key keyAt found ends (its closing quote) */
export let keyEnd = 0;

// The body's other keys by a hash of their bytes (open addressing: a slot holds a key index when
// stamped with the current body), so a key seen before in the body costs no string.
const SLOTS = 1 << 14; // over 1.6 per key: a body has at most MAX_BATCH_POINTS keys
const slots = new Int32Array(SLOTS * 2); // per slot: the body's stamp, the key index (one cache line)
let body = 0;
const keyStarts = new Int32Array(MAX_BATCH_POINTS);
const keyEnds = new Int32Array(MAX_BATCH_POINTS);

function sameBytes(b: Uint8Array, start: number, end: number, otherStart: number): boolean {
  // from the end: keys that differ mostly differ there (orders.eu, orders.us; key.17, key.42)
  for (let i = end - start - 1; i >= 0; i--) if (b[start + i] !== b[otherStart + i]) return false;
  return true;
}

/** The index of the key whose string starts at `start` (its closing quote at keyEnd), or -1 when refused. */
export function keyAt(b: Uint8Array, start: number): number {
  const end = start + lastKeyEnd - lastKeyStart;
  if (lastKey >= 0 && b[end] === QUOTE && sameBytes(b, start, end, lastKeyStart)) {
    keyEnd = end;
    return lastKey; // its bytes were checked: no string scan
  }
  return newKeyAt(b, start);
}

function newKeyAt(b: Uint8Array, start: number): number {
  let hash = 0x811c9dc5; // FNV-1a
  let spaced = false; // not only spaces (blank, in ASCII without controls)
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
  let slot = (hash & (SLOTS - 1)) * 2;
  let k = -1;
  while (slots[slot] === body) {
    const known = slots[slot + 1]!;
    if (keyEnds[known]! - keyStarts[known]! === end - start && sameBytes(b, start, end, keyStarts[known]!)) {
      k = known;
      break;
    }
    slot = (slot + 2) & (SLOTS * 2 - 1);
  }
  if (k < 0) {
    if (end === start || end - start > MAX_KEY_LENGTH || !spaced) return -1; // one char per byte
    const key = asciiString(b, start, end);
    if (key === SYSTEM_KEY) return -1;
    keys[(k = keyCount++)] = key;
    keyStarts[k] = start;
    keyEnds[k] = end;
    slots[slot] = body;
    slots[slot + 1] = k;
  }
  lastKeyStart = start;
  lastKeyEnd = keyEnd = end;
  return (lastKey = k);
}

// Shape of a values object (its names and nesting, numbers left out), as domain/metrics/ingest/batch-scan.ts writes it:
// each name followed by LEAF or OPEN, and CLOSE after an object's members. Names hold no byte
// below 0x20, so this is unambiguous.
export const [LEAF, OPEN, CLOSE] = [0, 1, 2];

// Per body: path lists by shape, and by their paths (shapes that differ only by empty objects spell
// the same list, which encodePoints shares too).
let pathLists: string[][] = [];
let listByShape = new Map<string, number>();
let listByPaths = new Map<string, number>();
let lastShape = new Uint8Array(256);
let lastShapeLength = -1;
let lastList = -1;

/** A values member name whose path the generic walk gives in document order, each once. */
function plainName(name: string): boolean {
  // empty names join ambiguously; digit-led ones may enumerate first; dotted ones are deduplicated
  return name.length > 0 && !isDigit(name.charCodeAt(0)) && !name.includes('.') && name !== '__proto__';
}

/** The leaf paths of a shape, or null when a name is not plain or repeats in its object. */
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

/** The index of the path list of a shape, or -1 when the generic path would spell it otherwise. */
export function listOf(shape: Uint8Array, length: number): number {
  if (length === lastShapeLength) {
    let i = length - 1;
    while (i >= 0 && shape[i] === lastShape[i]) i--;
    if (i < 0) return lastList;
  }
  const sig = Buffer.from(shape.buffer, shape.byteOffset, length).toString('latin1');
  let l = listByShape.get(sig);
  if (l === undefined) {
    const paths = pathsOf(sig);
    if (paths === null) return -1;
    const joined = paths.join('\0');
    l = listByPaths.get(joined);
    if (l === undefined) listByPaths.set(joined, (l = pathLists.push(paths) - 1));
    listByShape.set(sig, l);
  }
  if (lastShape.length < length) lastShape = new Uint8Array(length * 2);
  lastShape.set(shape.subarray(0, length));
  lastShapeLength = length;
  return (lastList = l);
}

/** Starts a body. */
export function beginStrings(): void {
  if (++body === 2 ** 31) {
    body = 1;
    slots.fill(0);
  }
  dropStrings();
  lastKey = lastShapeLength = lastList = -1;
}

/** The body's strings. */
export function takeStrings(): { keys: string[]; pathLists: string[][] } {
  const strings = { keys: keys.slice(0, keyCount), pathLists };
  dropStrings();
  return strings;
}

/** Lets go of the body's path lists (a declined body's too). */
export function dropStrings(): void {
  keyCount = 0;
  pathLists = [];
  listByShape = new Map();
  listByPaths = new Map();
}
