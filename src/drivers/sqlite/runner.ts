// The sqlite source files of one thread and the operations on them, as plain messages: the sqlite
// worker thread runs one runner (sqlite/worker.ts), and so does the event loop when no worker can
// run (sqlite/pool.ts). Errors leave as data (WireError) so that they cross the thread boundary
// and become the same client answers on the other side.
import { AppError, type ErrorKind } from '../../errors';
import type { KeyWrites } from '../../model/write-set';
import { SqliteFile, sourceFileError } from './file';
import type { IdentifierMode } from './setup';

export interface FileRef {
  file: string;
  mode: IdentifierMode;
  busyTimeoutMs?: number;
}

export type FileOp =
  | ({ op: 'setup' } & FileRef)
  | ({ op: 'apply'; sources: Map<string, KeyWrites> } & FileRef)
  | ({ op: 'read'; key: string; granularity: string; starts: number[] } & FileRef)
  | ({ op: 'close' } & FileRef);

export type WireError =
  | { app: true; kind: ErrorKind; message: string; fields?: Record<string, string[]>; retryAfter?: number }
  | { app: false; message: string };

export type OpResult = { ok: true; value: unknown } | { ok: false; error: WireError };

/** The error as data, with a message fit for the client (no paths from system errors). */
export function toWireError(err: unknown, op: FileOp['op']): WireError {
  const code = (err as { code?: unknown } | null)?.code;
  const mapped = op === 'setup' ? err : sourceFileError(err);
  if (mapped instanceof AppError) {
    const { fields, retryAfter } = mapped.options;
    return { app: true, kind: mapped.kind, message: mapped.message, fields, retryAfter };
  }
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
    const message = `the database source file cannot be ${op === 'setup' ? 'created' : 'opened'} (${code})`;
    return op === 'setup' ? { app: false, message } : { app: true, kind: 'conflict', message };
  }
  return {
    app: false,
    message: err instanceof Error ? err.message.split('\n')[0]!.slice(0, 300) : String(err),
  };
}

export function fromWireError(error: WireError): Error {
  if (!error.app) return new Error(error.message);
  return new AppError(error.kind, error.message, { fields: error.fields, retryAfter: error.retryAfter });
}

export interface FileRunner {
  run(op: FileOp): OpResult;
  /** Closes the handles of files unused for `idleMs`; returns how many stay open. */
  sweep(idleMs: number): number;
  closeAll(): void;
  readonly openFiles: number;
}

export function createFileRunner(nativeBinding?: unknown): FileRunner {
  const files = new Map<string, SqliteFile>();
  const fileFor = (ref: FileRef): SqliteFile => {
    const id = `${ref.mode}\u0000${ref.file}`;
    let f = files.get(id);
    if (!f)
      files.set(
        id,
        (f = new SqliteFile({
          file: ref.file,
          mode: ref.mode,
          busyTimeoutMs: ref.busyTimeoutMs,
          nativeBinding,
        })),
      );
    return f;
  };

  function perform(op: FileOp): unknown {
    const f = fileFor(op);
    switch (op.op) {
      case 'setup':
        return f.setup();
      case 'apply':
        return f.apply(op.sources);
      case 'read':
        // One string crosses the thread boundary faster than thousands (JSON texts hold no raw newline).
        return f.read(op.key, op.granularity, op.starts).join('\n');
      case 'close':
        f.close();
        files.delete(`${op.mode}\u0000${op.file}`);
        return undefined;
    }
  }

  return {
    run(op) {
      try {
        return { ok: true, value: perform(op) };
      } catch (err) {
        return { ok: false, error: toWireError(err, op.op) };
      }
    },
    sweep(idleMs) {
      // Handles close; the file objects stay, so a file that disappears while closed is still noticed.
      const now = Date.now();
      let open = 0;
      for (const f of files.values()) {
        if (f.isOpen && now - f.lastUsed >= idleMs) f.close();
        if (f.isOpen) open++;
      }
      return open;
    },
    closeAll() {
      for (const f of files.values()) f.close();
      files.clear();
    },
    get openFiles() {
      let n = 0;
      for (const f of files.values()) if (f.isOpen) n++;
      return n;
    },
  };
}
