// Store factories of the network drivers for the contract suite: postgres and mysql in a scratch
// database per factory (tables dropped before each fixture), redis under a fresh key prefix per
// fixture, mongo in a fresh database per fixture on an in-process CongoDB.
import pg from 'pg';
import mysql from 'mysql2/promise';
import { createPostgresStore } from '../../src/drivers/network/postgres';
import { createMysqlStore } from '../../src/drivers/network/mysql';
import { createRedisStore } from '../../src/drivers/network/redis';
import { createMongoStore } from '../../src/drivers/network/mongo';
import type { IdentifierMode } from '../../src/drivers/sqlite/setup';
import type { WriteSetStore } from '../../src/drivers/types';
import type { Factory, StoreFixture } from './helpers';
import { SERVERS, dropRedisPrefix, scratchDatabase, scratchName, skipReason, startCongo } from './network';

export interface NetworkFixture extends StoreFixture {
  /** where the fixture's data lives: database name, redis prefix */
  location: { database?: string; prefix?: string; port?: number };
}

function fixture(
  name: string,
  store: WriteSetStore,
  location: NetworkFixture['location'],
  cleanup?: () => Promise<void>,
): NetworkFixture {
  return {
    name,
    store,
    dir: '',
    location,
    async dispose() {
      await store.close();
      await cleanup?.();
    },
  };
}

export function postgresFactory(mode: IdentifierMode): Factory {
  let db: Promise<{ name: string; drop(): Promise<void> }> | null = null;
  const name = `postgres (${mode})`;
  return {
    name,
    skip: skipReason('postgres'),
    async create(options = {}) {
      const { name: database } = await (db ??= scratchDatabase('postgres'));
      const c = new pg.Client({ ...SERVERS.postgres, database });
      await c.connect();
      await c.query('DROP TABLE IF EXISTS trifle_stats, trifle_stats_ping');
      await c.end();
      const s = SERVERS.postgres;
      const store = createPostgresStore({
        host: s.host,
        port: s.port,
        username: s.user,
        database,
        mode,
        timeZone: options.timeZone ?? 'UTC',
      });
      return fixture(name, store, { database });
    },
    async finish() {
      if (db) await (await db).drop();
    },
  };
}

export function mysqlFactory(mode: IdentifierMode): Factory {
  let db: Promise<{ name: string; drop(): Promise<void> }> | null = null;
  const name = `mysql (${mode})`;
  return {
    name,
    skip: skipReason('mysql'),
    async create(options = {}) {
      const { name: database } = await (db ??= scratchDatabase('mysql'));
      const c = await mysql.createConnection({ ...SERVERS.mysql, database });
      await c.query('DROP TABLE IF EXISTS trifle_stats, trifle_stats_ping');
      await c.end();
      const s = SERVERS.mysql;
      const store = createMysqlStore({
        host: s.host,
        port: s.port,
        username: s.user,
        database,
        mode,
        timeZone: options.timeZone ?? 'UTC',
      });
      return fixture(name, store, { database });
    },
    async finish() {
      if (db) await (await db).drop();
    },
  };
}

export const redisFactory: Factory = {
  name: 'redis (full)',
  skip: skipReason('redis'),
  async create(options = {}) {
    const prefix = scratchName('trifle_test');
    const store = createRedisStore({ ...SERVERS.redis, prefix, timeZone: options.timeZone ?? 'UTC' });
    return fixture('redis (full)', store, { prefix }, () => dropRedisPrefix(prefix));
  },
};

export function mongoFactory(mode: IdentifierMode): Factory {
  let server: ReturnType<typeof startCongo> | null = null;
  const name = `mongo (${mode}, CongoDB)`;
  return {
    name,
    skip: skipReason('mongo'),
    skipVolume: 'CongoDB scans its collection on every upsert: 8,760 buckets take minutes there',
    async create(options = {}) {
      const { port } = await (server ??= startCongo());
      const database = scratchName('trifle_test');
      const store = createMongoStore({
        host: '127.0.0.1',
        port,
        database,
        mode,
        timeZone: options.timeZone ?? 'UTC',
      });
      return fixture(name, store, { database, port });
    },
    async finish() {
      if (server) await (await server).stop();
    },
  };
}

export const NETWORK_FACTORIES: Factory[] = [
  ...(['full', 'partial', 'separated'] as const).map(postgresFactory),
  ...(['full', 'partial', 'separated'] as const).map(mysqlFactory),
  redisFactory,
  ...(['full', 'partial', 'separated'] as const).map(mongoFactory),
];
