// Helpers for database-source tests: SQLite files to upload, multipart requests, and reads of what
// the service stored (config and setup status) or created (table columns).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { clusterFixtureDatabase, clusterMode, controlRow, type TestServer } from './server';

export const DATABASES = '/api/v1/bootstrap/databases';
export const setupPath = (id: string) => `${DATABASES}/${id}/setup`;

export function sqliteBytes(build?: (db: Database.Database) => void): Buffer {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-upload-'));
  const file = path.join(dir, 'src.sqlite');
  const db = new Database(file);
  db.exec('CREATE TABLE something (x)');
  build?.(db);
  db.close();
  const bytes = readFileSync(file);
  rmSync(dir, { recursive: true, force: true });
  return bytes;
}

export async function upload(
  server: { url: string },
  token: string,
  fields: Record<string, string | string[]>,
  file?: { name: string; bytes: Uint8Array; field?: string },
) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) form.append(key, v);
  }
  if (file) form.append(file.field ?? 'sqlite_file', new Blob([file.bytes]), file.name);
  const res = await fetch(`${server.url}${DATABASES}`, {
    method: 'POST',
    body: form,
    headers: { authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

export function columnsOf(file: string, table: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (
      db.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all() as { name: string }[]
    ).map((c) => c.name);
  } finally {
    db.close();
  }
}

export const configOf = async (server: TestServer, id: string) =>
  JSON.parse(
    (await controlRow<{ config: string }>(server, 'SELECT config FROM sources WHERE id = ?', id))!.config,
  );
export const statusOf = async (server: TestServer, id: string) =>
  (await controlRow<{ setup_status: string }>(server, 'SELECT setup_status FROM sources WHERE id = ?', id))!
    .setup_status;

let fixtures = 0;

/**
 * The driver and location fields of a database source for tests that need one of any kind: a
 * SQLite file `<name>.sqlite` on one node; in cluster mode, which refuses SQLite sources, a
 * PostgreSQL one: with `setup`, a scratch database beside the server's own (it can be set up and
 * written), else an unreachable host (for tests that never open the store).
 */
export async function databaseFixture(
  server: TestServer,
  name: string,
  options: { setup?: boolean } = {},
): Promise<Record<string, unknown>> {
  if (!clusterMode) return { driver: 'sqlite', file_path: `${name}.sqlite` };
  const unique = `${name}${++fixtures}`;
  if (options.setup) return { driver: 'postgres', url: await clusterFixtureDatabase(server, unique) };
  return { driver: 'postgres', host: 'db.internal', database_name: unique, username: 'svc', password: 'pw' };
}
