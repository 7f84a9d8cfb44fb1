// The metric writer's cache of written buckets: bounded, and never the source of a stale value
// (failed transactions, writes through another connection, tiny limits).
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import Database from 'better-sqlite3';
import { BucketCache, REFRESH_MISSES } from '../../src/drivers/embedded/bucket-cache';
import { type BucketValue, ShapeRegistry } from '../../src/model/bucket-shape';
import type { WriteSetStore } from '../../src/drivers/types';
import { type StoreFixture, embeddedFactory, embeddedStore, readParsed, writeSet } from './helpers';

const H = 3_600_000;
const T0 = Date.UTC(2025, 2, 4, 10);

describe('BucketCache', () => {
  const shapes = new ShapeRegistry();
  const leaf = shapes.of(['n']);
  const bucketOf = (n: number): BucketValue => ({ shape: leaf, values: Float64Array.of(n) });
  const numberOf = (cache: BucketCache, series: number, bucket: number) =>
    cache.get(series, bucket)?.value.values?.[0];

  test('once full it keeps what it holds and takes no new bucket, until REFRESH_MISSES x its size of misses', async () => {
    const cache = new BucketCache({ entries: 3, bytes: 1_000 });
    for (let b = 0; b < 3; b++) cache.set(1, b, bucketOf(b), 1, 7);
    cache.set(1, 2, bucketOf(20), 2, 8); // a held bucket is still updated
    assert.deepEqual([numberOf(cache, 1, 2), cache.get(1, 2)?.fold], [20, 2]);
    const misses = REFRESH_MISSES * 3;
    for (let miss = 1; miss <= misses; miss++) {
      cache.set(2, miss, bucketOf(miss), 1, 7);
      assert.equal(cache.size, 3);
      assert.equal(cache.get(2, miss), undefined);
      assert.equal(numberOf(cache, 1, 0), 0);
    }
    cache.set(2, misses + 1, bucketOf(0), 1, 7); // one miss more: emptied, to refill with the buckets now written
    assert.equal(cache.size, 0);
    cache.set(2, misses + 2, bucketOf(1), 1, 7);
    assert.deepEqual([cache.size, numberOf(cache, 2, misses + 2)], [1, 1]);
  });

  test('a value changed in place is kept without a copy; the numbers and trees it holds bound it', async () => {
    const cache = new BucketCache({ entries: 100, bytes: 24 });
    cache.set(1, 1, bucketOf(1), 1, 7);
    const held = cache.get(1, 1)!.value;
    held.values![0] = 5; // what a fold does with a cached bucket of the same shape
    cache.set(1, 1, held, 2, 7);
    assert.deepEqual([numberOf(cache, 1, 1), cache.size], [5, 1]);
    cache.set(1, 2, bucketOf(2), 1, 7);
    cache.set(1, 3, bucketOf(3), 1, 7); // 3 numbers x 8 bytes = 24: full, not over
    assert.equal(cache.size, 3);
    cache.set(1, 4, bucketOf(4), 1, 7); // no room for its number: emptied
    assert.equal(cache.size, 0);
    const trees = new BucketCache({ entries: 100, bytes: 100 });
    trees.set(1, 1, { tree: { a: { b: 1 } } }, 1, 10); // 70 bytes counted
    assert.deepEqual(trees.get(1, 1)?.value.tree, { a: { b: 1 } });
    trees.set(1, 2, { tree: { c: 1 } }, 1, 5); // 70 + 35 > 100
    assert.equal(trees.size, 0);
  });
});

describe('embedded store with its bucket cache', () => {
  let fx: StoreFixture;
  beforeEach(async () => {
    fx = embeddedFactory.create();
  });
  afterEach(async () => fx.dispose());

  const add = (store: WriteSetStore, at: number, n: number) =>
    store.apply(writeSet([{ key: 'k', granularity: '1h', at, add: { n } }]));

  test('after a failed transaction, writes continue from the committed value', async () => {
    await add(fx.store, T0, 1);
    const failing = writeSet([{ key: 'k', granularity: '1h', at: T0, add: { n: 10 } }]);
    failing.sources.get('s1')!.get('k')!.get('1h')!.get(T0)!.set = new Map([['m', 1]]);
    failing.sources.get('s1')!.set('broken', null as never); // applying it throws after T0 changed
    await assert.rejects(() => fx.store.apply(failing));
    await add(fx.store, T0, 2);
    assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0]), [{ n: 3 }]);
  });

  test('a write through another connection is seen by the next write', async () => {
    await add(fx.store, T0, 1);
    const other = new Database(path.join(fx.dir, 'service.db'));
    try {
      other.prepare('UPDATE metric_buckets SET data = \'{"n":100}\'').run();
    } finally {
      other.close();
    }
    await add(fx.store, T0, 1);
    assert.deepEqual(await readParsed(fx.store, 'k', '1h', [T0]), [{ n: 101 }]);
  });

  test('with a tiny cache, repeated writes over many buckets still sum exactly', async () => {
    const { store, close } = embeddedStore(fx.db!, { entries: 2, bytes: 16 });
    const hours = Array.from({ length: 7 }, (_, i) => T0 + i * H);
    for (let round = 1; round <= 5; round++) {
      await store.apply(
        writeSet(hours.map((at, i) => ({ key: 'k', granularity: '1h', at, add: { n: i + round } }))),
      );
    }
    assert.deepEqual(
      await readParsed(store, 'k', '1h', hours),
      hours.map((_, i) => ({ n: 5 * i + 15 })),
    );
    await close();
  });
});
