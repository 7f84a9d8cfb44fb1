// Helpers for the sqlite source tests: a server that can be restarted on the same data dir, a
// database source with a source token, and metric calls against it.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { startServer, type RunningServer } from '../../src/server';
import { createLogger } from '../../src/lib/log';
import { request, type Agent } from './server';
import { DATABASES, setupPath } from './databases';

export interface Restartable extends RunningServer {
  dataDir: string;
  env: Record<string, string>;
  root: string;
}

export async function startAt(dataDir: string, env: Record<string, string> = {}): Promise<Restartable> {
  const config = loadConfig({
    env: { SERVICE_DATA_DIR: dataDir, SERVICE_PORT: '0', SERVICE_LOG_LEVEL: 'silent', ...env },
    cwd: dataDir,
  });
  const server = await startServer(config, { log: createLogger('silent') });
  return { ...server, dataDir, env, root: config.sources.sqliteRoot };
}

export async function startFresh(env: Record<string, string> = {}): Promise<Restartable> {
  return startAt(mkdtempSync(path.join(os.tmpdir(), 'svc-sqlite-')), env);
}

export async function restart(server: Restartable): Promise<Restartable> {
  await server.close();
  return startAt(server.dataDir, server.env);
}

export async function stopAndRemove(server: Restartable): Promise<void> {
  await server.close();
  rmSync(server.dataDir, { recursive: true, force: true });
}

export interface DbSource {
  id: string;
  token: string;
}

/** Creates a sqlite source (body fields merged), optionally sets it up, and mints a read+write token. */
export async function sqliteSource(
  server: { url: string },
  agent: Agent,
  body: Record<string, unknown>,
  setup = true,
): Promise<DbSource> {
  const created = await request(
    server,
    'POST',
    DATABASES,
    { display_name: 'S', driver: 'sqlite', granularities: ['1h'], ...body },
    { token: agent.userToken },
  );
  if (created.status !== 201) throw new Error(`create failed: ${created.status} ${created.text}`);
  const id = created.body.data.source.id as string;
  if (setup) {
    const res = await request(server, 'POST', setupPath(id), undefined, { token: agent.userToken });
    if (res.status !== 200) throw new Error(`setup failed: ${res.status} ${res.text}`);
  }
  const t = await request(
    server,
    'POST',
    '/api/v1/bootstrap/source-tokens',
    { source_type: 'database', source_id: id },
    { token: agent.userToken },
  );
  if (t.status !== 201) throw new Error(`token failed: ${t.status} ${t.text}`);
  return { id, token: t.body.data.token.value };
}

export const AT = '2025-03-04T10:00:00Z';

export function track(
  server: { url: string },
  src: DbSource,
  values: Record<string, unknown>,
  key = 'orders',
  at = AT,
) {
  return request(
    server,
    'POST',
    '/api/v1/metrics',
    { key, at, values },
    { token: src.token, sourceId: src.id },
  );
}

export function readHour(server: { url: string }, src: DbSource, key = 'orders', at = AT) {
  const q = new URLSearchParams({ key, from: at, to: at, granularity: '1h' });
  return request(server, 'GET', `/api/v1/metrics?${q}`, undefined, { token: src.token, sourceId: src.id });
}

export async function healthy(server: { url: string }): Promise<boolean> {
  const res = await request(server, 'GET', '/api/v1/health');
  return res.status === 200 && res.body.status === 'ok';
}
