// The messages between the event loop and the metric writer's thread (embedded/writer-client.ts,
// embedded/writer-thread.ts). Errors cross as data: their message and code (SQLITE_FULL, ENOSPC, ...,
// which errors.ts maps to the client's answer) or the AppError they were.
import type { MessagePort } from 'node:worker_threads';
import { AppError, type AppErrorOptions, type ErrorKind } from '../../errors';
import type { WriteSet } from '../../model/write-set';
import type { MetricWriterOptions, AppendEntry } from './metric-writer';
import { slotOf } from '../../lib/hash-set53';

export interface WriterThreadData {
  /** the writer (default), or the database's checkpointer (embedded/writer-thread.ts) */
  role?: 'writer' | 'checkpointer';
  dbFile: string;
  nativeBindingPath?: string;
  /** the writer connection's wal_autocheckpoint (storage/db.ts) */
  checkpointPages?: number;
  /** the event loop connection's write gate (storage/write-gate.ts) */
  writeGate?: SharedArrayBuffer;
  /**
   * The port reads ask on (`pending`), answered ahead of the merges queued on the thread's own port
   * and from inside long merges and folds: a read never waits for the backlog.
   */
  readPort?: MessagePort;
  options: Omit<MetricWriterOptions, 'db' | 'log' | 'sourceSettings'>;
}

export type WriterRequest =
  | { id: number; op: 'append'; entries: AppendEntry[] }
  /**
   * points the event loop has logged (records up to `upTo`): no answer but `{ merged }` now and
   * then. Their keys travel as numbers (KeyNumbers): each wire's `keys` is empty and `keyNumbers`
   * names them; `newKeys` are the keys numbered since the last merge, in their numbers' order
   * (after the thread's table is emptied when `resetKeys`).
   */
  | {
      id: number;
      op: 'merge';
      entries: NumberedEntry[];
      upTo: number;
      newKeys: string[] | null;
      resetKeys: boolean;
    }
  | {
      id: number;
      op: 'pending';
      sourceId: string;
      key: string;
      granularity: string;
      startsMs: readonly number[];
    }
  | {
      id: number;
      op: 'pendingMany';
      sourceId: string;
      keys: readonly string[];
      granularity: string;
      startsMs: readonly number[];
    }
  | { id: number; op: 'settle' }
  | { id: number; op: 'apply'; writes: WriteSet }
  | { id: number; op: 'close' };

export type WireError =
  | { app: true; kind: ErrorKind; message: string; options: AppErrorOptions }
  | { app: false; message: string; code?: string };

export function errorToWire(err: unknown): WireError {
  if (err instanceof AppError)
    return { app: true, kind: err.kind, message: err.message, options: err.options };
  const code = (err as { code?: unknown } | null)?.code;
  return {
    app: false,
    message: err instanceof Error ? err.message : String(err),
    code: typeof code === 'string' ? code : undefined,
  };
}

export function errorFromWire(wire: WireError): Error {
  if (wire.app) return new AppError(wire.kind, wire.message, wire.options);
  const err = new Error(wire.message) as Error & { code?: string };
  if (wire.code) err.code = wire.code;
  return err;
}

/** A merge's entry: its wire's keys as numbers of the thread's key table. */
export type NumberedEntry = AppendEntry;

/** Most keys a thread's table holds: past that the event loop starts it over (resetKeys). */
const MAX_KEY_NUMBERS = 100_000;

/**
 * The event loop's side of the key table of one writer thread: merges name each key by a number
 * once the thread has been told it, so the thread neither decodes the key strings of every
 * request nor hashes them anew to find the window's state of each key (its table holds the very
 * string each time).
 */
export class KeyNumbers {
  private numbers = new Map<string, number>();
  /**
   * The keys numbered, found by the hash53 a wire carries for each (WirePoints.keyHashes, the
   * line-protocol reader's) without hashing the text: open addressing, at most half full, a
   * hash's first slot seeded (lib/hash-set53.ts slotOf); per slot the hash and the key's number
   * (-1: free), the key compared with `named[number]`.
   * Keys numbered from wires without hashes are placed here when a wire with hashes names them.
   */
  private slotHash = new Float64Array(4096);
  private slotNumber = new Int32Array(4096).fill(-1);
  private placed = 0;
  private named: string[] = [];

  constructor(private readonly max = MAX_KEY_NUMBERS) {}

  /** A merge's entries and new keys; the entries' wires are copies, sharing their numbers. */
  number(entries: readonly AppendEntry[]): {
    entries: NumberedEntry[];
    newKeys: string[] | null;
    resetKeys: boolean;
  } {
    const resetKeys = this.numbers.size >= this.max;
    if (resetKeys) {
      this.numbers = new Map();
      this.named = [];
      this.slotNumber.fill(-1);
      this.placed = 0;
    }
    const numbers = this.numbers;
    const named = this.named;
    let newKeys: string[] | null = null;
    const out = entries.map(({ settings, wire }): NumberedEntry => {
      const keys = wire.keys;
      const hashes = wire.keyHashes;
      const keyNumbers = new Int32Array(keys.length);
      const byHash = hashes !== undefined && hashes.length === keys.length;
      for (let i = 0; i < keyNumbers.length; i++) {
        const key = keys[i]!;
        let n = byHash ? this.find(hashes[i]!, key) : -1;
        if (n < 0) {
          let known = numbers.get(key);
          if (known === undefined) {
            known = numbers.size;
            numbers.set(key, known);
            named.push(key);
            (newKeys ??= []).push(key);
          }
          n = known;
          if (byHash) this.place(hashes[i]!, n);
        }
        keyNumbers[i] = n;
      }
      const { keyHashes: _, ...rest } = wire; // the event loop's alone
      return { settings, wire: { ...rest, keys: [], keyNumbers } };
    });
    return { entries: out, newKeys, resetKeys };
  }

  /** The number of `key`, whose hash53 is `hash`, when placed by its hash; else -1. */
  private find(hash: number, key: string): number {
    const slotHash = this.slotHash;
    const slotNumber = this.slotNumber;
    const mask = slotNumber.length - 1;
    let i = slotOf(hash, mask);
    for (let n = slotNumber[i]!; n >= 0; n = slotNumber[i]!) {
      if (slotHash[i] === hash && this.named[n] === key) return n;
      i = (i + 1) & mask;
    }
    return -1;
  }

  private place(hash: number, number: number): void {
    if (2 * (this.placed + 1) > this.slotNumber.length) {
      // twice the room: every placed key placed again
      const oldHash = this.slotHash;
      const oldNumber = this.slotNumber;
      this.slotHash = new Float64Array(2 * oldHash.length);
      this.slotNumber = new Int32Array(2 * oldNumber.length).fill(-1);
      this.placed = 0;
      for (let j = 0; j < oldNumber.length; j++)
        if (oldNumber[j]! >= 0) this.place(oldHash[j]!, oldNumber[j]!);
    }
    const mask = this.slotNumber.length - 1;
    let i = slotOf(hash, mask);
    while (this.slotNumber[i]! >= 0) i = (i + 1) & mask;
    this.slotHash[i] = hash;
    this.slotNumber[i] = number;
    this.placed++;
  }
}

/** The thread's side: the keys by number, and a merge's wires given their keys back. */
export class KeyTable {
  private readonly keys: string[] = [];
  /** raised each time the table starts over: a number names one key within an epoch */
  private epoch = 0;

  /** The entries with their keys named again; each wire keeps its numbers and their epoch (WirePoints.keyNumbers). */
  resolve(req: { entries: NumberedEntry[]; newKeys: string[] | null; resetKeys: boolean }): AppendEntry[] {
    if (req.resetKeys) {
      this.keys.length = 0;
      this.epoch++;
    }
    if (req.newKeys) for (const key of req.newKeys) this.keys.push(key);
    const keys = this.keys;
    for (const { wire } of req.entries) {
      const numbers = wire.keyNumbers;
      if (numbers === undefined) continue;
      const named = new Array<string>(numbers.length);
      for (let i = 0; i < numbers.length; i++) named[i] = keys[numbers[i]!]!;
      wire.keys = named;
      wire.keyEpoch = this.epoch;
    }
    return req.entries;
  }
}
