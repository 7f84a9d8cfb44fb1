// Line protocol samples straight into the write path's own form (model/wire.ts WirePoints), for the
// HTTP write endpoints: the same points mapLineSamples gives (mapping.ts, docs/intake.md "Mapping"),
// in the same order, each line's track and assert as one pair point (decodePoints gives the two
// back), but without an object per point or per leaf, without RFC 3339 times and
// without the batch endpoint's second validation. Each rule that validation holds a point to is
// checked here once per distinct key of the body, or holds by construction (two levels, at most
// 1,000 leaves, finite numbers, no dotted field names). test/unit/intake-line-wire.test.ts holds
// the two mappings to the same points.
import { ASSERT_FLAG, KEY_UNIT, LIST_UNIT, signature } from '../model/point-wire';
import type { WirePoints } from '../model/wire';
import type { LineSample } from './line-protocol';
import {
  MAX_TIME_MS,
  MIN_TIME_MS,
  MappingError,
  type MappingOptions,
  fieldNumber,
  fieldSegment,
  keyProblem,
  seriesKey,
} from './mapping';
import { SLICE_SAMPLES, nextTurn } from './slices';

/** Points per wire: the batch entry point's limit, so that one wire is one commit of at most that many. */
export const POINTS_PER_WIRE = 10_000;
/** Fields per point pair: a track point holds `sum` and `count` of each, 1,000 leaves at most. */
const FIELDS_PER_PAIR = 500;

export interface MappedWire {
  /** the body's points in order, at most POINTS_PER_WIRE per wire */
  wires: WirePoints[];
  /** points in all wires */
  points: number;
  samples: number;
  skippedStrings: number;
  skippedNonFinite: number;
  /** per wire, each key's hash53 (lib/key-hash.ts), when the reader had them at hand (line-direct.ts) */
  keyHashes?: number[][];
}

/** A key the line-protocol reader knows across requests (line-direct.ts), and its place in the wire being built. */
export interface KnownKey {
  key: string;
  /** hash53 of the key */
  hash: number;
  /** the wire it was last placed in (WireBuilder.stamp) and its index there */
  stamp: number;
  index: number;
}

/** Numbers each wire being built, across builders (KnownKey.stamp). */
let stamps = 0;

// A high surrogate not followed by a low one, or a low one not preceded by a high one (the batch
// endpoint refuses such keys; decoded UTF-8 holds none, but a key is checked the same way).
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const TIME_RANGE =
  'timestamp is outside the accepted range (1970-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z); is the precision right?';

/** An array index in the sense of JS property order ("0", "17"; not "017" or "-1"). */
function isIndex(name: string): boolean {
  const c = name.charCodeAt(0);
  if (c < 48 || c > 57) return false;
  return /^(?:0|[1-9]\d*)$/.test(name) && Number(name) < 4_294_967_295;
}

/**
 * Field names in the order an object holding them lists its keys (what the JSON-shaped mapping
 * stored): array indices first, ascending, then the others as written.
 */
function objectOrder(names: string[], values: number[]): void {
  let any = false;
  for (const name of names) if (isIndex(name)) any = true;
  if (!any) return;
  const order = names.map((_, i) => i);
  const indexFirst = (i: number) => (isIndex(names[i]!) ? Number(names[i]) : Infinity);
  order.sort((a, b) => {
    const x = indexFirst(a);
    const y = indexFirst(b);
    return x !== y ? x - y : a - b;
  });
  const n = order.map((i) => names[i]!);
  const v = order.map((i) => values[i]!);
  for (let i = 0; i < n.length; i++) {
    names[i] = n[i]!;
    values[i] = v[i]!;
  }
}

/** Whether two name lists are equal. */
function sameNames(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Whether the write path takes a key (the rules of a batch point's key, checked once per key). */
export function goodKey(key: string): boolean {
  return keyProblem(key) === null && !LONE_SURROGATE.test(key);
}

/**
 * The scratch columns of the last builder released (WireBuilder.release): the direct reader
 * builds a body's wires in one synchronous pass, so it hands its columns (grown to the body's
 * size) to the next body's builder instead of allocating and growing them again for each body.
 */
let spareMeta: Float64Array | null = null;
/** the largest values column kept for the next builder (1 MB; a larger body's goes) */
const MAX_SPARE = 131_072;
let spareValues: Float64Array | null = null;

/** Wires of pair points, built point by point (mapLineWire; line-direct.ts). */
export class WireBuilder {
  readonly wires: WirePoints[] = [];
  points = 0;
  private keys: string[] = [];
  private keyIndex = new Map<string, number>();
  private pathLists: string[][] = [];
  /** per path list: where its assert part starts (model/wire.ts assertFrom) */
  private assertFrom: number[] = [];
  /** track path list signature -> the pair's path list */
  private listIndex = new Map<string, number>();
  private meta: Float64Array = spareMeta ?? new Float64Array(4096);
  private values: Float64Array = spareValues ?? new Float64Array(8192);
  private count = 0; // wire points (pairs and asserts) in the wire being built
  private wirePoints = 0; // the points they stand for (a pair two)
  private used = 0; // values in it
  // the field names of the last pair and its list: lines of a body mostly share their fields
  private lastNames: string[] = [];
  private lastList = -1;
  /** keys found good in this body (across its wires) */
  private readonly goodKeys = new Set<string>();
  /** the wire being built, among all builders' */
  private stamp = ++stamps;
  /** per closed wire: its keys' hashes (KnownKey.hash) when every key came through `known` */
  readonly keyHashes: number[][] = [];
  private hashes: number[] = [];

  /** The index of a key in the current wire; MappingError when the write path would refuse it. */
  key(key: string, line: number): number {
    const known = this.keyIndex.get(key);
    if (known !== undefined) return known;
    if (!this.goodKeys.has(key)) {
      const problem =
        keyProblem(key) ??
        (LONE_SURROGATE.test(key) ? 'key holds a lone surrogate (not well-formed Unicode)' : null);
      if (problem) throw new MappingError(line, problem);
      this.goodKeys.add(key);
    }
    const index = this.keys.push(key) - 1;
    this.keyIndex.set(key, index);
    return index;
  }

  /**
   * The index in the current wire of a key that passes goodKey, placed through its KnownKey (no
   * look-up by text). A builder takes its keys either all this way or all through `key`.
   */
  known(entry: KnownKey): number {
    if (entry.stamp === this.stamp) return entry.index;
    entry.stamp = this.stamp;
    entry.index = this.keys.push(entry.key) - 1;
    this.hashes.push(entry.hash);
    return entry.index;
  }

  /** Room for `points` more points in the current wire (else a new wire starts). */
  room(points: number): void {
    if (this.count > 0 && this.wirePoints + points > POINTS_PER_WIRE) this.finish();
  }

  /** The pair's path list of field names (in object order): each one's sum and count, then each one's last. */
  private list(names: readonly string[]): number {
    if (this.lastList >= 0 && sameNames(this.lastNames, names)) return this.lastList;
    const paths: string[] = [];
    for (let i = 0; i < names.length; i++) paths.push(`${names[i]!}.sum`, `${names[i]!}.count`);
    for (let i = 0; i < names.length; i++) paths.push(`${names[i]!}.last`);
    const sig = signature(paths);
    let list = this.listIndex.get(sig);
    if (list === undefined) {
      list = this.pathLists.push(paths) - 1;
      this.assertFrom.push(2 * names.length);
      this.listIndex.set(sig, list);
    }
    this.lastNames = names.slice();
    this.lastList = list;
    return list;
  }

  constructor() {
    // the spare columns belong to this builder now (a builder of a sliced body may outlive others)
    spareMeta = null;
    spareValues = null;
  }

  /** Hands the scratch columns to the next builder: after `finish`, when this one builds no more. */
  release(): void {
    if (this.values.length <= MAX_SPARE) {
      spareMeta = this.meta;
      spareValues = this.values;
    }
    this.meta = new Float64Array(0);
    this.values = new Float64Array(0);
    this.count = 0;
    this.wirePoints = 0;
    this.used = 0;
  }

  /** One pair point: a track of {sum, count} of each name, then an assert of its {last}. */
  pair(key: number, atMs: number, names: readonly string[], values: readonly number[]): void {
    const list = this.list(names);
    const n = names.length;
    if ((this.count + 1) * 2 > this.meta.length) this.meta = grown(this.meta, this.meta.length * 2);
    if (this.used + 3 * n > this.values.length)
      this.values = grown(this.values, Math.max(this.values.length * 2, this.used + 3 * n));
    const meta = this.meta;
    const v = this.values;
    const m = this.count * 2;
    meta[m] = atMs;
    meta[m + 1] = key * KEY_UNIT + list * LIST_UNIT;
    let u = this.used;
    for (let i = 0; i < n; i++) {
      v[u++] = values[i]!;
      v[u++] = 1;
    }
    for (let i = 0; i < n; i++) v[u++] = values[i]!;
    this.used = u;
    this.count += 1;
    this.points += 2;
    this.wirePoints += 2;
  }

  /**
   * One assert of each name's `last` (remote write's cumulative readings), no track: a path list
   * of its own, without an assert part (model/wire.ts), flagged as an assert in its meta.
   */
  asserted(key: number, atMs: number, names: readonly string[], values: readonly number[]): void {
    const paths = names.map((name) => `${name}.last`);
    const sig = `assert:${signature(paths)}`;
    let list = this.listIndex.get(sig);
    if (list === undefined) {
      list = this.pathLists.push(paths) - 1;
      this.assertFrom.push(-1);
      this.listIndex.set(sig, list);
    }
    const n = names.length;
    if ((this.count + 1) * 2 > this.meta.length) this.meta = grown(this.meta, this.meta.length * 2);
    if (this.used + n > this.values.length)
      this.values = grown(this.values, Math.max(this.values.length * 2, this.used + n));
    const m = this.count * 2;
    this.meta[m] = atMs;
    this.meta[m + 1] = key * KEY_UNIT + list * LIST_UNIT + ASSERT_FLAG;
    for (let i = 0; i < n; i++) this.values[this.used++] = values[i]!;
    this.count += 1;
    this.points += 1;
    this.wirePoints += 1;
  }

  /** Closes the wire being built (if it holds points). */
  finish(): void {
    if (this.count === 0) return;
    this.wires.push({
      keys: this.keys,
      pathLists: this.pathLists,
      meta: this.meta.slice(0, this.count * 2),
      values: this.values.slice(0, this.used),
      assertFrom: this.assertFrom,
    });
    this.keyHashes.push(this.hashes);
    this.hashes = [];
    this.stamp = ++stamps;
    this.keys = [];
    this.keyIndex = new Map();
    this.pathLists = [];
    this.assertFrom = [];
    this.listIndex = new Map();
    this.lastList = -1;
    this.lastNames = [];
    this.count = 0;
    this.wirePoints = 0;
    this.used = 0;
  }
}

function grown(array: Float64Array, length: number): Float64Array {
  const bigger = new Float64Array(length);
  bigger.set(array);
  return bigger;
}

// Scratch of one line's numeric fields (the mapping is synchronous per slice).
const names: string[] = [];
const numbers: number[] = [];

function mapInto(
  builder: WireBuilder,
  samples: readonly LineSample[],
  options: MappingOptions,
  result: MappedWire,
): void {
  const prefix = options.keyPrefix ?? '';
  const nowMs = Math.floor(options.nowMs);
  for (const sample of samples) {
    result.samples++;
    names.length = 0;
    numbers.length = 0;
    let byName: Map<string, number> | null = null; // for lines of many fields
    for (const [name, field] of sample.fields) {
      const value = fieldNumber(field, result);
      if (value === null) continue;
      const segment = fieldSegment(name);
      // a later field of the same name wins, in the place of the first (as in a Map)
      if (byName === null && names.length >= 16) byName = new Map(names.map((n, i) => [n, i]));
      const at = byName === null ? names.indexOf(segment) : (byName.get(segment) ?? -1);
      if (at >= 0) numbers[at] = value;
      else {
        byName?.set(segment, names.length);
        names.push(segment);
        numbers.push(value);
      }
    }
    if (names.length === 0) continue;
    const key = prefix + seriesKey(sample.measurement, sample.tags);
    const pairs = Math.ceil(names.length / FIELDS_PER_PAIR);
    builder.room(pairs * 2);
    const k = builder.key(key, sample.line); // a key's problem is named before the time's
    const atMs = sample.timeMs === null ? nowMs : sample.timeMs;
    if (!(atMs >= MIN_TIME_MS && atMs <= MAX_TIME_MS)) throw new MappingError(sample.line, TIME_RANGE);
    if (pairs === 1) {
      objectOrder(names, numbers);
      builder.pair(k, atMs, names, numbers);
      continue;
    }
    for (let from = 0; from < names.length; from += FIELDS_PER_PAIR) {
      const chunkNames = names.slice(from, from + FIELDS_PER_PAIR);
      const chunkValues = numbers.slice(from, from + FIELDS_PER_PAIR);
      objectOrder(chunkNames, chunkValues);
      builder.pair(k, atMs, chunkNames, chunkValues);
    }
  }
}

function emptyResult(): MappedWire {
  return { wires: [], points: 0, samples: 0, skippedStrings: 0, skippedNonFinite: 0 };
}

/** The points of a line protocol body as wires, or MappingError naming the first line that cannot be stored. */
export function mapLineWire(samples: readonly LineSample[], options: MappingOptions): MappedWire {
  const result = emptyResult();
  const builder = new WireBuilder();
  mapInto(builder, samples, options, result);
  builder.finish();
  result.wires = builder.wires;
  result.points = builder.points;
  return result;
}

/** mapLineWire in slices of SLICE_SAMPLES samples, the event loop free between them (large bodies). */
export async function mapLineWireSliced(
  samples: readonly LineSample[],
  options: MappingOptions,
): Promise<MappedWire> {
  const result = emptyResult();
  const builder = new WireBuilder();
  for (let from = 0; from < samples.length; from += SLICE_SAMPLES) {
    if (from > 0) await nextTurn();
    mapInto(builder, samples.slice(from, from + SLICE_SAMPLES), options, result);
  }
  builder.finish();
  result.wires = builder.wires;
  result.points = builder.points;
  return result;
}
