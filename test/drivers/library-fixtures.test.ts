// Rows in the Trifle::Stats libraries' own format, inserted with the raw client, read back exactly
// through each store: flat dot paths (nested in mongo), joined keys of every identifier mode, day
// rows the libraries floored with the event's UTC offset around DST (folded into the zone-correct
// day), and the known library defects of SPEC 8: redis hashes a float HINCRBY left without that
// field, a postgres field name with a comma split into nesting, mysql numbers with 10 decimals.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import mysql from 'mysql2/promise';
import Redis from 'ioredis';
import { MongoClient } from 'mongodb';
import type { IdentifierMode } from '../../src/drivers/sqlite/setup';
import type { Factory } from './helpers';
import Database from 'better-sqlite3';
import { readParsed, sqliteFactory, writeSet } from './helpers';
import {
  mongoFactory,
  mysqlFactory,
  postgresFactory,
  redisFactory,
  type NetworkFixture,
} from './network-factories';
import { SERVERS } from './network';

const ZONE = 'Europe/Bratislava';
const DAY_SPRING = Date.parse('2024-03-30T23:00:00Z'); // 31 March, local midnight at +01:00
const DAY_AUTUMN = Date.parse('2024-10-26T22:00:00Z'); // 27 October, local midnight at +02:00
const HOUR = Date.parse('2024-06-15T10:00:00Z');

interface Row {
  granularity: string;
  at: number;
  /** flat dot paths, as the SQL and redis libraries store them */
  data: Record<string, unknown>;
}

/** What a library leaves after its writes: zone-correct rows and rows floored with the event's offset. */
const ROWS: Row[] = [
  { granularity: '1d', at: DAY_SPRING, data: { count: 1, 'amount.net': 10 } },
  { granularity: '1d', at: DAY_SPRING - 3_600_000, data: { count: 2, 'amount.net': 5, 'amount.tax': 1 } },
  { granularity: '1d', at: DAY_AUTUMN, data: { count: 4 } },
  { granularity: '1d', at: DAY_AUTUMN + 3_600_000, data: { count: 1 } },
  { granularity: '1h', at: HOUR, data: { count: 3, 'country.SK': 2, 'country.CZ': 1 } },
];
const EXPECTED_DAYS = [{ count: 3, amount: { net: 15, tax: 1 } }, { count: 5 }];
const EXPECTED_HOUR = [{ count: 3, country: { SK: 2, CZ: 1 } }];

function identity(mode: IdentifierMode, key: string, row: Row): Record<string, unknown> {
  if (mode === 'full') return { key: `${key}::${row.granularity}::${row.at / 1000}` };
  if (mode === 'partial') return { key: `${key}::${row.granularity}`, at: new Date(row.at) };
  return { key, granularity: row.granularity, at: new Date(row.at) };
}

type Insert = (fx: NetworkFixture, mode: IdentifierMode, key: string, rows: Row[]) => Promise<void>;

const pgInsert: Insert = async (fx, mode, key, rows) => {
  const c = new pg.Client({ ...SERVERS.postgres, database: fx.location.database });
  await c.connect();
  for (const row of rows) {
    const id = identity(mode, key, row);
    const cols = Object.keys(id);
    const params = cols.map((_, i) => `$${i + 1}`).join(', ');
    await c.query(
      `INSERT INTO trifle_stats (${cols.join(', ')}, data) VALUES (${params}, $${cols.length + 1})`,
      [...Object.values(id), JSON.stringify(row.data)],
    );
  }
  await c.end();
};

const mysqlInsert: Insert = async (fx, mode, key, rows) => {
  const c = await mysql.createConnection({ ...SERVERS.mysql, database: fx.location.database, timezone: 'Z' });
  for (const row of rows) {
    const id = identity(mode, key, row);
    const cols = Object.keys(id);
    // the libraries add through DECIMAL(65,10): stored numbers carry ten decimals
    const text = JSON.stringify(row.data).replace(/:(-?\d+)([,}])/g, ':$1.0000000000$2');
    await c.query(
      `INSERT INTO trifle_stats (${cols.map((x) => `\`${x}\``).join(', ')}, data) VALUES (${cols.map(() => '?').join(', ')}, ?)`,
      [...Object.values(id), text],
    );
  }
  await c.end();
};

const redisInsert: Insert = async (fx, _mode, key, rows) => {
  const r = new Redis({ ...SERVERS.redis, lazyConnect: true });
  await r.connect();
  for (const row of rows) {
    const fields = Object.entries(row.data).flatMap(([k, v]) => [k, String(v)]);
    await r.hset(`${fx.location.prefix}::${key}::${row.granularity}::${row.at / 1000}`, ...fields);
  }
  await r.quit();
};

function nest(flat: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, any> = {};
  for (const [path, value] of Object.entries(flat)) {
    const parts = path.split('.');
    let node = out;
    for (const p of parts.slice(0, -1)) node = node[p] ??= {};
    node[parts[parts.length - 1]!] = value;
  }
  return out;
}

const mongoInsert: Insert = async (fx, mode, key, rows) => {
  const c = new MongoClient(`mongodb://127.0.0.1:${fx.location.port}`);
  const docs = rows.map((row) => ({ ...identity(mode, key, row), data: nest(row.data) }));
  await c.db(fx.location.database).collection('trifle_stats').insertMany(docs);
  await c.close();
};

const sqliteInsert: Insert = async (fx, mode, key, rows) => {
  const db = new Database(fx.file!);
  for (const row of rows) {
    const id = identity(mode, key, row);
    if (id.at instanceof Date) id.at = `${id.at.toISOString().slice(0, 19)}Z`;
    const cols = Object.keys(id);
    db.prepare(
      `INSERT INTO trifle_stats (${cols.join(', ')}, data) VALUES (${cols.map(() => '?').join(', ')}, ?)`,
    ).run(...Object.values(id), JSON.stringify(row.data));
  }
  db.close();
};

const CASES: Array<[(mode: IdentifierMode) => Factory, IdentifierMode[], Insert]> = [
  [sqliteFactory, ['full', 'partial', 'separated'], sqliteInsert],
  [postgresFactory, ['full', 'partial', 'separated'], pgInsert],
  [mysqlFactory, ['full', 'partial', 'separated'], mysqlInsert],
  [() => redisFactory, ['full'], redisInsert],
  [mongoFactory, ['full', 'partial', 'separated'], mongoInsert],
];

for (const [makeFactory, modes, insert] of CASES) {
  for (const mode of modes) {
    const factory = makeFactory(mode);
    describe(`library rows: ${factory.name}`, { skip: factory.skip || false }, () => {
      after(async () => factory.finish?.());

      test('read back exactly, DST-shifted day rows folded into their day', async () => {
        const fx = (await factory.create({ timeZone: ZONE })) as NetworkFixture;
        try {
          await fx.store.setup();
          await insert(fx, mode, 'shop', ROWS);
          assert.deepEqual(await readParsed(fx.store, 'shop', '1d', [DAY_SPRING, DAY_AUTUMN]), EXPECTED_DAYS);
          assert.deepEqual(await readParsed(fx.store, 'shop', '1h', [HOUR]), EXPECTED_HOUR);
          // a track by the service adds to what the library wrote
          await fx.store.apply(
            writeSet([{ key: 'shop', granularity: '1h', at: HOUR, add: { count: 1, 'country.SK': 1 } }]),
          );
          assert.deepEqual(await readParsed(fx.store, 'shop', '1h', [HOUR]), [
            { count: 4, country: { SK: 3, CZ: 1 } },
          ]);
        } finally {
          await fx.dispose();
        }
      });
    });
  }
}

describe('library defects the stores survive', () => {
  const pgFactory = postgresFactory('full');
  after(async () => pgFactory.finish?.());

  test(
    'postgres: a field name with a comma that a text-array path split into nesting',
    { skip: pgFactory.skip || false },
    async () => {
      const fx = (await pgFactory.create()) as NetworkFixture;
      try {
        await fx.store.setup();
        const c = new pg.Client({ ...SERVERS.postgres, database: fx.location.database });
        await c.connect();
        const key = `k::1h::${HOUR / 1000}`;
        // the library's jsonb_set(data, '{a,b}', ...) wrote into a -> b instead of the member "a,b"
        await c.query('INSERT INTO trifle_stats (key, data) VALUES ($1, $2)', [
          key,
          JSON.stringify({ a: { b: 2 }, 'x,y': 1 }),
        ]);
        await c.end();
        assert.deepEqual(await readParsed(fx.store, 'k', '1h', [HOUR]), [{ a: { b: 2 }, 'x,y': 1 }]);
        await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: HOUR, add: { 'x,y': 2 } }]));
        assert.deepEqual(await readParsed(fx.store, 'k', '1h', [HOUR]), [{ a: { b: 2 }, 'x,y': 3 }]);
      } finally {
        await fx.dispose();
      }
    },
  );

  test(
    "redis: a float track the library's HINCRBY refused leaves the other fields readable",
    { skip: redisFactory.skip || false },
    async () => {
      const fx = (await redisFactory.create()) as NetworkFixture;
      try {
        const r = new Redis({ ...SERVERS.redis, lazyConnect: true });
        await r.connect();
        const hash = `${fx.location.prefix}::k::1h::${HOUR / 1000}`;
        await r.hincrby(hash, 'count', 1);
        await assert.rejects(() => r.hincrby(hash, 'duration', 1.5 as unknown as number));
        await r.hset(hash, 'label', 'not a number');
        await r.quit();
        assert.deepEqual(await readParsed(fx.store, 'k', '1h', [HOUR]), [{ count: 1 }]);
        await fx.store.apply(
          writeSet([{ key: 'k', granularity: '1h', at: HOUR, add: { count: 1, duration: 1.5 } }]),
        );
        assert.deepEqual(await readParsed(fx.store, 'k', '1h', [HOUR]), [{ count: 2, duration: 1.5 }]);
      } finally {
        await fx.dispose();
      }
    },
  );
});
