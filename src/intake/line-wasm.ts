// The usual line protocol body read into wires by the WebAssembly reader (wasm/lp-reader.c,
// docs/intake.md "The line-protocol reader in WebAssembly"): the same bodies line-direct.ts reads,
// read from the bytes as they came, without a string of the body, a JavaScript object per key or a
// call per line. The module finds each line's key among the keys it has seen (by their bytes), each
// line's field list among the body's, and writes the wire's numbers; this side makes the strings
// only for what is new (a key the first time, checked as line-direct.ts checks it; a body's field
// lists) and reads through Number() the values the module leaves to it (more than 15 digits, an
// exponent), as line-direct.ts does. A body it declines (null) goes to line-direct.ts, which reads
// it or declines in turn: test/unit/intake-line-direct.test.ts holds both to the general parser's
// wires on fixed, random and mutated bodies.
import { randomBytes } from 'node:crypto';
import type { Precision } from '../config-listeners';
import { hash53 } from '../lib/key-hash';
import { DEFAULT_MAX_LINE_LENGTH } from './line-protocol';
import { type MappedWire, goodKey } from './line-wire';
import { MAX_TIME_MS, MIN_TIME_MS, fieldSegment } from './mapping';
import { LP_READER_WASM } from './wasm/lp-reader.wasm';

/** What this file uses of the WebAssembly API (Node's types here do not declare it). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface Exports {
  memory: { buffer: ArrayBuffer };
  lp_input(): number;
  lp_input_max(): number;
  lp_meta(): number;
  lp_values(): number;
  lp_values_count(): number;
  lp_body_keys(): number;
  lp_keys_count(): number;
  lp_first_new(): number;
  lp_entries(): number;
  lp_entry_at(): number;
  lp_entry_len(): number;
  lp_entry_words(): number;
  lp_epoch(): number;
  lp_lists_count(): number;
  lp_list_first(): number;
  lp_list_count(): number;
  lp_name_at(): number;
  lp_name_len(): number;
  lp_fixups_count(): number;
  lp_fix_at(): number;
  lp_fix_len(): number;
  lp_fix_first(): number;
  lp_fix_second(): number;
  lp_rollback(): void;
  lp_seed(value: number): void;
  lp_read(
    length: number,
    precision: number,
    now: number,
    minMs: number,
    maxMs: number,
    maxLine: number,
  ): number;
}

const PRECISIONS: Record<Precision, number> = { ns: 0, us: 1, ms: 2, s: 3, m: 4, h: 5 };

/** Matches what the module leaves to Number() (line-direct.ts FLOAT). */
const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The module and views of its memory (which never grows: its arrays are static). */
class Reader {
  readonly x: Exports;
  readonly bytes: Uint8Array;
  readonly u32: Uint32Array;
  readonly f64: Float64Array;
  readonly inputAt: number;
  readonly inputMax: number;
  /** per entry id of the module's key table: the key, and its hash53 */
  keys: string[] = [];
  hashes: number[] = [];
  epoch = 0;

  constructor() {
    const module = new wasm.Module(Buffer.from(LP_READER_WASM, 'base64'));
    this.x = new wasm.Instance(module, {}).exports as Exports;
    const buffer = this.x.memory.buffer;
    this.bytes = new Uint8Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.f64 = new Float64Array(buffer);
    this.inputAt = this.x.lp_input();
    this.inputMax = this.x.lp_input_max();
    // the key table's hash is seeded, so that no sender can choose keys that share its places
    this.x.lp_seed(randomBytes(4).readUInt32LE(0));
  }

  /** u32 array `at` (a byte address) element i */
  word(at: number, i: number): number {
    return this.u32[(at >>> 2) + i]!;
  }
}

let reader: Reader | null = null;

/** The path lists made for a body's field lists, by their names joined (a sender keeps a few). */
const lists = new Map<string, { paths: string[]; assertFrom: number }>();
const MAX_LISTS_KEPT = 1000;

/**
 * A line protocol body's wires, when the WebAssembly reader takes it (see the head of the file);
 * null sends it on to line-direct.ts. `nowMs` times lines without a timestamp.
 */
export function mapLineBodyWasm(body: Uint8Array, precision: Precision, nowMs: number): MappedWire | null {
  const r = (reader ??= new Reader());
  const x = r.x;
  if (body.length > r.inputMax) return null;
  r.bytes.set(body, r.inputAt);
  const pairs = x.lp_read(
    body.length,
    PRECISIONS[precision],
    Math.floor(nowMs),
    MIN_TIME_MS,
    MAX_TIME_MS,
    DEFAULT_MAX_LINE_LENGTH,
  );
  if (pairs < 0) return null;
  const epoch = x.lp_epoch();
  if (epoch !== r.epoch) {
    // the module's table started over: its entry ids name other keys from now on
    r.keys = [];
    r.hashes = [];
    r.epoch = epoch;
  }
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength); // the body, for strings of parts of it
  // keys seen for the first time: their text (ASCII: the module declines any other byte), checked once
  const entries = x.lp_entries();
  if (x.lp_first_new() < entries) {
    const at = x.lp_entry_at();
    const len = x.lp_entry_len();
    const stride = x.lp_entry_words(); // an entry's words: `at` and `len` are fields of each
    for (let id = x.lp_first_new(); id < entries; id++) {
      const from = r.word(at, id * stride);
      const key = text.toString('latin1', from, from + r.word(len, id * stride));
      if (!goodKey(key)) {
        x.lp_rollback();
        return null;
      }
      r.keys[id] = key;
      r.hashes[id] = hash53(key);
    }
  }
  const result: MappedWire = { wires: [], points: 0, samples: pairs, skippedStrings: 0, skippedNonFinite: 0 };
  if (pairs === 0) {
    result.keyHashes = [];
    return result;
  }
  const valuesCount = x.lp_values_count();
  const values = r.f64.slice(x.lp_values() >>> 3, (x.lp_values() >>> 3) + valuesCount);
  // values left to Number(): checked as line-direct.ts checks them
  const fixups = x.lp_fixups_count();
  if (fixups > 0) {
    const fixAt = x.lp_fix_at();
    const fixLen = x.lp_fix_len();
    const first = x.lp_fix_first();
    const second = x.lp_fix_second();
    for (let i = 0; i < fixups; i++) {
      const from = r.word(fixAt, i);
      const raw = text.toString('latin1', from, from + r.word(fixLen, i));
      const value = FLOAT.test(raw) ? Number(raw) : Number.NaN;
      if (!Number.isFinite(value)) {
        x.lp_rollback();
        return null;
      }
      values[r.word(first, i)] = value;
      values[r.word(second, i)] = value;
    }
  }
  // the body's field lists, in the order of their first line
  const pathLists: string[][] = [];
  const assertFrom: number[] = [];
  const listFirst = x.lp_list_first();
  const listCount = x.lp_list_count();
  const nameAt = x.lp_name_at();
  const nameLen = x.lp_name_len();
  for (let l = 0, n = x.lp_lists_count(); l < n; l++) {
    const first = r.word(listFirst, l);
    const count = r.word(listCount, l);
    let joined = '';
    for (let i = 0; i < count; i++) {
      const from = r.word(nameAt, first + i);
      joined += `${i > 0 ? ',' : ''}${text.toString('latin1', from, from + r.word(nameLen, first + i))}`;
    }
    let list = lists.get(joined);
    if (list === undefined) {
      const names = joined.split(',').map(fieldSegment);
      const paths: string[] = [];
      for (const name of names) paths.push(`${name}.sum`, `${name}.count`);
      for (const name of names) paths.push(`${name}.last`);
      list = { paths, assertFrom: 2 * names.length };
      if (lists.size >= MAX_LISTS_KEPT) lists.clear();
      lists.set(joined, list);
    }
    pathLists.push(list.paths.slice());
    assertFrom.push(list.assertFrom);
  }
  // the body's keys, in the order of their first line
  const keyCount = x.lp_keys_count();
  const bodyKeys = x.lp_body_keys() >>> 2;
  const keys: string[] = new Array<string>(keyCount);
  const hashes: number[] = new Array<number>(keyCount);
  for (let i = 0; i < keyCount; i++) {
    const id = r.u32[bodyKeys + i]!;
    keys[i] = r.keys[id]!;
    hashes[i] = r.hashes[id]!;
  }
  const metaAt = x.lp_meta() >>> 3;
  result.wires.push({
    keys,
    pathLists,
    meta: r.f64.slice(metaAt, metaAt + 2 * pairs),
    values,
    assertFrom,
  });
  result.points = 2 * pairs;
  result.keyHashes = [hashes];
  return result;
}
