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

/** A cluster project's keys as a node reads them: `stored` is what the cluster holds now. */
function clusterReader(stored: string[]) {
  const calls: Array<number | undefined> = [];
  let failing: Error | null = null;
  let gate: Promise<void> | null = null;
  return {
    calls,
    fail: (err: Error | null) => (failing = err),
    hold: (until: Promise<void> | null) => (gate = until),
    read: async (recentMs?: number) => {
      calls.push(recentMs);
      if (gate) await gate;
      if (failing) throw failing;
      return [...stored];
    },
  };
}

test('a cluster project: the first write waits for the seed; a failed seed refuses it and is read again', async () => {
  const stored = keys('s', 4);
  const reader = clusterReader(stored);
  const limit = new KeyLimit(
    5,
    () => [],
    () => reader.read,
  );
  const down = new Error('the cluster is down');
  reader.fail(down);
  await assert.rejects(limit.admitAll(source('c'), points(['n1'])), down);
  assert.equal(limit.keysOf('c'), null, 'forgotten: the next write reads again');
  reader.fail(null);
  let open!: () => void;
  reader.hold(new Promise<void>((resolve) => (open = resolve)));
  let settled = false;
  const first = limit.admitAll(source('c'), points(['n1'])).finally(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, false, 'the write waits for the read');
  open();
  await first;
  assert.equal(limit.keysOf('c'), 5);
  assert.deepEqual(reader.calls, [undefined, undefined], 'seeds read every row');
  await assert.rejects(limit.admitAll(source('c'), points(['n2'])), KeyLimitError);
});

test('a cluster project: a set older than refreshMs waits for a refresh; half as old refreshes behind the write', async () => {
  const stored = keys('s', 2);
  const reader = clusterReader(stored);
  const limit = new KeyLimit(
    5,
    () => [],
    () => reader.read,
  );
  let now = 1_000_000;
  limit.clock = () => now;
  limit.refreshMs = 10_000;
  await limit.admitAll(source('c'), points(['n1']));
  assert.equal(limit.keysOf('c'), 3);
  stored.push('o1', 'o2'); // written through another node
  now += 4_999;
  await limit.admitAll(source('c'), points(['n1']));
  assert.equal(reader.calls.length, 1, 'a set younger than half the interval is not read again');

  // older than the interval: the next write waits for the refresh and counts the other node's keys
  now += 5_001;
  await assert.rejects(limit.admitAll(source('c'), points(['n2', 'n3'])), /holds 5 keys/);
  assert.equal(reader.calls.length, 2);
  assert.equal(reader.calls[1], 20_000, 'a refresh reads the rows since the last read and an interval more');

  // a refresh that fails keeps the set and refuses the writes waiting on it; the next one retries
  now += 10_000;
  const down = new Error('the cluster is down');
  reader.fail(down);
  await assert.rejects(limit.admitAll(source('c'), points(['n1'])), down);
  assert.equal(limit.keysOf('c'), 5);
  reader.fail(null);
  await limit.admitAll(source('c'), points(['n1']));
  assert.equal(reader.calls.length, 4);

  // between half the interval and the interval: the write goes on, the refresh runs behind it
  stored.push('o3');
  now += 6_000;
  let open!: () => void;
  reader.hold(new Promise<void>((resolve) => (open = resolve)));
  await limit.admitAll(source('c'), points(['n1']));
  assert.equal(reader.calls.length, 5);
  assert.equal(limit.keysOf('c'), 5, 'admitted before the refresh read anything');
  await limit.admitSome(source('c'), points(['n1']));
  assert.equal(reader.calls.length, 5, 'one refresh at a time');
  // the refresh outlasts the interval: the writes from then on wait for it
  now += 4_000;
  let settled = false;
  const late = limit.admitAll(source('c'), points(['n1'])).finally(() => (settled = true));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(settled, false, 'a write with a set older than the interval waits');
  open();
  await late;
  assert.equal(reader.calls.length, 5);
  assert.equal(limit.keysOf('c'), 6);
});
