// `service backup --to FILE` and `service restore --from FILE` (SPEC section 11).
//
// Backup uses SQLite's online backup API on a read-only connection that first opens a read
// transaction: every step then copies pages of that one snapshot, so the copy is consistent and
// never restarts however much the running service writes meanwhile (without the held snapshot, a
// writer makes the backup start over after each of its commits). Points the service acknowledged
// but had not folded into the buckets yet are in its write log: within the same snapshot the log's
// files are copied too (retrying if a fold removed a segment the snapshot still needs), and the
// metric writer folds them into the copy, so the backup holds every point acknowledged before it
// began. The copy is made in a folder beside the target, switched to a single file
// (journal_mode DELETE) and renamed into place.
//
// Restore copies the file (and its `-wal`, when one lies beside it) into a folder in the data
// directory, checkpoints that copy into one self-contained file, and checks exactly that file
// (SQLite, quick_check, a schema version this build knows, the service's tables, and no table,
// index, view or trigger that the schema of its version does not hold: a crafted backup's trigger
// would run inside the service, so such a file is refused, naming what it holds). It refuses
// while a service runs on the data directory (service.pid), moves the current database aside
// (service.db.before-restore-<time>, its write log into a folder of that name plus `.metric-log`)
// and renames the checked file into place.
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readSync,
  closeSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { logFiles } from '../drivers/embedded/log';
import { MetricWriter } from '../drivers/embedded/metric-writer';
import { openDatabase } from '../storage/db';
import { migrate, SCHEMA_VERSION } from '../storage/migrations';
import { sourceSettingsReader } from '../storage/sources';
import { pidFilePath, runningService } from './pid-file';

export class OpsError extends Error {}

/**
 * `service backup` / `service restore` in cluster mode (storage.url): the service's state is the
 * PostgreSQL database, not this node's files, so they refuse (exit 2) and say what to use instead.
 */
export function clusterModeBackupRefusal(command: 'backup' | 'restore'): string {
  return (
    `${command} is not available in cluster mode (storage.url): the service's data is in PostgreSQL, ` +
    `not in this node's service.db; ${command === 'backup' ? 'back it up' : 'restore it'} with PostgreSQL's tools ` +
    `(pg_dump / pg_restore, pg_basebackup, WAL archiving)`
  );
}

export interface Progress {
  copiedPages: number;
  totalPages: number;
}

const DATABASE = 'service.db';
/** Pages per backup step: small enough for a smooth progress line, large enough to be quick. */
const STEP_PAGES = 4096;
const REQUIRED_TABLES = ['users', 'organizations', 'sources', 'metric_series', 'metric_buckets'];

const open = (file: string, nativeBinding: unknown, readonly: boolean) =>
  new Database(file, {
    readonly,
    fileMustExist: true,
    ...(nativeBinding ? { nativeBinding: nativeBinding as string } : {}),
  });

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  ms: number;
}

/** Tries before a backup gives up finding the write log whole for its snapshot. */
const LOG_ATTEMPTS = 50;

/** The last log record folded in the snapshot of `db` (0 before the write log existed). */
function foldedUpTo(db: Database.Database): number {
  try {
    return (
      (db.prepare('SELECT folded_up_to FROM metric_fold_state WHERE id = 1').pluck().get() as
        number | undefined) ?? 0
    );
  } catch {
    return 0; // a database from before migration 005
  }
}

/**
 * Copies the write log's files into `into` if, with the snapshot's fold state, they hold every
 * record after it; false when a fold removed a segment meanwhile (the snapshot is then too old).
 */
function copyLog(dataDir: string, folded: number, into: string): boolean {
  try {
    const { names, firstSeq } = logFiles(dataDir);
    if (names.length > 0 && firstSeq > folded + 1) return false;
    for (const name of names) copyFileSync(path.join(dataDir, name), path.join(into, name));
    return true;
  } catch (err) {
    if ((err as { code?: unknown }).code === 'ENOENT') return false; // removed while copied
    throw err;
  }
}

/** Folds the copied log into the copied database, then removes the log's files. */
async function foldCopiedLog(dir: string, file: string, nativeBinding: unknown): Promise<void> {
  const db = openDatabase(file, { nativeBinding });
  try {
    const writer = new MetricWriter({ db, sourceSettings: sourceSettingsReader(db) }); // replays the log
    await writer.close();
  } finally {
    db.close();
  }
  for (const name of logFiles(dir).names) rmSync(path.join(dir, name), { force: true });
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
  const work = `${file}.partial.d`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { mode: 0o700 });
  const copy = path.join(work, DATABASE);
  const started = performance.now();
  let pages = 0;
  try {
    for (let attempt = 1; ; attempt++) {
      const db = open(source, options.nativeBinding, true);
      try {
        db.exec('BEGIN'); // the snapshot every backup step reads from (see the top of this file)
        const folded = foldedUpTo(db);
        if (!copyLog(dataDir, folded, work)) {
          if (attempt >= LOG_ATTEMPTS)
            throw new OpsError('the write log kept changing under the backup; retry');
          continue;
        }
        await db.backup(copy, {
          progress({ totalPages, remainingPages }) {
            pages = totalPages;
            options.onProgress?.({ copiedPages: totalPages - remainingPages, totalPages });
            return STEP_PAGES;
          },
        });
        db.exec('COMMIT');
        break;
      } finally {
        db.close();
      }
    }
    await foldCopiedLog(work, copy, options.nativeBinding);
    const written = open(copy, options.nativeBinding, false);
    try {
      written.pragma('journal_mode = DELETE'); // one self-contained file, no -wal beside it
    } finally {
      written.close();
    }
    chmodSync(copy, 0o600);
    renameSync(copy, file);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
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

interface SchemaObject {
  type: string;
  name: string;
  sql: string | null;
}

const schemaObjects = (db: Database.Database): SchemaObject[] =>
  db
    .prepare(
      "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name",
    )
    .all() as SchemaObject[];

/** The tables, indexes, views and triggers the service's schema holds at `version`. */
function knownSchema(version: number, nativeBinding?: unknown): Map<string, SchemaObject> {
  const db = new Database(':memory:', nativeBinding ? { nativeBinding: nativeBinding as string } : {});
  try {
    migrate(db, version);
    return new Map(schemaObjects(db).map((o) => [`${o.type} ${o.name}`, o]));
  } finally {
    db.close();
  }
}

/**
 * What a backup holds beyond its version's schema: tables, indexes, views and triggers of other
 * names, and views or triggers whose text differs from the schema's (code that would run inside
 * the service, e.g. a trigger copying new token hashes into a table of its own).
 */
function unknownObjects(db: Database.Database, version: number, nativeBinding?: unknown): string[] {
  const known = knownSchema(version, nativeBinding);
  return schemaObjects(db)
    .filter((o) => {
      const same = known.get(`${o.type} ${o.name}`);
      if (!same) return true;
      return (o.type === 'trigger' || o.type === 'view') && same.sql !== o.sql;
    })
    .map((o) => `${o.type} ${o.name}`);
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
    const tables = new Set(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[],
    );
    const missing = REQUIRED_TABLES.filter((t) => !tables.has(t));
    if (version < 1 || missing.length > 0) {
      throw new OpsError(
        `${file} is not a database of this service (missing ${missing.join(', ') || 'a schema version'})`,
      );
    }
    if (version > SCHEMA_VERSION) {
      throw new OpsError(
        `${file} has schema version ${version}, newer than this build's ${SCHEMA_VERSION}: restore it with a newer service`,
      );
    }
    const unknown = unknownObjects(db, version, nativeBinding);
    if (unknown.length > 0) {
      throw new OpsError(
        `${file} holds what the service's schema does not (${unknown.join(', ')}): refused, nothing was restored`,
      );
    }
    return version;
  } finally {
    db.close();
  }
}

/**
 * A self-contained copy of `file` in `dir`: the file, and its `-wal` when one lies beside it
 * (committed pages may live only there), checkpointed into the copy and switched to a single file.
 */
function checkpointedCopy(file: string, dir: string, nativeBinding?: unknown): string {
  const copy = path.join(dir, DATABASE);
  copyFileSync(file, copy);
  if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`);
  const db = open(copy, nativeBinding, false);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('journal_mode = DELETE');
  } finally {
    db.close();
  }
  for (const suffix of ['-wal', '-shm', '-journal']) rmSync(copy + suffix, { force: true });
  return copy;
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
  if (!existsSync(file) || !statSync(file).isFile()) throw new OpsError(`${file} is not a file`);
  if (!isSqliteFile(file)) throw new OpsError(`${file} is not a SQLite database`);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const target = path.join(dataDir, DATABASE);
  // The file checked is the file put in place: a copy, made whole, in the data directory itself.
  const staging = `${target}.restoring.d`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { mode: 0o700 });
  try {
    return putInPlace(dataDir, target, staging, file, nativeBinding);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function putInPlace(
  dataDir: string,
  target: string,
  staging: string,
  file: string,
  nativeBinding: unknown,
): RestoreResult {
  let incoming: string;
  try {
    incoming = checkpointedCopy(file, staging, nativeBinding);
  } catch (err) {
    throw new OpsError(`${file} could not be read as a database: ${(err as Error).message}`);
  }
  let schemaVersion: number;
  try {
    schemaVersion = checkBackup(incoming, nativeBinding);
  } catch (err) {
    if (err instanceof OpsError) throw new OpsError(err.message.split(incoming).join(file));
    throw err;
  }
  chmodSync(incoming, 0o600);
  let previous: string | null = null;
  if (existsSync(target)) {
    previous = `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    // The -wal may hold committed pages: it moves with its database, so the old copy stays whole.
    for (const suffix of ['', '-wal', '-shm']) {
      if (existsSync(target + suffix)) renameSync(target + suffix, previous + suffix);
    }
  }
  // The write log belongs to the database it replaces (its points are not in the restored one):
  // it moves aside too, into a folder of the same name, or the next start would replay it here.
  const log = logFiles(dataDir).names;
  if (log.length > 0) {
    previous ??= `${target}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
    mkdirSync(`${previous}.metric-log`, { recursive: true, mode: 0o700 });
    for (const name of log) renameSync(path.join(dataDir, name), path.join(`${previous}.metric-log`, name));
  }
  renameSync(incoming, target);
  return { schemaVersion, previous };
}
