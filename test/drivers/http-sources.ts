// Database sources through the HTTP API, for the driver suites that go through the real server:
// the bootstrap body of each driver pointing at a scratch location, created, set up and given a
// source token.
import assert from 'node:assert/strict';
import type { IdentifierMode } from '../../src/drivers/sqlite/setup';
import { request, type Agent } from '../helpers/server';
import {
  SERVERS,
  type NetworkDriver,
  scratchDatabase,
  dropRedisPrefix,
  scratchName,
  startCongo,
} from './network';

export interface Location {
  database?: string;
  prefix?: string;
  host?: string;
  port?: number;
}

/** The bootstrap fields of a driver for a location (sqlite: a file in the organization's folder). */
export function driverFields(
  driver: NetworkDriver | 'sqlite',
  mode: IdentifierMode,
  at: Location,
): Record<string, unknown> {
  const base = { driver, identifier_mode: mode };
  switch (driver) {
    case 'sqlite':
      return { ...base, file_path: `${at.database ?? 'stats'}.sqlite` };
    case 'postgres':
      return {
        ...base,
        host: at.host ?? SERVERS.postgres.host,
        port: at.port ?? SERVERS.postgres.port,
        database_name: at.database,
        username: 'postgres',
      };
    case 'mysql':
      return {
        ...base,
        host: at.host ?? SERVERS.mysql.host,
        port: at.port ?? SERVERS.mysql.port,
        database_name: at.database,
        username: 'root',
      };
    case 'redis':
      return {
        ...base,
        host: at.host ?? SERVERS.redis.host,
        port: at.port ?? SERVERS.redis.port,
        prefix: at.prefix,
      };
    case 'mongo':
      return { ...base, host: at.host ?? '127.0.0.1', port: at.port, database_name: at.database };
  }
}

export interface SourceAccess {
  sourceId: string;
  token: string;
}

/** POST /bootstrap/databases, its setup, and a read+write source token. */
export async function databaseSource(
  server: { url: string },
  agent: Agent,
  body: Record<string, unknown>,
): Promise<SourceAccess> {
  const created = await request(
    server,
    'POST',
    '/api/v1/bootstrap/databases',
    { display_name: 'DB', ...body },
    { token: agent.userToken },
  );
  assert.equal(created.status, 201, created.text);
  const sourceId = created.body.data.source.id as string;
  const setup = await request(server, 'POST', `/api/v1/bootstrap/databases/${sourceId}/setup`, undefined, {
    token: agent.userToken,
  });
  assert.equal(setup.status, 200, setup.text);
  const token = await request(
    server,
    'POST',
    '/api/v1/bootstrap/source-tokens',
    { source_type: 'database', source_id: sourceId },
    { token: agent.userToken },
  );
  assert.equal(token.status, 201, token.text);
  return { sourceId, token: token.body.data.token.value };
}

/** A scratch location for a driver and the function that removes it. */
export async function scratchLocation(
  driver: NetworkDriver | 'sqlite',
): Promise<{ at: Location; remove(): Promise<void> }> {
  if (driver === 'postgres' || driver === 'mysql') {
    const db = await scratchDatabase(driver);
    return { at: { database: db.name }, remove: db.drop };
  }
  if (driver === 'redis') {
    const prefix = scratchName('trifle_test');
    return { at: { prefix }, remove: () => dropRedisPrefix(prefix) };
  }
  if (driver === 'mongo') {
    const congo = await startCongo();
    return { at: { port: congo.port, database: scratchName('trifle_test') }, remove: congo.stop };
  }
  return { at: { database: scratchName('stats') }, remove: async () => undefined };
}

/** Sends points through the batch endpoint. */
export async function track(server: { url: string }, access: SourceAccess, points: unknown[]): Promise<void> {
  const res = await request(
    server,
    'POST',
    '/api/v1/metrics/batch',
    { points },
    { token: access.token, sourceId: access.sourceId },
  );
  assert.equal(res.status, 201, res.text);
}

export async function series(
  server: { url: string },
  access: SourceAccess,
  key: string | null,
  from: string,
  to: string,
  granularity: string,
) {
  const q = new URLSearchParams({ from, to, granularity });
  if (key !== null) q.set('key', key);
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: access.token,
    sourceId: access.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data as { at: string[]; values: unknown[] };
}
