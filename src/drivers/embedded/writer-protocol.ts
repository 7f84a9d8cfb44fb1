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
  /** points the event loop has logged (records up to `upTo`): no answer but `{ merged }` now and then */
  | { id: number; op: 'merge'; entries: AppendEntry[]; upTo: number }
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
