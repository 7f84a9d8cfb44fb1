// `service backup --to FILE` and `service restore --from FILE` (SPEC section 11).
//
// Backup uses SQLite's online backup API on a read-only connection that first opens a read
// transaction: every step then copies pages of that one snapshot, so the copy is consistent and
// never restarts however much the running service writes meanwhile (without the held snapshot, a
// writer makes the backup start over after each of its commits). The copy is written beside the
// target, switched to a single file (journal_mode DELETE) and renamed into place.
//
// Restore checks the file (SQLite, quick_check, a schema version this build knows, the service's
// tables), refuses while a service runs on the data directory (service.pid), moves the current
// database aside (service.db.before-restore-<time>) and puts a copy of the file in its place.
import { chmodSync, copyFileSync, existsSync, mkdirSync, openSync, readSync, closeSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SCHEMA_VERSION } from '../storage/migrations';
import { pidFilePath, runningService } from './pid-file';

export class OpsError extends Error {}

export interface Progress {
  copiedPages: number;
  totalPages: number;
}

const DATABASE = 'service.db';
/** Pages per backup step: small enough for a smooth progress line, large enough to be quick. */
const STEP_PAGES = 4096;
const REQUIRED_TABLES = ['users', 'organizations', 'sources', 'metric_series', 'metric_buckets'];

const open = (file: string, nativeBinding: unknown, readonly: boolean) =>
  new Database(file, { readonly, fileMustExist: true, ...(nativeBinding ? { nativeBinding: nativeBinding as string } : {}) });

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  ms: number;
}

export async function backupDatabase(
  dataDir: string,
  target: string,
  options: { nativeBinding?: unknown; onProgress?: (p: Progress) => void } = {},
): Promise<BackupResult> {
  const source = path.join(dataDir, DATABASE);
  if (!existsSync(source)) throw new OpsError(`no database at ${source} (wrong --data or --config?)`);
  const file = path.resolve(target);
  if (existsSync(file)) throw new OpsError(`${file} exists; remove it or choose another file`);
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  const started = performance.now();
  const db = open(source, options.nativeBinding, true);
  let pages = 0;
  try {
    db.exec('BEGIN'); // the snapshot every backup step reads from (see the top of this file)
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    await db.backup(partial, {
      progress({ totalPages, remainingPages }) {
        pages = totalPages;
        options.onProgress?.({ copiedPages: totalPages - remainingPages, totalPages });
        return STEP_PAGES;
      },
    });
    db.exec('COMMIT');
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    db.close();
  }
  const copy = open(partial, options.nativeBinding, false);
  try {
    copy.pragma('journal_mode = DELETE'); // one self-contained file, no -wal beside it
  } finally {
    copy.close();
  }
  chmodSync(partial, 0o600);
  renameSync(partial, file);
  return { file, bytes: statSync(file).size, pages, ms: performance.now() - started };
}

function isSqliteFile(file: string): boolean {
  const header = Buffer.alloc(16);
  const fd = openSync(file, 'r');
  try {
    return readSync(fd, header, 0, 16, 0) === 16 && header.toString('latin1') === 'SQLite format 3\0';
  } finally {
    closeSync(fd);
  }
}

/** The schema version of a backup, or OpsError saying why it is not a database of this service. */
export function checkBackup(file: string, nativeBinding?: unknown): number {
  if (!existsSync(file) || !statSync(file).isFile()) throw new OpsError(`${file} is not a file`);
  if (!isSqliteFile(file)) throw new OpsError(`${file} is not a SQLite database`);
  const db = open(file, nativeBinding, true);
  try {
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new OpsError(`${file} is damaged: ${String(check)}`);
    const version = db.pragma('user_version', { simple: true }) as number;
    const tables = new Set(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]);
    const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
    if (version < 1 || missing.length > 0) {
      throw new OpsError(`${file} is not a database of this service (missing ${missing.join(', ') || 'a schema version'})`);
    }
    if (version > SCHEMA_VERSION) {
      throw new OpsError(`${file} has schema version ${version}, newer than this build's ${SCHEMA_VERSION}: restore it with a newer service`);
    }
    return version;
  } finally {
    db.close();
  }
}

export interface RestoreResult {
  schemaVersion: number;
  /** where the database it replaced was moved, if there was one */
  previous: string | null;
}

export function restoreDatabase(dataDir: string, from: string, nativeBinding?: unknown): RestoreResult {
  const file = path.resolve(from);
  const running = runningService(dataDir);
  if (running) {
    throw new OpsError(
      `a service (pid ${running.pid}, ${running.url}) is running on ${dataDir}: stop it first ` +
        `(if none is, remove ${pidFilePath(dataDir)})`,
    );
  }
  const schemaVersion = checkBackup(file, nativeBinding);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const target = path.join(dataDir, DATABASE);
  const incoming = `${target}.restoring`;
  copyFileSync(file, incoming);
  chmodSync(incoming, 0o600);
  let previous: string | null = null;
  if (existsSync(target)) {
    previous = `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    // The -wal may hold committed pages: it moves with its database, so the old copy stays whole.
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(target + suffix)) renameSync(target + suffix, previous + suffix);
    }
  }
  renameSync(incoming, target);
  return { schemaVersion, previous };
}
