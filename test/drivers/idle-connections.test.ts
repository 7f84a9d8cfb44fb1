// Idle sources close their connections: after a quiet spell a store holds no connection to its
// server, and the next call opens one again.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import mysql from 'mysql2/promise';
import { createPostgresStore } from '../../src/drivers/network/postgres';
import { createMysqlStore } from '../../src/drivers/network/mysql';
import type { WriteSetStore } from '../../src/drivers/types';
import { SERVERS, scratchDatabase, skipReason } from './network';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const H = Date.UTC(2025, 0, 1);

async function check(store: WriteSetStore, connections: () => Promise<number>): Promise<void> {
  await store.setup();
  await store.read({ sourceId: 's', key: 'k', granularity: '1h' }, [H]);
  assert.ok((await connections()) >= 1, 'a connection while in use');
  let left = -1;
  for (let i = 0; i < 30 && left !== 0; i++) {
    await sleep(100);
    left = await connections();
  }
  assert.equal(left, 0, 'no connection once idle');
  assert.deepEqual(await store.read({ sourceId: 's', key: 'k', granularity: '1h' }, [H]), ['{}']);
  await store.close();
}

describe('idle connections are closed', () => {
  test('postgres', { skip: skipReason('postgres') }, async () => {
    const db = await scratchDatabase('postgres');
    const admin = new pg.Client({ ...SERVERS.postgres, database: 'postgres' });
    await admin.connect();
    try {
      const s = SERVERS.postgres;
      const store = createPostgresStore({
        host: s.host,
        port: s.port,
        username: s.user,
        database: db.name,
        mode: 'full',
        timeZone: 'UTC',
        idleMs: 200,
      });
      await check(store, async () =>
        Number(
          (await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [db.name]))
            .rows[0].n,
        ),
      );
    } finally {
      await admin.end();
      await db.drop();
    }
  });

  test('mysql', { skip: skipReason('mysql') }, async () => {
    const db = await scratchDatabase('mysql');
    const admin = await mysql.createConnection(SERVERS.mysql);
    try {
      const s = SERVERS.mysql;
      const store = createMysqlStore({
        host: s.host,
        port: s.port,
        username: s.user,
        database: db.name,
        mode: 'full',
        timeZone: 'UTC',
        idleMs: 200,
      });
      await check(store, async () => {
        const [rows] = await admin.query(
          'SELECT count(*) AS n FROM information_schema.processlist WHERE db = ?',
          [db.name],
        );
        return Number((rows as Array<{ n: number }>)[0]!.n);
      });
    } finally {
      await admin.end();
      await db.drop();
    }
  });
});
