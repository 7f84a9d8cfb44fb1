// A database source in MySQL 8 or MariaDB 10.11+, in the Trifle::Stats 2.x layout (the Ruby and
// Go mysql drivers): table trifle_stats with a `data JSON` object of flat dot paths, set through
// quoted single-member paths (`$."a.b"`), per identifier mode
//   full       `key` VARCHAR(255) PRIMARY KEY            key = "<key>::<granularity>::<unix s>"
//   partial    (`key`, `at` DATETIME(6)) primary key     key = "<key>::<granularity>", at in UTC
//   separated  (`key`, `granularity`, `at`) primary key, plus trifle_stats_ping
//
// Each bucket is one INSERT ... ON DUPLICATE KEY UPDATE, all in one transaction per write set.
// The SQL is the common ground of both servers: JSON text in, CAST(... AS CHAR) out (MariaDB's
// JSON is text), sums in DOUBLE (the libraries' DECIMAL(65,10) leaves `10.0000000000`, which
// reads as 10). Rows are locked in the libraries' order (bucketWrites in network/store.ts), so the
// service and the libraries writing at once do not deadlock; a deadlock or lock wait time-out that
// still happens is retried after a short back-off.
import type mysql from 'mysql2/promise';
import { PathSplitter } from '../../model/leaves';
import type { IdentifierMode } from '../sqlite/setup';
import {
  IDLE_CLOSE_MS,
  OPERATION_TIMEOUT_MS,
  POOL_SIZE,
  SEPARATOR,
  assertLayoutColumns,
  bucketWrites,
  fullKey,
  lazyModule,
  readSqlSeries,
  setupFailure,
  withTimeout,
  writeWithRetries,
  type BucketWrite,
  type NetworkSettings,
  type SqlRow,
  type SqlSeriesRead,
  connectionTarget,
} from './store';
import { serverName } from '../../lib/outbound';
import { guardFor, type WireGuard } from './wire-guard';
import type { SeriesRef, SetupResult, WriteSet, WriteSetStore } from '../types';

const loadMysql = lazyModule(async () => (await import('mysql2/promise')).default);

export interface MysqlStoreOptions extends NetworkSettings {
  mode: IdentifierMode;
  timeZone: string;
}

const DDL: Record<IdentifierMode, string[]> = {
  full: ['CREATE TABLE IF NOT EXISTS `trifle_stats` (`key` VARCHAR(255) PRIMARY KEY, `data` JSON NOT NULL)'],
  partial: [
    'CREATE TABLE IF NOT EXISTS `trifle_stats` (`key` VARCHAR(255) NOT NULL, `at` DATETIME(6) NOT NULL, `data` JSON NOT NULL, PRIMARY KEY (`key`, `at`))',
  ],
  separated: [
    'CREATE TABLE IF NOT EXISTS `trifle_stats` (`key` VARCHAR(255) NOT NULL, `granularity` VARCHAR(255) NOT NULL, `at` DATETIME(6) NOT NULL, `data` JSON NOT NULL, PRIMARY KEY (`key`, `granularity`, `at`))',
    'CREATE TABLE IF NOT EXISTS `trifle_stats_ping` (`key` VARCHAR(255) PRIMARY KEY, `at` DATETIME(6) NOT NULL, `data` JSON NOT NULL)',
  ],
};
const COLUMNS: Record<IdentifierMode, string[]> = {
  full: ['key'],
  partial: ['key', 'at'],
  separated: ['key', 'granularity', 'at'],
};

const READ_SQL: Record<IdentifierMode, string> = {
  full: 'SELECT `key` AS id, CAST(`data` AS CHAR) AS data FROM `trifle_stats` WHERE `key` IN (?)',
  partial:
    'SELECT `at` AS id, CAST(`data` AS CHAR) AS data FROM `trifle_stats` WHERE `key` = ? AND `at` >= ? AND `at` <= ?',
  separated:
    'SELECT `at` AS id, CAST(`data` AS CHAR) AS data FROM `trifle_stats` WHERE `key` = ? AND `granularity` = ? AND `at` >= ? AND `at` <= ?',
};

/** `$."a.b"`: the whole dot path as one quoted member, as the libraries write it. */
export function memberPath(path: string): string {
  return `$.${JSON.stringify(path)}`;
}

/** The upsert of one bucket and its parameters (one placeholder per value; nothing spliced). */
export function upsertStatement(
  mode: IdentifierMode,
  identity: unknown[],
  b: BucketWrite,
): { sql: string; values: unknown[] } {
  const cols = COLUMNS[mode];
  const values: unknown[] = [
    ...identity,
    JSON.stringify(Object.fromEntries(b.ops.map((op) => [op.path, op.value]))),
  ];
  const sets: string[] = [];
  for (const op of b.ops) {
    const path = memberPath(op.path);
    if (op.set) {
      sets.push('?, ?');
      values.push(path, op.value);
    } else {
      sets.push('?, COALESCE(CAST(JSON_UNQUOTE(JSON_EXTRACT(`data`, ?)) AS DOUBLE), 0) + ?');
      values.push(path, path, op.value);
    }
  }
  const sql =
    `INSERT INTO \`trifle_stats\` (${cols.map((c) => `\`${c}\``).join(', ')}, \`data\`) VALUES (${cols.map(() => '?').join(', ')}, ?) ` +
    `ON DUPLICATE KEY UPDATE \`data\` = JSON_SET(COALESCE(\`data\`, JSON_OBJECT()), ${sets.join(', ')})`;
  return { sql, values };
}

function identity(mode: IdentifierMode, b: BucketWrite): unknown[] {
  if (mode === 'full') return [fullKey(b.key, b.granularity, b.startMs)];
  const at = new Date(Math.floor(b.startMs / 1000) * 1000);
  return mode === 'partial' ? [`${b.key}${SEPARATOR}${b.granularity}`, at] : [b.key, b.granularity, at];
}

/** deadlock, lock wait time-out: another writer held the rows; the write set is retried */
const RETRYABLE = new Set([1213, 1205]);
const NO_SUCH_TABLE = 1146;
/** bucket upserts sent in one round trip (well under the server's max_allowed_packet) */
const STATEMENTS_PER_TRIP = 100;

export function createMysqlStore(options: MysqlStoreOptions): WriteSetStore {
  const { mode } = options;
  const timeout = options.timeoutMs ?? OPERATION_TIMEOUT_MS;
  const splitter = new PathSplitter();
  let pool: mysql.Pool | null = null;
  let guard: WireGuard | null = null;

  /**
   * The pool, the client library loaded on first use (network/store.ts, lazyModule). It connects
   * to the source's relay (network/wire-guard.ts) with the parsed fields only: never a URL, whose options
   * (socketPath, ...) would reach sockets and files.
   */
  async function poolOf(): Promise<mysql.Pool> {
    const { createPool } = await loadMysql();
    if (pool) return pool;
    const target = connectionTarget('mysql', options);
    guard ??= guardFor('mysql', target, options, timeout);
    const relay = await guard.port();
    if (pool) return pool;
    pool = createPool({
      host: '127.0.0.1',
      port: relay,
      database: target.database,
      user: target.username,
      password: target.password ?? '',
      ssl: target.ssl ? { rejectUnauthorized: false, ...serverName(target.host) } : undefined,
      connectionLimit: POOL_SIZE,
      connectTimeout: timeout,
      idleTimeout: options.idleMs ?? IDLE_CLOSE_MS,
      maxIdle: 0,
      queueLimit: 1000,
      timezone: 'Z',
      enableKeepAlive: true,
      multipleStatements: true,
      // no LOAD DATA LOCAL INFILE: a hostile server may not ask for local files
      infileStreamFactory: undefined,
      flags: ['-LOCAL_FILES'],
    });
    return pool;
  }

  async function connection(): Promise<mysql.PoolConnection> {
    return withTimeout((await poolOf()).getConnection(), timeout, 'mysql connect');
  }

  async function writeOnce(buckets: BucketWrite[]): Promise<void> {
    const conn = await connection();
    let broken = false;
    try {
      // Statements travel in chunks of one round trip each, the first opening the transaction and
      // the last committing it (placeholders are still bound per statement).
      for (let i = 0; i < buckets.length; i += STATEMENTS_PER_TRIP) {
        const chunk = buckets
          .slice(i, i + STATEMENTS_PER_TRIP)
          .map((b) => upsertStatement(mode, identity(mode, b), b));
        const sql = chunk.map((st) => st.sql);
        if (i === 0) sql.unshift('START TRANSACTION');
        if (i + STATEMENTS_PER_TRIP >= buckets.length) sql.push('COMMIT');
        await conn.query({ sql: sql.join(';\n'), values: chunk.flatMap((st) => st.values), timeout });
      }
    } catch (err) {
      await conn.query({ sql: 'ROLLBACK', timeout }).catch(() => (broken = true));
      throw err;
    } finally {
      if (broken) conn.destroy();
      else conn.release();
    }
  }

  const sqlRead: SqlSeriesRead = {
    kind: 'mysql',
    mode,
    timeZone: options.timeZone,
    splitter,
    async query(values) {
      const [result] = await withTimeout(
        (await poolOf()).query({ sql: READ_SQL[mode], values, timeout }),
        timeout,
        'mysql read',
      );
      return result as SqlRow[];
    },
    missingTable: (err) => (err as { errno?: number }).errno === NO_SUCH_TABLE,
  };

  return {
    kind: 'mysql',

    async setup(): Promise<SetupResult> {
      guard?.reset();
      try {
        const conn = await connection();
        try {
          for (const statement of DDL[mode]) await conn.query({ sql: statement, timeout });
          const [rows] = await conn.query({
            sql: "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'trifle_stats' ORDER BY ordinal_position",
            timeout,
          });
          assertLayoutColumns(
            (rows as Array<{ name: string }>).map((r) => r.name),
            COLUMNS[mode],
            mode,
          );
        } finally {
          conn.release();
        }
      } catch (err) {
        throw setupFailure('mysql', err, options, guard ?? undefined);
      }
      return { status: 'ready', message: `trifle_stats ready (identifier mode ${mode})` };
    },

    async apply(writes: WriteSet): Promise<void> {
      const buckets = bucketWrites(writes);
      if (buckets.length === 0) return;
      const errno = (err: unknown) => (err as { errno?: number }).errno ?? 0;
      await writeWithRetries('mysql', () => writeOnce(buckets), {
        retryable: (err) => RETRYABLE.has(errno(err)),
        missingTable: (err) => errno(err) === NO_SUCH_TABLE,
      });
    },

    async read(ref: SeriesRef, starts: readonly number[]): Promise<string[]> {
      return readSqlSeries(sqlRead, ref, starts);
    },

    async close(): Promise<void> {
      const p = pool;
      pool = null;
      await p?.end().catch(() => undefined);
      await guard?.close();
      guard = null;
    },
  };
}
