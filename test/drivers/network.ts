// The database servers the driver suites run against, each in a scratch database (or key prefix)
// with a random name that the suite removes again. A server that cannot be reached is skipped
// with a message; mongo runs against CongoDB, the in-process wire-compatible server of
// @push.rocks/smartmongo (a devDependency), when it is installed.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { createRequire } from 'node:module';
import path from 'node:path';
import pg from 'pg';
import mysql from 'mysql2/promise';
import Redis from 'ioredis';
import type { IdentifierMode } from '../../src/drivers/sqlite/setup';

export type NetworkDriver = 'postgres' | 'mysql' | 'redis' | 'mongo';

export const SERVERS = {
  postgres: {
    host: process.env.TEST_PG_HOST ?? '127.0.0.1',
    port: Number(process.env.TEST_PG_PORT ?? 5432),
    user: 'postgres',
  },
  mysql: {
    host: process.env.TEST_MYSQL_HOST ?? '127.0.0.1',
    port: Number(process.env.TEST_MYSQL_PORT ?? 3306),
    user: 'root',
  },
  redis: {
    host: process.env.TEST_REDIS_HOST ?? '127.0.0.1',
    port: Number(process.env.TEST_REDIS_PORT ?? 6379),
  },
};

export const MODES: Record<NetworkDriver, IdentifierMode[]> = {
  postgres: ['full', 'partial', 'separated'],
  mysql: ['full', 'partial', 'separated'],
  redis: ['full'],
  mongo: ['full', 'partial', 'separated'],
};

export const scratchName = (prefix: string) => `${prefix}_${randomBytes(5).toString('hex')}`;

/** A TCP probe run synchronously (so suites can decide to skip before they are declared). */
function reachable(host: string, port: number): boolean {
  const probe =
    `const s=require('net').connect(${port},${JSON.stringify(host)});s.setTimeout(1000);` +
    `s.on('connect',()=>process.exit(0));s.on('error',()=>process.exit(1));s.on('timeout',()=>process.exit(1));`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 3000 }).status === 0;
}

const CONGO = '@push.rocks/smartmongo/dist_ts/congodb/index.js';

function congoInstalled(): boolean {
  try {
    createRequire(path.join(process.cwd(), 'package.json')).resolve(CONGO);
    return true;
  } catch {
    return false;
  }
}

const skipCache = new Map<NetworkDriver, string | false>();
/** false when the driver's server can be used, else the reason to skip. */
export function skipReason(driver: NetworkDriver): string | false {
  if (!skipCache.has(driver)) {
    let reason: string | false = false;
    if (driver === 'mongo')
      reason = congoInstalled() ? false : 'mongo: @push.rocks/smartmongo (CongoDB) is not installed';
    else {
      const s = SERVERS[driver];
      if (!reachable(s.host, s.port)) reason = `${driver}: no server at ${s.host}:${s.port}`;
    }
    if (reason) console.log(`# skipped: ${reason}`);
    skipCache.set(driver, reason);
  }
  return skipCache.get(driver)!;
}

/** An in-process CongoDB on a free port (the import is ESM-only, hence dynamic). */
export async function startCongo(): Promise<{ port: number; stop(): Promise<void> }> {
  const { CongoServer } = (await import(CONGO)) as {
    CongoServer: new (o: object) => { start(): Promise<void>; stop(): Promise<void> };
  };
  const port = await freePort();
  const server = new CongoServer({ port, host: '127.0.0.1' });
  await server.start();
  return { port, stop: () => server.stop() };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** Creates a scratch database; returns its name and a function that drops it. */
export async function scratchDatabase(
  driver: 'postgres' | 'mysql',
): Promise<{ name: string; drop(): Promise<void> }> {
  const name = scratchName('trifle_test');
  if (driver === 'postgres') {
    const admin = new pg.Client({ ...SERVERS.postgres, database: 'postgres' });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    return {
      name,
      async drop() {
        const c = new pg.Client({ ...SERVERS.postgres, database: 'postgres' });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const admin = await mysql.createConnection(SERVERS.mysql);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return {
    name,
    async drop() {
      const c = await mysql.createConnection(SERVERS.mysql);
      await c.query(`DROP DATABASE IF EXISTS ${name}`);
      await c.end();
    },
  };
}

/** Deletes every redis key under a prefix. */
export async function dropRedisPrefix(prefix: string): Promise<void> {
  const r = new Redis({ ...SERVERS.redis, lazyConnect: true });
  await r.connect();
  let cursor = '0';
  do {
    const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}::*`, 'COUNT', 1000);
    if (keys.length > 0) await r.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await r.quit();
}

/**
 * A TCP proxy in the test process: a source pointed at it loses its server when cut() is called
 * (open connections are destroyed, new ones refused) and gets it back on restore().
 */
export async function tcpProxy(target: {
  host: string;
  port: number;
}): Promise<{ port: number; cut(): void; restore(): Promise<void>; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let server: net.Server;
  const port = await freePort();
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      server = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on('close', () => sockets.delete(s));
          s.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
  await listen();
  const cut = () => {
    server.close();
    for (const s of sockets) s.destroy();
  };
  return { port, cut, restore: listen, close: async () => cut() };
}
