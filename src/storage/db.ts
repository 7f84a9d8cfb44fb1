// The service's own SQLite database: opened once per server, pragmas in a deliberate order,
// one connection (better-sqlite3 is synchronous, so this process is the single writer).
import Database from 'better-sqlite3';
import type { Database as SqliteDatabase } from 'better-sqlite3';

export type Db = SqliteDatabase;

export interface OpenOptions {
  /** better-sqlite3 native binding, for the single executable which loads the addon itself. */
  nativeBinding?: unknown;
  /**
   * WAL pages after which a commit of this connection copies the WAL back (SQLite's default 1,000).
   * The server leaves that to a checkpointer thread and sets it high here: a last resort only.
   */
  checkpointPages?: number;
}

/** wal_autocheckpoint of the server's connections: the checkpointer thread normally runs long before. */
export const LAST_RESORT_CHECKPOINT_PAGES = 65_536;

export function openDatabase(file: string, options: OpenOptions = {}): Db {
  const db = new Database(
    file,
    options.nativeBinding ? { nativeBinding: options.nativeBinding as string } : {},
  );
  // Wait for a lock instead of failing at once; then WAL so readers never block the writer;
  // NORMAL is durable across process crashes in WAL mode (only an OS crash can lose the last commits).
  db.pragma('busy_timeout = 5000');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('temp_store = MEMORY');
  if (options.checkpointPages !== undefined) db.pragma(`wal_autocheckpoint = ${options.checkpointPages}`);
  return db;
}

/** Runs fn inside one IMMEDIATE transaction (takes the write lock up front). */
export function inTransaction<T>(db: Db, fn: () => T): T {
  return db.transaction(fn).immediate();
}
