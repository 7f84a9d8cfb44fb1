// The messages between the event loop and the metric writer's thread (embedded/writer-client.ts,
// embedded/writer-thread.ts). Errors cross as data: their message and code (SQLITE_FULL, ENOSPC, ...,
// which errors.ts maps to the client's answer) or the AppError they were.
import type { MessagePort } from 'node:worker_threads';
import { AppError, type AppErrorOptions, type ErrorKind } from '../../errors';
import type { WriteSet } from '../../model/write-set';
import type { MetricWriterOptions, AppendEntry } from './metric-writer';

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

  constructor(private readonly max = MAX_KEY_NUMBERS) {}

  /** A merge's entries and new keys; the entries' wires are copies, sharing their numbers. */
  number(entries: readonly AppendEntry[]): {
    entries: NumberedEntry[];
    newKeys: string[] | null;
    resetKeys: boolean;
  } {
    const resetKeys = this.numbers.size >= this.max;
    if (resetKeys) this.numbers = new Map();
    const numbers = this.numbers;
    let newKeys: string[] | null = null;
    const out = entries.map(({ settings, wire }): NumberedEntry => {
      const keyNumbers = new Int32Array(wire.keys.length);
      for (let i = 0; i < keyNumbers.length; i++) {
        const key = wire.keys[i]!;
        let n = numbers.get(key);
        if (n === undefined) {
          n = numbers.size;
          numbers.set(key, n);
          (newKeys ??= []).push(key);
        }
        keyNumbers[i] = n;
      }
      const { keyHashes: _, ...rest } = wire; // the event loop's alone
      return { settings, wire: { ...rest, keys: [], keyNumbers } };
    });
    return { entries: out, newKeys, resetKeys };
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
