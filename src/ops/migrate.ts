// `service migrate --to postgres://…` (SPEC 14, docs/cluster.md part 2; the way back is
// migrate-back.ts). With the service stopped, a snapshot of service.db is taken the way `service
// backup` takes one (the write log folded in, the data directory left untouched), the target is
// checked to be empty, its schema is brought to this build's version under the migrations'
// advisory lock (storage/pg/migrations.ts), and then in ONE transaction every service table is
// copied, each project's buckets are written into its schema (the metrics-cluster layout), and both
// sides are compared: per table the row count and a digest of every value, per project and
// granularity the buckets, the leaves and the exact sum of the leaves (PostgreSQL computing its
// side). Any difference rolls the transaction back, so the target is left as it was.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { openDatabase, type Db } from '../storage/db';
import { migrate, SCHEMA_VERSION } from '../storage/migrations';
import { CLUSTER_ONLY_TABLES, migratePostgres } from '../storage/pg/migrations';
import { projectSchema } from '../drivers/network/clusters';
import { backupDatabase, OpsError } from './backup';
import { pidFilePath, runningService } from './pid-file';
import {
  assertSameTables,
  pgInserter,
  pgRows,
  pgTables,
  resetIdentities,
  RowDigest,
  sqliteRows,
  sqliteServiceTables,
  type Row,
} from './migrate-tables';
import {
  clusterSummary,
  copyProjectToCluster,
  embeddedSourceIds,
  setupProjectSchema,
} from './migrate-metrics';
import {
  compareProject,
  compareTable,
  connect,
  DATABASE,
  displayUrl,
  finish,
  projectOf,
  PROJECTS_SQL,
  removeDatabaseFiles,
  type MigrateOptions,
  type Mismatches,
} from './migrate-common';

export { migrateFromPostgres } from './migrate-back';
export type { MigrateOptions } from './migrate-common';

/**
 * Fails unless the target holds nothing but, possibly, this service's schema with no row in it
 * (a node of cluster mode started on it, or a migration that was rolled back).
 */
async function assertEmptyTarget(client: pg.ClientBase, url: string, tables: string[]): Promise<void> {
  const { rows } = await client.query<{ schema: string; name: string; kind: string; own: boolean }>(
    `SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS kind, n.nspname = current_schema() AS own
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname NOT IN ('information_schema') AND n.nspname NOT LIKE 'pg\\_%'
       AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S') ORDER BY 1, 2`,
  );
  const allowed = (r: { name: string; kind: string; own: boolean }) =>
    r.own &&
    (r.name === 'schema_migrations' ||
      (r.kind === 'r' && (tables.includes(r.name) || CLUSTER_ONLY_TABLES.includes(r.name))) ||
      (r.kind === 'S' && tables.some((t) => r.name.startsWith(`${t}_`))));
  const foreign = rows.filter((r) => !allowed(r)).map((r) => `${r.schema}.${r.name}`);
  const filled: string[] = [];
  for (const r of rows.filter((x) => allowed(x) && x.kind === 'r' && x.name !== 'schema_migrations')) {
    const found = await client.query(`SELECT 1 FROM "${r.name}" LIMIT 1`);
    if (found.rowCount! > 0) filled.push(r.name);
  }
  const held = [...foreign, ...filled];
  if (held.length > 0) {
    const shown = held.slice(0, 5).join(', ') + (held.length > 5 ? `, … (${held.length} in all)` : '');
    throw new OpsError(
      `${displayUrl(url)} is not empty (it holds ${shown}): migrate into a new, empty database`,
    );
  }
}

/** The service tables of this build's SQLite schema (an empty one, in memory). */
function schemaTables(nativeBinding: unknown): string[] {
  const db = openDatabase(':memory:', { nativeBinding });
  try {
    migrate(db);
    return sqliteServiceTables(db);
  } finally {
    db.close();
  }
}

function refuseRunning(dataDir: string): void {
  const running = runningService(dataDir);
  if (running) {
    throw new OpsError(
      `a service (pid ${running.pid}, ${running.url}) is running on ${dataDir}: stop it first ` +
        `(if none is, remove ${pidFilePath(dataDir)})`,
    );
  }
}

/** service.db of `dataDir` (every table, every project's buckets) into the empty database at `url`. */
export async function migrateToPostgres(
  dataDir: string,
  url: string,
  options: MigrateOptions,
): Promise<void> {
  const started = performance.now();
  refuseRunning(dataDir);
  if (!existsSync(path.join(dataDir, DATABASE))) {
    throw new OpsError(`no database at ${path.join(dataDir, DATABASE)} (wrong --data or --config?)`);
  }
  const snapshot = path.join(dataDir, `.migrate-${process.pid}.db`);
  removeDatabaseFiles(snapshot);
  let db: Db | null = null;
  const client = await connect(url);
  try {
    await assertEmptyTarget(client, url, schemaTables(options.nativeBinding));
    await backupDatabase(dataDir, snapshot, { nativeBinding: options.nativeBinding });
    db = openDatabase(snapshot, { nativeBinding: options.nativeBinding });
    migrate(db);
    const tables = sqliteServiceTables(db);
    const schema = await migratePostgres(url);
    assertSameTables(db, tables, await pgTables(client));
    options.print(
      `${path.join(dataDir, DATABASE)} (schema version ${SCHEMA_VERSION}) -> ${displayUrl(url)} (schema version ${schema.version})`,
    );
    await client.query('BEGIN');
    try {
      await copyTo(db, client, tables, options);
      await client.query('COMMIT');
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
    notes(db, dataDir, options);
    options.print(
      `migrated in ${((performance.now() - started) / 1000).toFixed(1)} s; ${dataDir} is unchanged`,
    );
  } finally {
    db?.close();
    await client.end().catch(() => undefined);
    removeDatabaseFiles(snapshot);
  }
}

async function copyTo(db: Db, client: pg.Client, tables: string[], options: MigrateOptions): Promise<void> {
  const mismatches: Mismatches = [];
  const pgSide = await pgTables(client);
  for (const table of tables) {
    const digest = new RowDigest();
    const columns = pgSide.get(table)!;
    const insert = pgInserter(client, table, columns);
    for (const row of sqliteRows(db, table, digest)) await insert.add(row);
    await insert.flush();
    const copied = new RowDigest();
    for await (const _ of pgRows(client, table, columns, copied)) void _;
    compareTable(table, digest.summary(), copied.summary(), mismatches, options);
  }
  await resetIdentities(client);
  const projects = db
    .prepare(PROJECTS_SQL)
    .raw(true)
    .all()
    .map((r) => projectOf(r as Row));
  const copiedIds = new Set<string>();
  for (const project of projects) {
    if (project.clusterId !== null) {
      options.print(`project ${project.id}: its metrics stay on metrics cluster ${project.clusterId}`);
      continue;
    }
    await setupProjectSchema(client, project.id, project.timeZone);
    const source = await copyProjectToCluster(db, client, project.id);
    const target = await clusterSummary(client, project.id);
    copiedIds.add(project.id);
    compareProject(project, projectSchema(project.id), source, target, mismatches, options);
  }
  const left = embeddedSourceIds(db).filter((id) => !copiedIds.has(id));
  if (left.length > 0)
    options.print(`not copied: buckets of ${left.length} sources that are not projects any more`);
  finish(mismatches, tables.length, copiedIds.size, options);
}

function notes(db: Db, dataDir: string, options: MigrateOptions): void {
  const encrypted = db
    .prepare(
      "SELECT (SELECT count(*) FROM sources WHERE config LIKE '%enc:v1:%') + (SELECT count(*) FROM channels WHERE secrets LIKE '%enc:v1:%')",
    )
    .pluck()
    .get() as number;
  const sqliteSources = db
    .prepare("SELECT count(*) FROM sources WHERE type = 'database' AND driver = 'sqlite'")
    .pluck()
    .get() as number;
  if (sqliteSources > 0) {
    options.print(
      `note: ${sqliteSources} SQLite database sources were copied as configuration only: their files are not copied, and cluster mode refuses SQLite sources`,
    );
  }
  if (encrypted === 0) return;
  const key = options.secretKeyConfigured
    ? 'the configured secrets.key'
    : `the key in ${path.join(dataDir, 'secret.key')}`;
  options.print(
    `note: ${encrypted} sources and channels hold secrets encrypted with ${key}; they were copied as stored, so every node needs that key as secrets.key (SERVICE_SECRET_KEY)`,
  );
}
