// Versioned schema migrations of the service's own tables in PostgreSQL (cluster mode,
// docs/cluster.md "Migrations under an advisory lock"), the counterpart of storage/migrations.ts
// (SQLite's PRAGMA user_version). The versions applied are rows of `schema_migrations`. A node
// takes pg_advisory_lock(MIGRATION_LOCK) on a connection of its own (not a pool's, so a
// transaction-pooling PgBouncer is not in the way), applies each missing version in its own
// transaction, records it, and unlocks: nodes that start together wait on the lock and find
// nothing left to do. Never edit a migration that has shipped: append one, and append the
// SQLite twin of the same change to storage/migrations.ts (test/http/migrate-postgres.test.ts
// compares the two schemas column by column).
import pg from 'pg';
import { SERVICE_SCHEMA } from './schema/001_service';
import { CLUSTER_SCHEMA } from './schema/002_cluster';

const MIGRATIONS: readonly string[] = [
  SERVICE_SCHEMA, // = SQLite's schema version 14
  CLUSTER_SCHEMA, // cluster mode's own tables (no SQLite twin)
];

/** The PostgreSQL schema version this build writes. */
export const PG_SCHEMA_VERSION = MIGRATIONS.length;

/** The SQLite schema version (storage/migrations.ts) whose tables PG_SCHEMA_VERSION holds. */
export const SQLITE_VERSION_OF_PG: Readonly<Record<number, number>> = { 1: 14, 2: 14 };

/** Tables only cluster mode has (a single node keeps them in memory): not in service.db, not copied. */
export const CLUSTER_ONLY_TABLES: readonly string[] = ['login_throttle', 'node_leases'];

/** The advisory lock key of the migrations: "TRIFLSVC" in ASCII, one constant for every node. */
export const MIGRATION_LOCK = '6075999413553288771';

/**
 * Tables of service.db that stay in SQLite's embedded metric store: in cluster mode a project's
 * buckets are rows of its schema on a metrics cluster instead (drivers/network/clusters.ts).
 */
export const EMBEDDED_STORE_TABLES: readonly string[] = [
  'metric_series',
  'metric_buckets',
  'metric_key_counts',
  'metric_fold_state',
];

export interface PgMigrationResult {
  /** the version the database is at now */
  version: number;
  /** the versions this call applied (none when another node had applied them) */
  applied: number[];
}

const CREATE_VERSIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version BIGINT PRIMARY KEY,
  applied_at BIGINT NOT NULL
)`;

/** The highest version recorded in `schema_migrations`, 0 when the table is missing or empty. */
export async function pgSchemaVersion(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ v: string | null }>(
    "SELECT CASE WHEN to_regclass('schema_migrations') IS NULL THEN NULL ELSE 1 END AS v",
  );
  if (rows[0]!.v === null) return 0;
  const max = await client.query<{ v: string | null }>(
    'SELECT max(version)::text AS v FROM schema_migrations',
  );
  return Number(max.rows[0]!.v ?? 0);
}

/**
 * Brings the database at `url` to this build's version (or `upTo`) under the advisory lock, on a
 * connection of its own that it closes. Refuses a database newer than this build.
 */
export async function migratePostgres(
  url: string,
  options: { upTo?: number; connect?: pg.ClientConfig } = {},
): Promise<PgMigrationResult> {
  const client = new pg.Client({ connectionString: url, ...options.connect });
  client.on('error', () => undefined); // a broken connection fails the query that uses it
  await client.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      return await applyMissing(client, Math.min(options.upTo ?? MIGRATIONS.length, MIGRATIONS.length));
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    }
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function applyMissing(client: pg.Client, upTo: number): Promise<PgMigrationResult> {
  await client.query(CREATE_VERSIONS);
  const current = await pgSchemaVersion(client);
  if (current > MIGRATIONS.length) {
    throw new Error(
      `database schema version ${current} is newer than this build (${MIGRATIONS.length}): run a newer service`,
    );
  }
  const applied: number[] = [];
  for (let v = current; v < upTo; v++) {
    await client.query('BEGIN');
    try {
      await client.query(MIGRATIONS[v]!);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [
        v + 1,
        Date.now(),
      ]);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    applied.push(v + 1);
  }
  return { version: Math.max(current, upTo), applied };
}
