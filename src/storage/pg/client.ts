// The service's own tables on PostgreSQL (cluster mode, `storage.url`, docs/cluster.md part 3):
// one pool per node and the few calls every PostgreSQL repository (src/storage/pg/*.ts) is written
// with. Statements are PostgreSQL's own (`$1` parameters), prepared by name on each connection.
//
// - BIGINT (epoch milliseconds, counters, ids) is read as a JavaScript number, as better-sqlite3
//   reads SQLite's integers, so the rows the repositories return are the SQLite ones' shapes. Only
//   this pool parses them so: the database sources' pools keep node-postgres' defaults.
// - A lost connection, a database that is down or shutting down, too many connections, a
//   statement cancelled by `statement_timeout`: `AppError` unavailable (503, Retry-After), never a
//   500 and never PostgreSQL's message. What PostgreSQL refuses in a value the client sent and
//   SQLite stores (a NUL character in text, an integer past BIGINT's range, a fraction where an
//   integer goes): a 4xx `AppError` (clientFault), so that no request can cause a 500 this way.
//   Every other error (a unique violation, ...) is the repository's to handle.
// - `tx` runs a function in one transaction on one connection and runs it again, whole, after a
//   serialization failure or a deadlock (40001, 40P01), as the metric drivers do.
// - `changes()`: the node's feed of other nodes' committed changes (./changes.ts), on one more
//   connection of its own, opened when the first cache subscribes and closed with the store.
import pg from 'pg';
import { AppError } from '../../errors';
import { createChangeFeed, type ChangeFeed, type ChangeFeedOptions } from './changes';

/** Seconds a client is told to wait when the database cannot be reached. */
export const DATABASE_RETRY_AFTER_S = 5;
/** Connections each node opens to `storage.url` for the service's own tables. */
export const CONTROL_POOL_SIZE = 10;
/** Attempts of a transaction that meets a serialization failure or a deadlock. */
const TX_ATTEMPTS = 5;
const RETRYABLE = new Set(['40001', '40P01']);

/** What a statement runs on: the pool (one statement, autocommit) or a transaction's connection. */
export interface Sql {
  /** every row */
  rows<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T[]>;
  /** the first row, or undefined */
  one<T = Record<string, unknown>>(text: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** the number of rows the statement changed (or returned) */
  run(text: string, params?: readonly unknown[]): Promise<number>;
}

export interface PgStore extends Sql {
  readonly pool: pg.Pool;
  /**
   * `fn` inside BEGIN … COMMIT on one connection (READ COMMITTED; take `FOR UPDATE` on the rows a
   * check reads). Rolled back when `fn` throws; run again, whole, on 40001 / 40P01. `fn` must not
   * have effects outside the database, since it may run more than once.
   */
  tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T>;
  /**
   * The feed of committed changes the caches over this database subscribe to (created on the
   * first call; its connection opens with the first subscriber); null when made with `listen: false`.
   */
  changes(): ChangeFeed | null;
  /** closes the pool and the feed's connection */
  close(): Promise<void>;
}

const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (text: string) => Number(text);
    return pg.types.getTypeParser(oid, format as 'text');
  },
} as unknown as pg.CustomTypesConfig;

/** A failure of the connection or of the server rather than of the statement. */
export function unreachable(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (code.startsWith('08')) return true; // connection exceptions
    if (code === '57P01' || code === '57P02' || code === '57P03') return true; // shutdown, cannot connect now
    if (code === '53300' || code === '53400') return true; // too many connections
    if (code === '57014') return true; // statement_timeout
    if (/^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH|AI_AGAIN)$/.test(code)) return true;
    if (code === 'ENOTFOUND') return true;
  }
  const message = (err as Error | null)?.message ?? '';
  return /Connection terminated|connection timeout|Client has encountered a connection error|timeout exceeded when trying to connect/i.test(
    message,
  );
}

export function databaseUnavailable(cause: unknown): AppError {
  return new AppError('unavailable', 'The database is unavailable, retry later', {
    retryAfter: DATABASE_RETRY_AFTER_S,
    cause,
  });
}

/** A unique or primary-key violation (23505), optionally of the named constraint. */
export function uniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** The NUL character: SQLite stores it in text, PostgreSQL refuses it (22021, 22P05 in jsonb). */
export const NUL_IN_TEXT = 'Text must not contain the NUL character (\\u0000)';
/** A number PostgreSQL's BIGINT (or a numeric conversion) cannot hold. */
export const NUMBER_OUT_OF_RANGE = `A number is out of range (integers are at most ${2n ** 63n - 1n})`;

/**
 * The client's fault, as PostgreSQL reports it: a value SQLite would have stored that PostgreSQL
 * refuses. 400 for a NUL character (the field is not known here), 422 for a number out of range,
 * not an integer, or text too long; null for every other error. The one place these are mapped.
 */
export function clientFault(err: unknown): AppError | null {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case '22021': // character_not_in_repertoire: a NUL byte in text
    case '22P05': // untranslatable_character: \u0000 in jsonb
      return new AppError('bad_request', NUL_IN_TEXT, { cause: err });
    case '22003': // numeric_value_out_of_range
      return new AppError('validation', NUMBER_OUT_OF_RANGE, { cause: err });
    case '22P02': // invalid_text_representation: e.g. 1.5 for a BIGINT column
      return new AppError('validation', 'A value is not of the expected type (an integer?)', { cause: err });
    case '22001': // string_data_right_truncation
      return new AppError('validation', 'A value is too long', { cause: err });
    default:
      return null;
  }
}

const guard = (err: unknown): never => {
  if (unreachable(err)) throw databaseUnavailable(err);
  throw clientFault(err) ?? err;
};

function sqlOn(target: { query: pg.Pool['query'] }): Sql {
  const query = async (text: string, params: readonly unknown[] = []) => {
    try {
      return await target.query({ text, values: params as unknown[] });
    } catch (err) {
      return guard(err);
    }
  };
  return {
    async rows<T>(text: string, params?: readonly unknown[]) {
      return (await query(text, params)).rows as T[];
    },
    async one<T>(text: string, params?: readonly unknown[]) {
      return (await query(text, params)).rows[0] as T | undefined;
    },
    async run(text: string, params?: readonly unknown[]) {
      return (await query(text, params)).rowCount ?? 0;
    },
  };
}

export interface PgStoreOptions {
  /** connections at most (CONTROL_POOL_SIZE) */
  max?: number;
  /** statement_timeout of every connection, ms (network.timeout_ms) */
  statementTimeoutMs?: number;
  /** ms to wait for a connection before 503 */
  connectTimeoutMs?: number;
  /** `application_name` PostgreSQL shows in pg_stat_activity (the feed's: this + ' changes') */
  applicationName?: string;
  /**
   * false: no feed of changes (`changes()` answers null), the caches rely on their time-to-live
   * alone. Default true; an object: true with these back-off and ping settings.
   */
  listen?: boolean | ChangeFeedOptions;
}

export function createPgStore(url: string, options: PgStoreOptions = {}): PgStore {
  const applicationName = options.applicationName ?? 'trifle-service';
  const connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? CONTROL_POOL_SIZE,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs ?? 5_000,
    application_name: applicationName,
    types,
  });
  // An idle connection that breaks is dropped by the pool; the next query opens another.
  pool.on('error', () => undefined);
  const onPool = sqlOn(pool);

  async function tx<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (err) {
        return guard(err);
      }
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn(sqlOn(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        const code = (err as { code?: unknown } | null)?.code;
        if (typeof code === 'string' && RETRYABLE.has(code) && attempt < TX_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8 * attempt));
          continue;
        }
        if (err instanceof AppError) throw err;
        return guard(err);
      } finally {
        client.release(broken);
      }
    }
  }

  let feed: ChangeFeed | null = null;
  let closed = false;
  const changes = (): ChangeFeed | null => {
    if (options.listen === false || closed) return null;
    feed ??= createChangeFeed(
      () =>
        new pg.Client({
          connectionString: url,
          connectionTimeoutMillis: connectTimeoutMs,
          application_name: `${applicationName} changes`.slice(0, 63),
          keepAlive: true,
        }),
      typeof options.listen === 'object' ? options.listen : {},
    );
    return feed;
  };

  return {
    ...onPool,
    pool,
    tx,
    changes,
    async close() {
      closed = true;
      await Promise.all([feed?.close(), pool.end()]);
    },
  };
}
