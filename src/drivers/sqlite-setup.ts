// Setup of a sqlite database source: creates the Trifle::Stats 2.x table layout in the file
// (idempotent), so Trifle::Stats clients and this service read and write the same rows.
// Layouts per identifier mode, as the Trifle::Stats sqlite driver creates them:
//   full       trifle_stats(key, data) with a unique index on key ("<key>::<granularity>::<at>" keys)
//   partial    trifle_stats(key, at, data), primary key (key, at)
//   separated  trifle_stats(key, granularity, at, data), primary key (key, granularity, at),
//              plus trifle_stats_ping(key, at, data) for the latest value per key
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

export type IdentifierMode = 'full' | 'partial' | 'separated';
export const IDENTIFIER_MODES: readonly IdentifierMode[] = ['full', 'partial', 'separated'];
export const STATS_TABLE = 'trifle_stats';

const LAYOUT: Record<IdentifierMode, { ddl: string[]; columns: string[] }> = {
  full: {
    ddl: [
      'CREATE TABLE IF NOT EXISTS trifle_stats (key varchar(255), data json)',
      'CREATE UNIQUE INDEX IF NOT EXISTS idx_trifle_stats_key ON trifle_stats (key)',
    ],
    columns: ['key', 'data'],
  },
  partial: {
    ddl: [
      'CREATE TABLE IF NOT EXISTS trifle_stats (key varchar(255) NOT NULL, at datetime NOT NULL, data json, PRIMARY KEY (key, at))',
    ],
    columns: ['key', 'at', 'data'],
  },
  separated: {
    ddl: [
      'CREATE TABLE IF NOT EXISTS trifle_stats (key varchar(255) NOT NULL, granularity varchar(255) NOT NULL, at datetime NOT NULL, data json, PRIMARY KEY (key, granularity, at))',
      'CREATE TABLE IF NOT EXISTS trifle_stats_ping (key varchar(255) PRIMARY KEY, at datetime NOT NULL, data json)',
    ],
    columns: ['key', 'granularity', 'at', 'data'],
  },
};

/**
 * Creates the file (and missing folders) and the layout of `mode`. Returns a short report; throws an
 * Error whose message is meant for the client (a file that is not SQLite, a table of another mode).
 */
export function setupSqliteStore(file: string, mode: IdentifierMode, nativeBinding?: unknown): string {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file, nativeBinding ? { nativeBinding: nativeBinding as string } : {});
  try {
    db.pragma('busy_timeout = 5000');
    const layout = LAYOUT[mode];
    db.transaction(() => {
      for (const statement of layout.ddl) db.exec(statement);
    })();
    const columns = db
      .prepare<[], { name: string }>(`SELECT name FROM pragma_table_info('${STATS_TABLE}') ORDER BY cid`)
      .all()
      .map((c) => c.name);
    if (columns.join(',') !== layout.columns.join(',')) {
      throw new Error(
        `table ${STATS_TABLE} already exists with columns (${columns.join(', ')}), ` +
          `not the ${mode} identifier layout (${layout.columns.join(', ')})`,
      );
    }
    return `${STATS_TABLE} ready (identifier mode ${mode})`;
  } finally {
    db.close();
  }
}
