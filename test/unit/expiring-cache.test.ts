// The look-up cache of cluster mode's repositories (src/lib/expiring-cache.ts): entries answered
// for their time-to-live, concurrent misses sharing one load, and a load begun before a delete,
// deleteWhere or clear never kept.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ExpiringCache } from '../../src/lib/expiring-cache';

/** A load the test resolves by hand, counting calls. */
function gate<V>() {
  const calls: Array<{ key: string; expired: V | undefined; resolve: (v: V | undefined) => void }> = [];
  const load = (key: string, expired: V | undefined) =>
    new Promise<V | undefined>((resolve) => calls.push({ key, expired, resolve }));
  return { calls, load };
}

describe('ExpiringCache', () => {
  test('answers an entry for its time-to-live from the start of its load, then loads again', async () => {
    let now = 0;
    const cache = new ExpiringCache<string, string>(10, 100, () => now);
    let loads = 0;
    const load = async (key: string) => `${key}-${++loads}`;
    assert.equal(await cache.getOrLoad('a', load), 'a-1');
    now = 99;
    assert.equal(await cache.getOrLoad('a', load), 'a-1');
    assert.equal(cache.get('a'), 'a-1');
    now = 100;
    assert.equal(cache.get('a'), undefined, 'expired');
    assert.equal(await cache.getOrLoad('a', load), 'a-2');
  });

  test('hands the expired value to the loader, which may keep it', async () => {
    let now = 0;
    const cache = new ExpiringCache<string, { n: number }>(10, 100, () => now);
    const first = (await cache.getOrLoad('a', async () => ({ n: 1 })))!;
    now = 150;
    let seen: unknown;
    const again = await cache.getOrLoad('a', async (_key, expired) => {
      seen = expired;
      return expired;
    });
    assert.equal(seen, first);
    assert.equal(again, first);
    assert.equal(cache.get('a'), first, 'fresh again');
  });

  test('misses and failures are not kept; concurrent misses share one load', async () => {
    const cache = new ExpiringCache<string, string>(10, 1000);
    const { calls, load } = gate<string>();
    const a = cache.getOrLoad('k', load);
    const b = cache.getOrLoad('k', load);
    assert.equal(calls.length, 1, 'one load for both');
    calls[0]!.resolve(undefined);
    assert.deepEqual([await a, await b], [undefined, undefined]);
    await assert.rejects(
      cache.getOrLoad('k', async () => {
        throw new Error('down');
      }),
      /down/,
    );
    assert.equal(await cache.getOrLoad('k', async () => 'v'), 'v', 'loaded after a miss and a failure');
  });

  test('a load begun before a delete or a clear is answered to its callers but not kept', async () => {
    const cache = new ExpiringCache<string, string>(10, 1000);
    const { calls, load } = gate<string>();
    const before = cache.getOrLoad('k', load);
    cache.delete('k');
    const after = cache.getOrLoad('k', load);
    assert.equal(calls.length, 2, 'a load after the delete does not join the one before it');
    calls[0]!.resolve('old');
    assert.equal(await before, 'old');
    assert.equal(cache.get('k'), undefined, 'the old read is not kept');
    calls[1]!.resolve('new');
    assert.equal(await after, 'new');
    assert.equal(cache.get('k'), 'new');
    const third = cache.getOrLoad('j', load);
    cache.clear();
    calls[2]!.resolve('stale');
    assert.equal(await third, 'stale');
    assert.equal(cache.get('j'), undefined);
    assert.equal(cache.get('k'), undefined, 'clear drops every entry');
  });

  test('deleteWhere drops the entries it selects and every load under way, whatever its key', async () => {
    const cache = new ExpiringCache<string, { id: string; owner: string }>(10, 1000);
    const rows: Array<[string, string]> = [
      ['h1', 'o1'],
      ['h2', 'o1'],
      ['h3', 'o2'],
    ];
    for (const [key, owner] of rows) await cache.getOrLoad(key, async () => ({ id: `id-${key}`, owner }));
    const { calls, load } = gate<{ id: string; owner: string }>();
    const pending = cache.getOrLoad('h4', load);
    cache.deleteWhere((_key, value) => value.owner === 'o1');
    assert.equal(cache.get('h1'), undefined);
    assert.equal(cache.get('h2'), undefined);
    assert.deepEqual(cache.get('h3'), { id: 'id-h3', owner: 'o2' }, 'not selected: kept');
    const later = cache.getOrLoad('h4', load);
    assert.equal(calls.length, 2, 'a look-up after it does not join the load before it');
    calls[0]!.resolve({ id: 'id-h4', owner: 'o1' });
    assert.deepEqual(await pending, { id: 'id-h4', owner: 'o1' });
    assert.equal(cache.get('h4'), undefined, 'the load under way is not kept');
    calls[1]!.resolve(undefined);
    assert.equal(await later, undefined);
    cache.deleteWhere((key) => key === 'h3');
    assert.equal(cache.size, 0);
  });

  test('bounded: emptied when full', async () => {
    const cache = new ExpiringCache<string, string>(2, 1000);
    await cache.getOrLoad('a', async () => 'a');
    await cache.getOrLoad('b', async () => 'b');
    assert.equal(cache.size, 2);
    await cache.getOrLoad('c', async () => 'c');
    assert.equal(cache.size, 1);
    assert.equal(cache.get('c'), 'c');
    assert.throws(() => new ExpiringCache(0), RangeError);
  });
});
