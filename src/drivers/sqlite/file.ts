// One sqlite source file, synchronously (better-sqlite3): open with defensive pragmas, the exact
// schema check, writes, reads, setup. It runs in the sqlite worker thread (sqlite/pool.ts), or inline
// when no worker can run. The file is untrusted input (SPEC 8):
// - before every open: a regular file reached without symlinks (its real path is the stored one),
//   one hard link only, and a name that is not a -wal/-shm/-journal companion;
// - opened with trusted_schema off, cell_size_check on, no extension loading, its journal mode
//   untouched (a user's rollback-journal file is never switched to WAL);
// - the schema checked exactly at every open (sqlite/schema.ts);
// - before every use: the path still names the opened file (deleted or swapped underneath -> reopen).
import { lstatSync, mkdirSync, realpathSync, type Stats } from 'node:fs';
import path from 'node:path';
import Database, { type Database as Db, type Statement } from 'better-sqlite3';
import { AppError, conflict, invalidField } from '../../errors';
import { PathSplitter, nestLeaves } from '../../model/leaves';
import { parseTimestamp } from '../../shared/time';
import type { IdentifierMode } from './setup';
import { SETUP_DDL } from './setup';
import { schemaProblem, STATS_TABLE } from './schema';
import type { BucketOps, KeyWrites } from '../../model/write-set';
import {
  MAX_READ_BYTES,
  MAX_ROW_BYTES,
  MODES,
  bindNumber,
  flatPath,
  leafStatements,
  nestedPath,
  rowLeaves,
} from './layout';

const COMPANION = /-(wal|shm|journal)$/i;

export interface FileOptions {
  file: string;
  mode: IdentifierMode;
  nativeBinding?: unknown;
  /** ms to wait for another writer of the file before giving up with 503 */
  busyTimeoutMs?: number;
}

interface Open {
  db: Db;
  ino: number;
  dev: number;
  add: Statement;
  set: Statement;
  range: Statement;
}

/** SQLite errors of a source file as client answers: busy -> 503; anything else names the problem (409). */
export function sourceFileError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return err;
  if (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code.startsWith('SQLITE_LOCKED')) {
    return new AppError('unavailable', 'The database source is busy, retry later', { retryAfter: 1 });
  }
  if (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR') || code === 'SQLITE_NOMEM') {
    return new AppError('unavailable', 'The database source cannot be written right now, retry later', {
      retryAfter: 5,
    });
  }
  const message = String((err as Error).message)
    .split('\n')[0]!
    .slice(0, 200);
  return conflict(`The database source file cannot be used: ${message}`);
}

/** Why the file at `file` must not be opened, or null (missing files are the caller's business). */
function fileProblem(file: string, stat: Stats): string | null {
  if (COMPANION.test(path.basename(file))) return 'its name ends in -wal, -shm or -journal';
  if (stat.isSymbolicLink()) return 'it is a symbolic link';
  if (!stat.isFile()) return 'it is not a regular file';
  if (stat.nlink > 1) return 'it has more than one hard link';
  let real: string;
  try {
    real = realpathSync(file);
  } catch {
    return 'its path cannot be resolved';
  }
  if (real !== file) return 'its path now leads through a symbolic link';
  return null;
}

function lstatOrNull(file: string): Stats | null {
  try {
    return lstatSync(file);
  } catch {
    return null;
  }
}

/** Opens `file` (created when `create`) after the file checks, with the defensive pragmas. */
function openChecked(options: FileOptions, create: boolean): { db: Db; stat: Stats } | null {
  const { file } = options;
  let stat = lstatOrNull(file);
  if (!stat && !create) return null;
  if (stat) {
    const problem = fileProblem(file, stat);
    if (problem) throw conflict(`The database source file is refused: ${problem}`);
  }
  const binding = options.nativeBinding ? { nativeBinding: options.nativeBinding as string } : {};
  const db = new Database(file, { ...binding, fileMustExist: !create });
  try {
    // Checked again on what was opened: the entry may have been swapped between the check and the open.
    const now = lstatSync(file);
    const problem = fileProblem(file, now);
    if (problem || (stat && (stat.ino !== now.ino || stat.dev !== now.dev))) {
      throw conflict(
        `The database source file is refused: ${problem ?? 'it was replaced while being opened'}`,
      );
    }
    stat = now;
    db.pragma('trusted_schema = OFF'); // functions in the file's schema cannot run with side effects
    db.pragma('cell_size_check = ON'); // detect corrupt b-tree cells instead of reading past them
    db.pragma('foreign_keys = OFF');
    db.pragma('mmap_size = 0');
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 1000}`);
    return { db, stat };
  } catch (err) {
    db.close();
    throw err;
  }
}

export class SqliteFile {
  private handle: Open | null = null;
  /** the file was there with its table since setup or the first open: missing now means deleted */
  private seen = false;
  private readonly splitter = new PathSplitter();
  /** Date.now() of the last operation, for the idle sweep */
  lastUsed = Date.now();

  constructor(private readonly options: FileOptions) {}

  get isOpen(): boolean {
    return this.handle !== null;
  }

  /** The open, checked file, or null while it does not exist or has no trifle_stats table. */
  private open(): Open | null {
    this.lastUsed = Date.now();
    if (this.handle && !this.stillSameFile(this.handle)) this.close();
    if (this.handle) return this.handle;
    const opened = openChecked(this.options, false);
    if (!opened) {
      if (this.seen)
        throw conflict(
          'The database source file has disappeared (deleted or moved): run its setup to create it again',
        );
      return null;
    }
    const { db, stat } = opened;
    try {
      const problem = schemaProblem(db, this.options.mode);
      if (problem === 'missing') {
        db.close();
        return null;
      }
      if (problem) throw conflict(problem);
      const sql = leafStatements(this.options.mode);
      const range = db.prepare(MODES[this.options.mode].range).raw(true);
      this.handle = {
        db,
        ino: stat.ino,
        dev: stat.dev,
        add: db.prepare(sql.add),
        set: db.prepare(sql.set),
        range,
      };
      this.seen = true;
      return this.handle;
    } catch (err) {
      if (db.open) db.close();
      throw err;
    }
  }

  /** The path still names the opened inode, with one link (not deleted, replaced or linked since). */
  private stillSameFile(h: Open): boolean {
    const stat = lstatOrNull(this.options.file);
    return stat !== null && stat.isFile() && stat.ino === h.ino && stat.dev === h.dev && stat.nlink === 1;
  }

  setup(): string {
    this.close();
    mkdirSync(path.dirname(this.options.file), { recursive: true, mode: 0o700 });
    const { db } = openChecked(this.options, true)!;
    try {
      const mode = this.options.mode;
      const before = schemaProblem(db, mode);
      if (before !== null && before !== 'missing') throw new Error(before);
      db.transaction(() => {
        for (const statement of SETUP_DDL[mode]) db.exec(statement);
      })();
      const after = schemaProblem(db, mode);
      if (after !== null) throw new Error(after);
      this.seen = true;
      return `${STATS_TABLE} ready (identifier mode ${mode})`;
    } finally {
      db.close();
    }
  }

  apply(sources: Map<string, KeyWrites>): void {
    const h = this.open();
    if (!h) throw conflict('The database source is not set up: run its setup first');
    const identity = MODES[this.options.mode].identity;
    h.db
      .transaction(() => {
        for (const keys of sources.values()) {
          for (const [key, granularities] of keys) {
            for (const [granularity, buckets] of granularities) {
              for (const [startMs, ops] of buckets)
                this.writeBucket(h, identity(key, granularity, startMs), ops);
            }
          }
        }
      })
      .immediate();
  }

  private writeBucket(h: Open, identity: unknown[], ops: BucketOps): void {
    if (ops.set) for (const [p, value] of ops.set) this.writeLeaf(h.set, identity, p, value);
    for (const [p, amount] of ops.add) this.writeLeaf(h.add, identity, p, amount);
  }

  private writeLeaf(statement: Statement, identity: unknown[], leaf: string, value: number): void {
    const params: Record<string, unknown> = {
      leaf,
      flat: flatPath(leaf),
      nested: nestedPath(this.splitter.split(leaf)),
      value: bindNumber(value),
    };
    identity.forEach((v, i) => (params[`c${i}`] = v));
    // The upsert leaves a row whose data is not a JSON object untouched: refuse rather than lose it.
    if (statement.run(params).changes === 0) {
      const row = String(identity.join(' ')).slice(0, 200);
      throw invalidField(
        'data',
        `a stored row (${row}) is not a JSON object of at most ${MAX_ROW_BYTES} bytes; nothing was written`,
      );
    }
  }

  read(key: string, granularity: string, starts: readonly number[]): string[] {
    const out = new Array<string>(starts.length).fill('{}');
    const h = starts.length > 0 ? this.open() : null;
    if (!h) return out;
    const mode = this.options.mode;
    const rows = h.range.iterate(...MODES[mode].rangeParams(key, granularity, starts)) as Iterable<
      [unknown, unknown]
    >;
    const indexOf = this.indexer(key, granularity, starts);
    let bytes = 0;
    for (const [id, data] of rows) {
      const i = indexOf(id);
      if (i === undefined || typeof data !== 'string') continue; // not text, or over the row cap
      bytes += data.length;
      if (bytes > MAX_READ_BYTES)
        throw conflict(`The rows of this range hold more than ${MAX_READ_BYTES} bytes; read a shorter range`);
      const leaves = rowLeaves(data);
      if (leaves) out[i] = JSON.stringify(nestLeaves(leaves, this.splitter));
    }
    return out;
  }

  /** Bucket index of a row: by its full key in `full` mode, else by the instant in `at`. */
  private indexer(
    key: string,
    granularity: string,
    starts: readonly number[],
  ): (id: unknown) => number | undefined {
    const index = new Map<unknown, number>();
    if (this.options.mode === 'full') {
      starts.forEach((ms, i) => index.set(MODES.full.identity(key, granularity, ms)[0], i));
      return (id) => index.get(id);
    }
    starts.forEach((ms, i) => index.set(ms, i));
    return (at) => index.get(typeof at === 'number' ? at * 1000 : parseTimestamp(at));
  }

  close(): void {
    this.handle?.db.close();
    this.handle = null;
  }
}
