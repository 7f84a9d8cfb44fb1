// The contract every metric store passes: the embedded store and the Trifle::Stats layouts of the
// database drivers (sqlite, postgres, mysql, redis, mongo) in each identifier mode they have, on
// fresh temp dirs, scratch databases and key prefixes. A driver whose server cannot be reached is
// skipped with a message (test/drivers/network.ts).
import { after, afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type Factory,
  type StoreFixture,
  embeddedFactory,
  readParsed,
  sqliteFactory,
  writeSet,
} from './helpers';
import { NETWORK_FACTORIES } from './network-factories';

const H = 3_600_000;
const T0 = Date.UTC(2025, 2, 4, 10);
const hours = (n: number, from = T0) => Array.from({ length: n }, (_, i) => from + i * H);

/** A map whose iteration throws: makes apply fail in the middle of its transaction. */
class ExplodingMap extends Map<string, number> {
  override [Symbol.iterator](): MapIterator<[string, number]> {
    throw new Error('exploded mid-transaction');
  }
}

const FACTORIES: Factory[] = [
  embeddedFactory,
  sqliteFactory('full'),
  sqliteFactory('partial'),
  sqliteFactory('separated'),
  ...NETWORK_FACTORIES,
];

for (const factory of FACTORIES) {
  describe(`store contract: ${factory.name}`, { skip: factory.skip || false }, () => {
    let fx: StoreFixture;
    beforeEach(async () => {
      fx = await factory.create();
      await fx.store.setup();
    });
    afterEach(async () => fx.dispose());
    after(async () => factory.finish?.());

    test('setup is idempotent', async () => {
      assert.equal((await fx.store.setup()).status, 'ready');
      assert.equal((await fx.store.setup()).status, 'ready');
    });

    test('an empty store reads {} for every bucket', async () => {
      assert.deepEqual(await fx.store.read({ sourceId: 's1', key: 'nothing', granularity: '1h' }, hours(3)), [
        '{}',
        '{}',
        '{}',
      ]);
      assert.deepEqual(await fx.store.read({ sourceId: 's1', key: 'nothing', granularity: '1h' }, []), []);
    });

    test('writes read back nested, per bucket, oldest first', async () => {
      await fx.store.apply(
        writeSet([
          {
            key: 'orders',
            granularity: '1h',
            at: T0,
            add: { count: 2, 'amount.net': 10.5, 'amount.tax': 2 },
          },
          { key: 'orders', granularity: '1h', at: T0 + 2 * H, add: { count: 1 } },
        ]),
      );
      assert.deepEqual(await readParsed(fx.store, 'orders', '1h', hours(3)), [
        { count: 2, amount: { net: 10.5, tax: 2 } },
        {},
        { count: 1 },
      ]);
    });

    test('tracks accumulate across transactions; asserts replace their leaves and keep the others', async () => {
      await fx.store.apply(
        writeSet([{ key: 'k', granularity: '1h', at: T0, add: { a: 1, 'b.c': 1, d: 5 } }]),
      );
      await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { a: 2, 'b.c': 0.25 } }]));
      await fx.store.apply(
        writeSet([{ key: 'k', granularity: '1h', at: T0, set: { d: 1, e: -3 }, add: { a: 1 } }]),
      );
      assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0]), [{ a: 4, b: { c: 1.25 }, d: 1, e: -3 }]);
    });

    test('integers stay integers in the JSON text', async () => {
      await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 3 } }]));
      await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 4 } }]));
      assert.equal(
        (await fx.store.read({ sourceId: 's1', key: 'k', granularity: '1h' }, [T0]))[0],
        '{"n":7}',
      );
    });

    test('series are apart: key, granularity and bucket', async () => {
      await fx.store.apply(
        writeSet([
          { key: 'a', granularity: '1h', at: T0, add: { n: 1 } },
          { key: 'b', granularity: '1h', at: T0, add: { n: 2 } },
          { key: 'a', granularity: '60m', at: T0, add: { n: 3 } },
          { key: 'a', granularity: '1h', at: T0 + H, add: { n: 4 } },
        ]),
      );
      assert.deepEqual(await readParsed(fx.store, 'a', '1h', hours(2)), [{ n: 1 }, { n: 4 }]);
      assert.deepEqual(await readParsed(fx.store, 'b', '1h', hours(2)), [{ n: 2 }, {}]);
      assert.deepEqual(await readParsed(fx.store, 'a', '60m', hours(2)), [{ n: 3 }, {}]);
    });

    test('a read names only its buckets: stored buckets around and between them are left out', async () => {
      await fx.store.apply(
        writeSet(hours(6, T0 - H).map((at, i) => ({ key: 'k', granularity: '1h', at, add: { i } }))),
      );
      // stored: T0-1h .. T0+4h; asked: T0, T0+2h, T0+4h (as uneven segments would ask)
      assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0, T0 + 2 * H, T0 + 4 * H]), [
        { i: 1 },
        { i: 3 },
        { i: 5 },
      ]);
    });

    test('keys with dots, separators, quotes and non-ASCII characters', async () => {
      const key = 'shop::orders.eu "main" ü';
      await fx.store.apply(writeSet([{ key, granularity: '1d', at: T0, add: { 'päth."q"': 1, "it's": 2 } }]));
      assert.deepEqual(await readParsed(fx.store, key, '1d', [T0]), [{ päth: { '"q"': 1 }, "it's": 2 }]);
    });

    test('a failing write set stores nothing of itself', async () => {
      await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 1 } }]));
      const writes = writeSet([
        { key: 'k', granularity: '1h', at: T0, add: { n: 10 } },
        { key: 'k', granularity: '1h', at: T0 + H, add: { n: 10 } },
      ]);
      writes.sources
        .get('s1')!
        .get('k')!
        .get('1h')!
        .get(T0 + H)!.add = new ExplodingMap([['n', 1]]);
      await assert.rejects(() => fx.store.apply(writes), /exploded/);
      assert.deepEqual(await readParsed(fx.store, 'k', '1h', hours(2)), [{ n: 1 }, {}]);
      await fx.store.apply(writeSet([{ key: 'k', granularity: '1h', at: T0 + H, add: { n: 2 } }]));
      assert.deepEqual(await readParsed(fx.store, 'k', '1h', hours(2)), [{ n: 1 }, { n: 2 }]);
    });

    test('8,760 hourly buckets read in one call', { skip: factory.skipVolume ?? false }, async () => {
      const year = hours(8760, Date.UTC(2025, 0, 1));
      await fx.store.apply(
        writeSet(year.map((at, i) => ({ key: 'y', granularity: '1h', at, add: { v: i } }))),
      );
      const values = (await readParsed(fx.store, 'y', '1h', year)) as Array<{ v: number }>;
      assert.equal(values.length, 8760);
      assert.ok(values.every((bucket, i) => bucket.v === i));
    });
  });
}

describe('embedded store: sources are apart', () => {
  test('one key in two sources', async () => {
    const fx = await embeddedFactory.create();
    try {
      await fx.store.apply(
        writeSet([
          { sourceId: 'p1', key: 'k', granularity: '1h', at: T0, add: { n: 1 } },
          { sourceId: 'p2', key: 'k', granularity: '1h', at: T0, add: { n: 2 } },
        ]),
      );
      assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0], 'p1'), [{ n: 1 }]);
      assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0], 'p2'), [{ n: 2 }]);
      assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0], 'p3'), [{}]);
    } finally {
      fx.dispose();
    }
  });
});
