// Starts the real server on a temp data dir and port 0, plus a tiny HTTP client for tests.
//
// TEST_STORAGE=postgres (`npm run test:pg`) runs every server in cluster mode (SPEC 14,
// docs/cluster.md part 3): `storage.url` names a database of the local PostgreSQL made for the
// server's data directory (the same directory gets the same database back, so a restart finds its
// data) and dropped when the server stops. Tests of what is by nature one node's (the write log, a
// full disk, backups, SQLite sources, service.db's internals) skip there with `embeddedOnly`;
// `controlRows` reads the service's tables from whichever database holds them.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config';
import { startServer, type RunningServer, type StartOptions } from '../../src/server';
import { createLogger } from '../../src/lib/log';

/** Whether this run puts every test server in cluster mode (TEST_STORAGE=postgres). */
export const clusterMode = process.env.TEST_STORAGE === 'postgres';

/**
 * `{ skip }` for a test or suite about what only a single node has (the write log, service.db's
 * internals, SQLite database sources, backups, ...): skipped in cluster mode with the reason.
 */
export function embeddedOnly(reason: string): { skip: string | false } {
  return { skip: clusterMode ? `single-node only: ${reason}` : false };
}

const PG = {
  host: process.env.TEST_PG_HOST ?? '127.0.0.1',
  port: Number(process.env.TEST_PG_PORT ?? 5432),
  user: 'postgres',
};

/** The scratch database of a data directory: one name per directory, so a restart finds its data. */
export function clusterDatabaseOf(dataDir: string): string {
  const hash = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  return `svc_node_${hash}`;
}

async function onAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ ...PG, database: 'postgres' });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/** Creates the data directory's database unless it is there (a restart): its URL, and whether it is new. */
async function clusterDatabase(dataDir: string): Promise<{ url: string; created: boolean }> {
  const name = clusterDatabaseOf(dataDir);
  const created = await onAdmin(async (admin) => {
    try {
      await admin.query(`CREATE DATABASE ${name}`);
      return true;
    } catch (err) {
      if ((err as { code?: string }).code !== '42P04') throw err; // already there: a restart
      return false;
    }
  });
  return { url: `postgres://${PG.user}@${PG.host}:${PG.port}/${name}`, created };
}

/** Drops the data directory's database and the fixtures' made beside it (a test server's stop). */
export async function dropClusterDatabase(dataDir: string): Promise<void> {
  const name = clusterDatabaseOf(dataDir);
  await onAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname = $1 OR datname LIKE $1 || '\\_%'",
      [name],
    );
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
  });
}

/**
 * A database of the local PostgreSQL beside a cluster-mode server's own (`<its name>_<suffix>`,
 * dropped with it): the store of a PostgreSQL database source a test sets up. Resolves with its URL.
 */
export async function clusterFixtureDatabase(
  server: { deps: RunningServer['deps'] },
  suffix: string,
): Promise<string> {
  const own = new URL(server.deps.config.storage.url!).pathname.slice(1);
  const name = `${own}_${suffix.toLowerCase().replace(/[^a-z0-9]/g, '')}`;
  await onAdmin(async (admin) => {
    try {
      await admin.query(`CREATE DATABASE ${name}`);
    } catch (err) {
      if ((err as { code?: string }).code !== '42P04') throw err;
    }
  });
  return `postgres://${PG.user}@${PG.host}:${PG.port}/${name}`;
}

/**
 * The rows of a statement on the service's own tables, from service.db or, in cluster mode, from
 * PostgreSQL (`?` parameters become `$1`, `$2`, …): the same rows, BIGINT read as numbers.
 */
export async function controlRows<T = Record<string, any>>(
  server: Pick<RunningServer, 'deps' | 'store'>,
  sql: string,
  ...params: unknown[]
): Promise<T[]> {
  if (server.store) {
    let n = 0;
    return server.store.rows<T>(
      sql.replace(/\?/g, () => `$${++n}`),
      params,
    );
  }
  return server.deps.db.prepare(sql).all(...params) as T[];
}

/** The first row of controlRows, or undefined. */
export async function controlRow<T = Record<string, any>>(
  server: Pick<RunningServer, 'deps' | 'store'>,
  sql: string,
  ...params: unknown[]
): Promise<T | undefined> {
  return (await controlRows<T>(server, sql, ...params))[0];
}

/**
 * The bucket rows a project keeps: the embedded store's (metric_buckets), or in cluster mode its
 * schema's on the default metrics cluster, which is storage.url's database (0 before any is written).
 */
export async function storedBuckets(
  server: Pick<RunningServer, 'deps' | 'store'>,
  sourceId: string,
): Promise<number> {
  if (server.store) {
    const schema = `svc_project_${sourceId.replace(/-/g, '')}`;
    const found = await server.store.one<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [
      `"${schema}".trifle_stats`,
    ]);
    if (!found?.t) return 0;
    return (await server.store.one<{ n: number }>(`SELECT count(*) AS n FROM "${schema}".trifle_stats`))!.n;
  }
  const row = server.deps.db
    .prepare(
      'SELECT COUNT(*) AS n FROM metric_buckets WHERE series_id IN (SELECT id FROM metric_series WHERE source_id = ?)',
    )
    .get(sourceId) as { n: number };
  return row.n;
}

/** Runs a changing statement on the service's own tables (see controlRows); resolves with the rows changed. */
export async function controlRun(
  server: Pick<RunningServer, 'deps' | 'store'>,
  sql: string,
  ...params: unknown[]
): Promise<number> {
  if (server.store) {
    let n = 0;
    return server.store.run(
      sql.replace(/\?/g, () => `$${++n}`),
      params,
    );
  }
  return server.deps.db.prepare(sql).run(...params).changes;
}

export interface TestServer extends RunningServer {
  dataDir: string;
  /** close the server and delete its data dir */
  stop(): Promise<void>;
}

/** env-style overrides by SERVICE_* name, e.g. { SERVICE_PROJECTS_ENABLED: 'false' } */
export async function startTestServer(
  env: Record<string, string> = {},
  options: Omit<StartOptions, 'log'> = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
  // the data directory the server runs on names its database (a caller's directory: a restart)
  const keyDir = env.SERVICE_DATA_DIR ?? dataDir;
  const cluster = clusterMode && env.SERVICE_STORAGE_URL === undefined;
  const database = cluster ? await clusterDatabase(keyDir) : null;
  const storage = database ? { SERVICE_STORAGE_URL: database.url } : {};
  let server: RunningServer;
  try {
    const config = loadConfig({
      env: { SERVICE_DATA_DIR: dataDir, SERVICE_PORT: '0', SERVICE_LOG_LEVEL: 'silent', ...storage, ...env },
      cwd: dataDir,
    });
    server = await startServer(config, {
      ...options,
      log: createLogger(env.SERVICE_LOG_LEVEL === undefined ? 'silent' : config.log.level),
    });
  } catch (err) {
    // a start that fails (a bad setting the test sends, a port in use) leaves no database it made
    if (database?.created) await dropClusterDatabase(keyDir).catch(() => undefined);
    throw err;
  }
  return {
    ...server,
    dataDir,
    async stop() {
      await server.close();
      if (cluster) await dropClusterDatabase(keyDir);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
  text: string;
}

export interface RequestOptions {
  token?: string;
  sourceId?: string;
  headers?: Record<string, string>;
  /** raw body (string or bytes) sent as is; otherwise `body` is JSON-encoded */
  raw?: string | Uint8Array;
}

export async function request<T = any>(
  server: { url: string },
  method: string,
  urlPath: string,
  body?: unknown,
  opts: RequestOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.sourceId) headers['x-service-source-id'] = opts.sourceId;
  let payload: string | Uint8Array | undefined = opts.raw;
  if (payload === undefined && body !== undefined) {
    payload = JSON.stringify(body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(server.url + urlPath, { method, headers, body: payload });
  const text = await res.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed as T, headers: res.headers, text };
}

let counter = 0;
/** A unique email per call, so tests never collide. */
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}-${process.pid}-${counter}-${Date.now()}@example.com`;
}

export interface Agent {
  email: string;
  password: string;
  userToken: string;
  organizationId: string;
}

/** Signs up a user with an organization (the agent flow's first steps). */
export async function signupWithOrganization(server: { url: string }, orgName?: string): Promise<Agent> {
  const email = uniqueEmail();
  const password = 'correct horse battery';
  const res = await request(server, 'POST', '/api/v1/bootstrap/signup', {
    email,
    password,
    organization_name: orgName ?? `Org ${email}`,
  });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return {
    email,
    password,
    userToken: res.body.data.token.value,
    organizationId: res.body.data.organization.id,
  };
}

export interface ProjectAgent extends Agent {
  sourceId: string;
  sourceToken: string;
}

/** Signup -> project -> source token: ready to call the metrics endpoints. */
export async function createProjectWithToken(
  server: { url: string },
  project: Record<string, unknown> = {},
  token: Record<string, unknown> = {},
): Promise<ProjectAgent> {
  const agent = await signupWithOrganization(server);
  const p = await request(
    server,
    'POST',
    '/api/v1/bootstrap/projects',
    { name: 'Project', ...project },
    { token: agent.userToken },
  );
  if (p.status !== 201) throw new Error(`project failed: ${p.status} ${p.text}`);
  const sourceId = p.body.data.source.id as string;
  const t = await request(
    server,
    'POST',
    '/api/v1/bootstrap/source-tokens',
    { source_type: 'project', source_id: sourceId, ...token },
    { token: agent.userToken },
  );
  if (t.status !== 201) throw new Error(`source token failed: ${t.status} ${t.text}`);
  return { ...agent, sourceId, sourceToken: t.body.data.token.value };
}
