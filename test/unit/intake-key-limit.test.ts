// The intake's key limit on its own: counting, all-or-nothing and partial admission, and a large
// source's keys read in pages that let other sources' writes through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KeyLimit, KeyLimitError, SEED_PAGE } from '../../src/intake/key-limit';
import type { IntakePoint } from '../../src/intake/mapping';
import type { Source } from '../../src/model/source';

const source = (id: string) => ({ id, type: 'project' }) as Source;
const points = (keys: string[]): IntakePoint[] =>
  keys.flatMap((key) => [
    { key, at: '2026-01-24T10:00:00.000Z', operation: 'track' as const, values: { v: { sum: 1, count: 1 } } },
    { key, at: '2026-01-24T10:00:00.000Z', operation: 'assert' as const, values: { v: { last: 1 } } },
  ]);
const keys = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

test('admitAll counts distinct keys and refuses, uncounted, a write that would pass the limit', async () => {
  const limit = new KeyLimit(3, () => []);
  await limit.admitAll(source('a'), points(['x', 'y', 'x']));
  assert.equal(limit.keysOf('a'), 2);
  await assert.rejects(limit.admitAll(source('a'), points(['x', 'p', 'q'])), KeyLimitError);
  assert.equal(limit.keysOf('a'), 2);
  await limit.admitAll(source('a'), points(['x', 'y', 'p']));
  assert.equal(limit.keysOf('a'), 3);
  await limit.admitAll(source('a'), points(['p', 'x']));
  assert.equal(limit.keysOf('b'), null);
});

test('admitSome keeps known keys and new ones while there is room, and drops the rest', async () => {
  const limit = new KeyLimit(3, () => []);
  await limit.admitSome(source('a'), points(['x']));
  const got = await limit.admitSome(source('a'), points(['n1', 'x', 'n2', 'n3', 'n2']));
  assert.deepEqual([...new Set(got.points.map((p) => p.key))], ['n1', 'x', 'n2']);
  assert.equal(got.dropped, 2);
});

test('stored keys are read in pages, and another source is answered between them', async () => {
  const stored = keys('k', SEED_PAGE * 5).sort();
  let pagesServed = 0;
  const limit = new KeyLimit(1_000_000, (s, after, n) => {
    if (s.id !== 'big') return [];
    pagesServed++;
    return stored.filter((k) => k > after).slice(0, n);
  });
  let bigDone = false;
  const big = limit.admitAll(source('big'), points(['new'])).then(() => (bigDone = true));
  await limit.admitAll(source('small'), points(['s']));
  assert.equal(bigDone, false);
  assert.ok(pagesServed < 6, `the small source waited for ${pagesServed} pages`);
  await big;
  assert.equal(pagesServed, 6);
  assert.equal(limit.keysOf('big'), SEED_PAGE * 5 + 1);
  await assert.rejects(
    new KeyLimit(SEED_PAGE * 5, (_s, after, n) => stored.filter((k) => k > after).slice(0, n)).admitAll(
      source('big'),
      points(['k1', 'new']),
    ),
    /holds 10000 keys and this write would add 1 new ones/,
  );
});
