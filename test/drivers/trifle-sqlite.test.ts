// The sqlite driver against stores laid out the way the Trifle::Stats libraries write them (rows
// written by hand here, per the libraries' sqlite drivers), and the rows it writes itself.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../../src/errors';
import { createSqliteStore } from '../../src/drivers/sqlite/store';
import { type StoreFixture, readParsed, sqliteFactory, writeSet } from './helpers';

const T0 = Date.UTC(2025, 2, 4, 10); // 2025-03-04T10:00:00Z
const T1 = T0 + 3_600_000;

function rawDb(file: string): Database.Database {
  mkdirSync(path.dirname(file), { recursive: true });
  return new Database(file);
}

describe('reading stores the Trifle::Stats libraries wrote', () => {
  let fx: StoreFixture;
  afterEach(async () => fx.dispose());

  test('full: "<key>::<granularity>::<epoch seconds>", flat and nested rows', async () => {
    assert.equal(T0 / 1000, 1741082400);
    fx = sqliteFactory('full').create();
    const db = rawDb(fx.file!);
    // The Ruby gem's setup!: a plain table and a unique index on key.
    db.exec(
      'CREATE TABLE trifle_stats (key varchar(255), data json); CREATE UNIQUE INDEX idx_trifle_stats_key ON trifle_stats (key);',
    );
    const insert = db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)');
    insert.run('orders::1h::1741082400', '{"count":3,"amount.net":2.5,"amount.tax":0.5}');
    insert.run('orders::1h::1741086000', '{"count":1,"amount":{"net":1}}'); // an unquoted $.amount.net update
    insert.run('__system__key__::1h::1741082400', '{"count":3,"keys.orders":3}');
    insert.run('orders::1d::1741046400', '{"count":99}');
    db.close();
    assert.deepEqual(await readParsed(fx.store, 'orders', '1h', [T0, T1, T1 + 3_600_000]), [
      { count: 3, amount: { net: 2.5, tax: 0.5 } },
      { count: 1, amount: { net: 1 } },
      {},
    ]);
    assert.deepEqual(await readParsed(fx.store, '__system__key__', '1h', [T0]), [
      { count: 3, keys: { orders: 3 } },
    ]);
  });

  test('partial: "<key>::<granularity>" and at, in both spellings the libraries read', async () => {
    fx = sqliteFactory('partial').create();
    const db = rawDb(fx.file!);
    db.exec(
      'CREATE TABLE trifle_stats (key varchar(255) NOT NULL, at datetime NOT NULL, data json, PRIMARY KEY (key, at));',
    );
    const insert = db.prepare('INSERT INTO trifle_stats (key, at, data) VALUES (?, ?, ?)');
    insert.run('orders::1h', '2025-03-04T10:00:00Z', '{"count":2}');
    insert.run('orders::1h', '2025-03-04T11:00:00.000000Z', '{"count":5}');
    insert.run('orders::1h', '2025-03-04T12:00:00Z', '{"count":7}'); // outside the range asked
    insert.run('orders::1d', '2025-03-04T00:00:00Z', '{"count":14}');
    db.close();
    assert.deepEqual(await readParsed(fx.store, 'orders', '1h', [T0, T1]), [{ count: 2 }, { count: 5 }]);
  });

  test('separated: key, granularity and at columns', async () => {
    fx = sqliteFactory('separated').create();
    const db = rawDb(fx.file!);
    db.exec(
      'CREATE TABLE trifle_stats (key varchar(255) NOT NULL, granularity varchar(255) NOT NULL, at datetime NOT NULL, data json, PRIMARY KEY (key, granularity, at));',
    );
    const insert = db.prepare('INSERT INTO trifle_stats (key, granularity, at, data) VALUES (?, ?, ?, ?)');
    insert.run('orders', '1h', '2025-03-04T11:00:00Z', '{"country.US":4,"country.UK":1}');
    insert.run('orders', '1d', '2025-03-04T00:00:00Z', '{"count":14}');
    insert.run('orders', '1h', '2025-03-04T10:00:00Z', 'not json'); // a broken row reads as empty
    db.close();
    assert.deepEqual(await readParsed(fx.store, 'orders', '1h', [T0, T1]), [
      {},
      { country: { US: 4, UK: 1 } },
    ]);
  });

  test('a table created by the Go library (key TEXT PRIMARY KEY) takes writes too', async () => {
    fx = sqliteFactory('full').create();
    const db = rawDb(fx.file!);
    db.exec("CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT NOT NULL DEFAULT '{}');");
    db.close();
    await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 1 } }]));
    await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 1 } }]));
    assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0]), [{ n: 2 }]);
  });
});

describe('rows this driver writes', () => {
  let fx: StoreFixture;
  afterEach(async () => fx.dispose());

  function rows(sql: string): unknown[] {
    const db = new Database(fx.file!, { readonly: true });
    try {
      return db.prepare(sql).raw(true).all();
    } finally {
      db.close();
    }
  }

  test("full: the libraries' key and flat data", async () => {
    fx = sqliteFactory('full').create();
    await fx.store.setup();
    await fx.store.apply(
      writeSet([{ key: 'orders', granularity: '1h', at: T0, add: { count: 1, 'amount.net': 2.5 } }]),
    );
    assert.deepEqual(rows('SELECT key, data FROM trifle_stats'), [
      ['orders::1h::1741082400', '{"count":1,"amount.net":2.5}'],
    ]);
  });

  test('partial and separated: at as UTC RFC 3339 to the second', async () => {
    fx = sqliteFactory('partial').create();
    await fx.store.setup();
    await fx.store.apply(writeSet([{ key: 'orders', granularity: '1h', at: T0, set: { level: 3 } }]));
    assert.deepEqual(rows('SELECT key, at, data FROM trifle_stats'), [
      ['orders::1h', '2025-03-04T10:00:00Z', '{"level":3}'],
    ]);
    fx.dispose();
    fx = sqliteFactory('separated').create();
    await fx.store.setup();
    await fx.store.apply(writeSet([{ key: 'orders', granularity: '1h', at: T0, add: { n: 1 } }]));
    assert.deepEqual(rows('SELECT key, granularity, at, data FROM trifle_stats'), [
      ['orders', '1h', '2025-03-04T10:00:00Z', '{"n":1}'],
    ]);
  });

  test('a nested leaf written by an older client is the starting value, and the row becomes flat', async () => {
    fx = sqliteFactory('full').create();
    await fx.store.setup();
    const db = rawDb(fx.file!);
    db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run(
      'k::1h::1741082400',
      '{"amount":{"net":1,"tax":1}}',
    );
    db.close();
    await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { 'amount.net': 2 } }]));
    assert.deepEqual(JSON.parse((rows('SELECT data FROM trifle_stats')[0] as [string])[0]), {
      amount: { tax: 1 },
      'amount.net': 3,
    });
    assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0]), [{ amount: { tax: 1, net: 3 } }]);
  });
});

describe('sqlite store before setup and with a foreign layout', () => {
  let fx: StoreFixture;
  beforeEach(async () => (fx = sqliteFactory('full').create()));
  afterEach(async () => fx.dispose());

  const is409 = (err: unknown) => err instanceof AppError && err.status === 409;

  test('no file yet: reads are empty, writes are refused with 409, and no file is created', async () => {
    assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0]), [{}]);
    await assert.rejects(
      () => fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 1 } }])),
      is409,
    );
    assert.equal(existsSync(fx.file!), false);
    await fx.store.setup();
    await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 1 } }]));
    assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0]), [{ n: 1 }]);
  });

  test('a table of another identifier mode: 409 naming the layout', async () => {
    const db = rawDb(fx.file!);
    db.exec(
      'CREATE TABLE trifle_stats (key varchar(255) NOT NULL, at datetime NOT NULL, data json, PRIMARY KEY (key, at));',
    );
    db.close();
    const store = createSqliteStore({ file: fx.file!, mode: 'full' });
    try {
      await assert.rejects(
        () => store.read({ sourceId: 's', key: 'k', granularity: '1h' }, [T0]),
        (err: unknown) => is409(err) && /not the full identifier layout/.test((err as Error).message),
      );
    } finally {
      await store.close();
    }
  });
});
