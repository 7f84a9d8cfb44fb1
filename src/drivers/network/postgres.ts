// A database source in PostgreSQL, in the Trifle::Stats 2.x layout (the Ruby, Elixir and Go
// postgres drivers): table trifle_stats with `data JSONB` of flat dot paths, per identifier mode
//   full       key VARCHAR(255) PRIMARY KEY              key = "<key>::<granularity>::<unix s>"
//   partial    (key, at TIMESTAMPTZ) primary key         key = "<key>::<granularity>"
//   separated  (key, granularity, at) primary key, plus trifle_stats_ping
//
// Each bucket is one atomic INSERT ... ON CONFLICT DO UPDATE that merges the bucket's leaves into
// the row's top level (`data || {...}`), inside one transaction per write set. Leaf names are bound
// as parameters, never spliced into a text-array path, so a name with a comma stays one member
// (the libraries' '{a,b}' path splits it). Rows are locked in the libraries' order (bucketWrites
// in network/store.ts), so the service and the libraries writing at once do not deadlock; a
// deadlock or serialization failure that still happens is retried after a short back-off.
import type pg from 'pg';
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

const loadPg = lazyModule(async () => (await import('pg')).default);

export interface PostgresStoreOptions extends NetworkSettings {
  mode: IdentifierMode;
  timeZone: string;
  /**
   * A schema of its own for the layout (a project on a metrics cluster, clusters.ts): created by
   * setup, and every statement names its tables in it. A plain lower-case identifier. Without it
   * the tables are those of the connection's search_path (a database source).
   */
  schema?: string;
  /** a pool shared with other stores (a metrics cluster's), which close() leaves open */
  pool?: GuardedPool;
}

/** A pg pool that connects through the relay of its target (network/wire-guard.ts). */
export interface GuardedPool {
  get(): Promise<pg.Pool>;
  readonly guard: WireGuard | null;
  close(): Promise<void>;
}

/**
 * The pool, the client library loaded on first use (see lazyModule). It connects to the
 * target's relay (network/wire-guard.ts) with the parsed fields only: never a connection string,
 * whose options (host=/path, sslrootcert, ...) would reach sockets and files.
 */
export function createGuardedPool(options: NetworkSettings, max = POOL_SIZE): GuardedPool {
  const timeout = options.timeoutMs ?? OPERATION_TIMEOUT_MS;
  let pool: pg.Pool | null = null;
  let guard: WireGuard | null = null;
  return {
    get guard() {
      return guard;
    },
    async get() {
      const { Pool } = await loadPg();
      if (pool) return pool;
      const target = connectionTarget('postgres', options);
      guard ??= guardFor('postgres', target, options, timeout);
      const relay = await guard.port();
      if (pool) return pool;
      const p = new Pool({
        host: '127.0.0.1',
        port: relay,
        database: target.database,
        user: target.username,
        password: target.password ?? '',
        ssl: target.ssl ? { rejectUnauthorized: false, ...serverName(target.host) } : false,
        max,
        connectionTimeoutMillis: timeout,
        idleTimeoutMillis: options.idleMs ?? IDLE_CLOSE_MS,
        query_timeout: timeout,
        statement_timeout: timeout,
        allowExitOnIdle: true,
      });
      // An idle connection that breaks must not crash the process; the next call reconnects.
      p.on('error', () => undefined);
      p.on('connect', (client) => client.on('error', () => undefined));
      return (pool = p);
    },
    async close() {
      const p = pool;
      pool = null;
      await p?.end().catch(() => undefined);
      await guard?.close();
      guard = null;
    },
  };
}

/** a schema name that needs no quoting, short enough for the statement names built on it */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,55}$/;

const JSONB = "JSONB NOT NULL DEFAULT '{}'::jsonb";
/** The layout's statements; `q` qualifies a table name with the store's schema, if any. */
function ddl(mode: IdentifierMode, q: (table: string) => string): string[] {
  if (mode === 'full')
    return [`CREATE TABLE IF NOT EXISTS ${q('trifle_stats')} (key VARCHAR(255) PRIMARY KEY, data ${JSONB})`];
  if (mode === 'partial')
    return [
      `CREATE TABLE IF NOT EXISTS ${q('trifle_stats')} (key VARCHAR(255) NOT NULL, at TIMESTAMPTZ NOT NULL, data ${JSONB}, PRIMARY KEY (key, at))`,
    ];
  return [
    `CREATE TABLE IF NOT EXISTS ${q('trifle_stats')} (key VARCHAR(255) NOT NULL, granularity VARCHAR(255) NOT NULL, at TIMESTAMPTZ NOT NULL, data ${JSONB}, PRIMARY KEY (key, granularity, at))`,
    `CREATE TABLE IF NOT EXISTS ${q('trifle_stats_ping')} (key VARCHAR(255) PRIMARY KEY, at TIMESTAMPTZ NOT NULL, data ${JSONB})`,
  ];
}
const COLUMNS: Record<IdentifierMode, string[]> = {
  full: ['key'],
  partial: ['key', 'at'],
  separated: ['key', 'granularity', 'at'],
};

/** Merges the leaves ($n paths, values, set flags) into the row: a set replaces, a track adds. */
function upsertSql(mode: IdentifierMode, table: string): string {
  const cols = COLUMNS[mode];
  const n = cols.length;
  const params = cols.map((_, i) => `$${i + 1}`).join(', ');
  return (
    `INSERT INTO ${table} AS t (${cols.join(', ')}, data) VALUES (${params}, $${n + 1}::jsonb) ` +
    `ON CONFLICT (${cols.join(', ')}) DO UPDATE SET data = COALESCE(t.data, '{}'::jsonb) || (` +
    'SELECT jsonb_object_agg(p.path, to_jsonb(CASE WHEN p.is_set THEN p.value ELSE p.value + ' +
    "CASE WHEN jsonb_typeof(t.data -> p.path) = 'number' THEN (t.data ->> p.path)::float8 ELSE 0 END END)) " +
    `FROM unnest($${n + 2}::text[], $${n + 3}::float8[], $${n + 4}::bool[]) AS p(path, value, is_set))`
  );
}

/**
 * The buckets of a write set that only track, in one statement: rows from a JSON array, each
 * member of the incoming data added to the stored one (saves a round trip per bucket).
 */
function addAllSql(mode: IdentifierMode, table: string): string {
  const cols = COLUMNS[mode];
  const types: Record<string, string> = { key: 'text', granularity: 'text', at: 'timestamptz' };
  return (
    `INSERT INTO ${table} AS t (${cols.join(', ')}, data) ` +
    `SELECT ${cols.map((c) => `r.${c}`).join(', ')}, r.data FROM jsonb_to_recordset($1::jsonb) AS r(${cols.map((c) => `${c} ${types[c]}`).join(', ')}, data jsonb) ` +
    `ON CONFLICT (${cols.join(', ')}) DO UPDATE SET data = COALESCE(t.data, '{}'::jsonb) || (` +
    'SELECT jsonb_object_agg(e.key, to_jsonb(e.value::text::float8 + ' +
    "CASE WHEN jsonb_typeof(t.data -> e.key) = 'number' THEN (t.data ->> e.key)::float8 ELSE 0 END)) " +
    'FROM jsonb_each(EXCLUDED.data) AS e)'
  );
}

function readSql(mode: IdentifierMode, table: string): string {
  if (mode === 'full') return `SELECT key AS id, data FROM ${table} WHERE key = ANY($1::text[])`;
  if (mode === 'partial')
    return `SELECT at AS id, data FROM ${table} WHERE key = $1 AND at >= $2 AND at <= $3`;
  return `SELECT at AS id, data FROM ${table} WHERE key = $1 AND granularity = $2 AND at >= $3 AND at <= $4`;
}

function identity(mode: IdentifierMode, b: BucketWrite): unknown[] {
  if (mode === 'full') return [fullKey(b.key, b.granularity, b.startMs)];
  const at = new Date(Math.floor(b.startMs / 1000) * 1000);
  return mode === 'partial' ? [`${b.key}${SEPARATOR}${b.granularity}`, at] : [b.key, b.granularity, at];
}

/**
 * Rows of one add-only statement at most. A commit may hold 20,000 points (tens of thousands of
 * rows): in one statement that is seconds of PostgreSQL CPU, near `network.timeout_ms`, which
 * applies per statement; a bounded statement stays far under it (docs/cluster.md, "Statement
 * time") and its JSON parameter small. Same transaction, same row order.
 */
export const ROWS_PER_STATEMENT = 2000;

const RETRYABLE = new Set(['40P01', '40001']);
const UNDEFINED_TABLE = '42P01';

export function createPostgresStore(options: PostgresStoreOptions): WriteSetStore {
  const { mode, schema } = options;
  if (schema !== undefined && !IDENTIFIER.test(schema)) throw new Error(`bad schema name ${schema}`);
  const q = (name: string) => (schema ? `"${schema}".${name}` : name);
  // Prepared statement names are per connection: a shared pool's stores need names of their own,
  // kept within PostgreSQL's 63-byte identifier length (pg warns past it; two schemas' names would
  // differ only past the 63rd byte if anything cut them there).
  const named = (name: string, short: string) => (schema ? `${short}_${mode[0]}_${schema}` : name);
  const splitter = new PathSplitter();
  const upsert = { name: named(`trifle_upsert_${mode}`, 'tu'), text: upsertSql(mode, q('trifle_stats')) };
  const addAll = { name: named(`trifle_add_all_${mode}`, 'ta'), text: addAllSql(mode, q('trifle_stats')) };
  const read = { name: named(`trifle_read_${mode}`, 'tr'), text: readSql(mode, q('trifle_stats')) };

  /** A track-only bucket as a row of the JSON array addAllSql reads. */
  function trackRow(b: BucketWrite): Record<string, unknown> {
    const row: Record<string, unknown> = {};
    identity(mode, b).forEach(
      (value, i) => (row[COLUMNS[mode][i]!] = value instanceof Date ? value.toISOString() : value),
    );
    row.data = Object.fromEntries(b.ops.map((op) => [op.path, op.value]));
    return row;
  }

  /**
   * The statements of a write set, in its lock order (bucketWrites): each run of consecutive
   * track-only buckets is one statement (rows are upserted in the array's order), a bucket with
   * an assert is a statement of its own, and an identity seen twice in a run (keys that spell
   * another's joined identity) starts a new run, since one statement may not update a row twice;
   * a run is cut at ROWS_PER_STATEMENT rows.
   */
  function statements(buckets: BucketWrite[]): Array<{ tracks: BucketWrite[] } | { upsert: BucketWrite }> {
    const out: Array<{ tracks: BucketWrite[] } | { upsert: BucketWrite }> = [];
    let run: BucketWrite[] = [];
    let seen = new Set<string>();
    const close = () => {
      if (run.length > 0) out.push({ tracks: run });
      run = [];
      seen = new Set();
    };
    for (const b of buckets) {
      if (b.ops.some((op) => op.set)) {
        close();
        out.push({ upsert: b });
        continue;
      }
      const id = JSON.stringify(identity(mode, b));
      if (seen.has(id) || run.length >= ROWS_PER_STATEMENT) close();
      run.push(b);
      seen.add(id);
    }
    close();
    return out;
  }
  const pools = options.pool ?? createGuardedPool(options);
  const poolOf = () => pools.get();

  async function writeOnce(buckets: BucketWrite[]): Promise<void> {
    const client = await (await poolOf()).connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      for (const st of statements(buckets)) {
        if ('tracks' in st) {
          await client.query({ ...addAll, values: [JSON.stringify(st.tracks.map(trackRow))] });
          continue;
        }
        const b = st.upsert;
        const initial = JSON.stringify(Object.fromEntries(b.ops.map((op) => [op.path, op.value])));
        await client.query({
          ...upsert,
          values: [
            ...identity(mode, b),
            initial,
            b.ops.map((op) => op.path),
            b.ops.map((op) => op.value),
            b.ops.map((op) => op.set),
          ],
        });
      }
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      client.release(broken);
    }
  }

  const sqlRead: SqlSeriesRead = {
    kind: 'postgres',
    mode,
    timeZone: options.timeZone,
    splitter,
    query: async (params) => (await (await poolOf()).query<SqlRow>({ ...read, values: params })).rows,
    missingTable: (err) => (err as { code?: string }).code === UNDEFINED_TABLE,
  };

  return {
    kind: 'postgres',

    async setup(): Promise<SetupResult> {
      pools.guard?.reset();
      try {
        const client = await (await poolOf()).connect();
        try {
          if (schema) await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
          for (const statement of ddl(mode, q)) await client.query(statement);
          const { rows } = await client.query<{ column_name: string }>(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = COALESCE($1, current_schema()) AND table_name = 'trifle_stats' ORDER BY ordinal_position",
            [schema ?? null],
          );
          assertLayoutColumns(
            rows.map((r) => r.column_name),
            COLUMNS[mode],
            mode,
          );
        } finally {
          client.release();
        }
      } catch (err) {
        throw setupFailure('postgres', err, options, pools.guard ?? undefined);
      }
      return { status: 'ready', message: `trifle_stats ready (identifier mode ${mode})` };
    },

    async apply(writes: WriteSet): Promise<void> {
      const buckets = bucketWrites(writes);
      if (buckets.length === 0) return;
      const code = (err: unknown) => (err as { code?: string }).code ?? '';
      await writeWithRetries('postgres', () => writeOnce(buckets), {
        retryable: (err) => RETRYABLE.has(code(err)),
        missingTable: (err) => code(err) === UNDEFINED_TABLE,
      });
    },

    async read(ref: SeriesRef, starts: readonly number[]): Promise<string[]> {
      return readSqlSeries(sqlRead, ref, starts);
    },

    async close(): Promise<void> {
      if (!options.pool) await pools.close(); // a shared pool is its owner's to close
    },
  };
}
