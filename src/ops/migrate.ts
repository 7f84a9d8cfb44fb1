// `service migrate --to postgres://…` and `service migrate --from postgres://… --to DIR` (SPEC 14,
// docs/cluster.md "Moving a data directory to PostgreSQL and back").
//
// To PostgreSQL: with the service stopped, a snapshot of service.db is taken the way `service
// backup` takes one (the write log folded in, the data directory left untouched), the target is
// checked to be empty, its schema is brought to this build's version under the migrations'
// advisory lock (storage/pg/migrations.ts), and then in ONE transaction every service table is
// copied, each project's buckets are written into its schema (the metrics-cluster layout), and both
// sides are compared: per table the row count and a digest of every value, per project and
// granularity the buckets, the leaves and the exact sum of the leaves (PostgreSQL computing its
// side). Any difference rolls the transaction back, so the target is left as it was.
//
// Back: the database's tables and each project's schema are read in one read-only snapshot into a
// new service.db written beside its final name in an empty directory, compared the same way, and
// renamed into place only when everything matches.
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Db } from '../storage/db';
import { securePrivateDatabase, securePrivateDirectory } from '../storage/file-modes';
import { migrate, SCHEMA_VERSION } from '../storage/migrations';
import { migratePostgres, pgSchemaVersion, PG_SCHEMA_VERSION } from '../storage/pg/migrations';
import { backupDatabase, OpsError } from './backup';
import { pidFilePath, runningService } from './pid-file';
import {
  assertSameTables,
  pgInserter,
  pgRows,
  pgTables,
  resetIdentities,
  RowDigest,
  sqliteInserter,
  sqliteRows,
  sqliteServiceTables,
  type Row,
  type TableSummary,
} from './migrate-tables';
import {
  clusterSummary,
  copyProjectFromCluster,
  copyProjectToCluster,
  embeddedSourceIds,
  embeddedSummary,
  setupProjectSchema,
  type MetricSummary,
} from './migrate-metrics';
import { projectSchema } from '../drivers/network/clusters';
import { summaryLines, tableLine, type Mismatches } from './migrate-report';

export interface MigrateOptions {
  nativeBinding?: unknown;
  /** one line of the report (stdout) */
  print: (line: string) => void;
  /** whether `secrets.key` is configured (else the data directory's secret.key is the key) */
  secretKeyConfigured?: boolean;
}

const DATABASE = 'service.db';

/** The URL without its password, for messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the given URL';
  }
}

/** A connection whose BIGINTs read as exact bigints (pg reads them as text otherwise). */
async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: url,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? (text: string) => BigInt(text) : pg.types.getTypeParser(oid, format)) as never,
    },
  });
  client.on('error', () => undefined); // the query in flight fails with it
  try {
    await client.connect();
  } catch (err) {
    throw new OpsError(`cannot connect to ${displayUrl(url)}: ${(err as Error).message}`);
  }
  return client;
}

interface Project {
  id: string;
  name: string;
  timeZone: string;
  clusterId: string | null;
}

function projectOf(row: Row): Project {
  const [id, name, timeZone, config] = row as [string, string, string, string];
  let clusterId: string | null = null;
  try {
    const parsed = JSON.parse(config) as { cluster_id?: unknown };
    if (typeof parsed.cluster_id === 'string') clusterId = parsed.cluster_id;
  } catch {
    // a config that is not JSON names no cluster
  }
  return { id, name, timeZone, clusterId };
}

const PROJECTS_SQL =
  "SELECT id, display_name, time_zone, config FROM sources WHERE type = 'project' ORDER BY id";

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
      (r.kind === 'r' && tables.includes(r.name)) ||
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

function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
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

function compareTable(
  table: string,
  source: TableSummary,
  target: TableSummary,
  mismatches: Mismatches,
  options: MigrateOptions,
): void {
  options.print(tableLine(table, source.rows));
  if (source.rows !== target.rows)
    mismatches.push(`table ${table}: ${source.rows} rows, ${target.rows} after copying`);
  else if (source.digest !== target.digest) mismatches.push(`table ${table}: the copied values differ`);
}

function compareProject(
  project: Project,
  where: string,
  source: MetricSummary,
  target: MetricSummary,
  mismatches: Mismatches,
  options: MigrateOptions,
): void {
  options.print(`project ${project.id} ${JSON.stringify(project.name)} -> ${where}`);
  for (const line of summaryLines(project.id, source, target, mismatches)) options.print(line);
}

function finish(mismatches: Mismatches, tables: number, projects: number, options: MigrateOptions): void {
  if (mismatches.length > 0) {
    throw new OpsError(`the copy does not match its source, nothing was kept: ${mismatches.join('; ')}`);
  }
  options.print(
    `checked: ${tables} tables (rows and values) and ${projects} projects (buckets, leaves and sums per granularity) match`,
  );
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

/** The database at `url` (tables and the projects' schemas) into a new data directory `dir`. */
export async function migrateFromPostgres(url: string, dir: string, options: MigrateOptions): Promise<void> {
  const started = performance.now();
  if (existsSync(dir) && readdirSync(dir).length > 0) {
    throw new OpsError(`${dir} is not empty: migrate into a new or empty directory`);
  }
  const client = await connect(url);
  let db: Db | null = null;
  const staging = path.join(dir, `${DATABASE}.migrating`);
  let done = false;
  try {
    const version = await pgSchemaVersion(client);
    if (version === 0) throw new OpsError(`${displayUrl(url)} holds no schema of this service`);
    if (version !== PG_SCHEMA_VERSION) {
      throw new OpsError(
        `${displayUrl(url)} has schema version ${version}, this build ${PG_SCHEMA_VERSION}: use the service of that version`,
      );
    }
    securePrivateDirectory(dir);
    securePrivateDatabase(staging);
    db = openDatabase(staging, { nativeBinding: options.nativeBinding });
    migrate(db);
    const tables = sqliteServiceTables(db);
    assertSameTables(db, tables, await pgTables(client));
    options.print(
      `${displayUrl(url)} (schema version ${version}) -> ${path.join(dir, DATABASE)} (schema version ${SCHEMA_VERSION})`,
    );
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await copyFrom(client, db, tables, options);
    await client.query('COMMIT');
    db.close();
    db = null;
    renameSync(staging, path.join(dir, DATABASE));
    done = true;
    options.print(
      `migrated in ${((performance.now() - started) / 1000).toFixed(1)} s; ${displayUrl(url)} is unchanged. ` +
        'The copied secrets need the key they were encrypted with: keep secrets.key configured, or put that key in secret.key of the directory',
    );
  } finally {
    db?.close();
    await client.end().catch(() => undefined);
    if (!done) removeDatabaseFiles(staging);
  }
}

async function copyFrom(client: pg.Client, db: Db, tables: string[], options: MigrateOptions): Promise<void> {
  const mismatches: Mismatches = [];
  const pgSide = await pgTables(client);
  for (const table of tables) {
    const columns = pgSide.get(table)!;
    const digest = new RowDigest();
    const write = sqliteInserter(db, table, columns);
    let batch: Row[] = [];
    for await (const row of pgRows(client, table, columns, digest)) {
      batch.push(row);
      if (batch.length >= 1_000) {
        write(batch);
        batch = [];
      }
    }
    write(batch);
    const copied = new RowDigest();
    for (const _ of sqliteRows(db, table, copied)) void _;
    compareTable(table, digest.summary(), copied.summary(), mismatches, options);
  }
  const projects = (await client.query({ text: PROJECTS_SQL, rowMode: 'array' })).rows.map((r) =>
    projectOf(r as Row),
  );
  let copied = 0;
  for (const project of projects) {
    if (project.clusterId !== null) {
      options.print(`project ${project.id}: its metrics stay on metrics cluster ${project.clusterId}`);
      continue;
    }
    const source = await copyProjectFromCluster(client, db, project.id);
    const target = embeddedSummary(db, project.id);
    copied += 1;
    compareProject(project, 'service.db', source, target, mismatches, options);
  }
  finish(mismatches, tables.length, copied, options);
}
