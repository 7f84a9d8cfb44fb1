// `service migrate --from postgres://… --to DIR` (docs/cluster.md part 2): the database's tables
// and each project's schema are read in one read-only snapshot into a new service.db written
// beside its final name in an empty directory, compared with what was read (per table the row
// count and a digest of every value, per project and granularity the buckets, leaves and exact
// sums), and renamed into place only when everything matches.
import { existsSync, readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import { openDatabase, type Db } from '../storage/db';
import { securePrivateDatabase, securePrivateDirectory } from '../storage/file-modes';
import { migrate, SCHEMA_VERSION } from '../storage/migrations';
import { pgSchemaVersion, PG_SCHEMA_VERSION } from '../storage/pg/migrations';
import { OpsError } from './backup';
import {
  assertSameTables,
  pgRows,
  pgTables,
  RowDigest,
  sqliteInserter,
  sqliteRows,
  sqliteServiceTables,
  type Row,
} from './migrate-tables';
import { copyProjectFromCluster, embeddedSummary } from './migrate-metrics';
import { projectSchema } from '../drivers/network/clusters';
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
  const known = new Set(projects.map((p) => projectSchema(p.id)));
  const schemas = await client.query<{ name: string }>(
    "SELECT nspname AS name FROM pg_namespace WHERE nspname LIKE 'svc\\_project\\_%' ORDER BY 1",
  );
  const orphans = schemas.rows.filter((r) => !known.has(r.name)).map((r) => r.name);
  if (orphans.length > 0) {
    options.print(`not copied: ${orphans.length} project schemas of no project (${orphans.join(', ')})`);
  }
  finish(mismatches, tables.length, copied, options);
}
