// What both directions of `service migrate` share (migrate.ts, migrate-back.ts): the options, the
// PostgreSQL connection (BIGINTs as exact bigints), the projects read from `sources`, and the
// comparisons and lines printed.
import { rmSync } from 'node:fs';
import pg from 'pg';
import { OpsError } from './backup';
import type { Row, TableSummary } from './migrate-tables';
import type { MetricSummary } from './migrate-metrics';

export type Mismatches = string[];

/** A sum as printed: exact, or with 17 significant digits when the exact text is long. */
export function formatSum(sum: string): string {
  return sum.length <= 32 ? sum : Number(sum).toPrecision(17);
}

export const tableLine = (table: string, rows: number) => `table ${table}: ${rows} rows`;

/**
 * One line per granularity of a project, `project <id> <granularity>: <n> buckets, <n> leaves,
 * sum <decimal>`, from the source's summary; a granularity whose target differs is added to
 * `mismatches` with both exact sums (the comparison is exact whatever a line shows).
 */
export function summaryLines(
  projectId: string,
  source: MetricSummary,
  target: MetricSummary,
  mismatches: Mismatches,
): string[] {
  const names = [...new Set([...Object.keys(source), ...Object.keys(target)])].sort();
  if (names.length === 0) return [`project ${projectId}: no buckets`];
  return names.map((g) => {
    const a = source[g] ?? { buckets: 0, leaves: 0, sum: '0' };
    const b = target[g] ?? { buckets: 0, leaves: 0, sum: '0' };
    if (a.buckets !== b.buckets || a.leaves !== b.leaves || a.sum !== b.sum) {
      mismatches.push(
        `project ${projectId} ${g}: ${a.buckets} buckets, ${a.leaves} leaves, sum ${a.sum} copied as ${b.buckets} buckets, ${b.leaves} leaves, sum ${b.sum}`,
      );
    }
    return `project ${projectId} ${g}: ${a.buckets} buckets, ${a.leaves} leaves, sum ${formatSum(a.sum)}`;
  });
}

export interface MigrateOptions {
  nativeBinding?: unknown;
  /** one line of the report (stdout) */
  print: (line: string) => void;
  /** whether `secrets.key` is configured (else the data directory's secret.key is the key) */
  secretKeyConfigured?: boolean;
}

export const DATABASE = 'service.db';

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
export async function connect(url: string): Promise<pg.Client> {
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

export interface Project {
  id: string;
  name: string;
  timeZone: string;
  clusterId: string | null;
}

export function projectOf(row: Row): Project {
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

export const PROJECTS_SQL =
  "SELECT id, display_name, time_zone, config FROM sources WHERE type = 'project' ORDER BY id";

export function removeDatabaseFiles(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
}

export function compareTable(
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

export function compareProject(
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

export function finish(
  mismatches: Mismatches,
  tables: number,
  projects: number,
  options: MigrateOptions,
): void {
  if (mismatches.length > 0) {
    throw new OpsError(`the copy does not match its source, nothing was kept: ${mismatches.join('; ')}`);
  }
  options.print(
    `checked: ${tables} tables (rows and values) and ${projects} projects (buckets, leaves and sums per granularity) match`,
  );
}
