import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyWriteSet, type BucketOps, type WriteSet } from '../../src/drivers/types';
import { parsePoint } from '../../src/domain/metrics/ingest/points';
import { PathSplitter, applyBucketOps, nestLeaves, type Tree } from '../../src/model/leaves';
import {
  PlanCache,
  SYSTEM_KEY,
  finishMerging,
  mergeIntoPending,
  mergePoints,
  planFor,
} from '../../src/domain/metrics/merge';

const source = {
  id: 'src-1',
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: ['1m', '1h', '1d'],
};
const plan = planFor(source);
const T = Date.UTC(2025, 2, 4, 10, 20, 30);
const iso = (ms: number) => new Date(ms).toISOString();

function point(body: Record<string, unknown>) {
  return parsePoint({ key: 'orders', at: iso(T), ...body });
}

function opsOf(writes: WriteSet, key: string, granularity: string, bucket: number): BucketOps {
  const ops = writes.sources.get(source.id)?.get(key)?.get(granularity)?.get(bucket);
  assert.ok(ops, `no ops for ${key} ${granularity} ${iso(bucket)}`);
  return ops;
}

/** The bucket's stored values after applying its ops to `stored`. */
function after(ops: BucketOps, stored: Tree = {}): Tree {
  applyBucketOps(stored, ops, new PathSplitter());
  return stored;
}

describe('mergePoints', () => {
  test('one bucket per granularity, floored; each point bumps the system key', () => {
    const writes = emptyWriteSet();
    mergePoints(writes, plan, [point({ values: { count: 1, amount: { net: 2.5 } } })]);
    const minute = Date.UTC(2025, 2, 4, 10, 20);
    const hour = Date.UTC(2025, 2, 4, 10);
    const day = Date.UTC(2025, 2, 4);
    for (const [g, bucket] of [
      ['1m', minute],
      ['1h', hour],
      ['1d', day],
    ] as const) {
      assert.deepEqual(after(opsOf(writes, 'orders', g, bucket)), { count: 1, amount: { net: 2.5 } });
      assert.deepEqual(after(opsOf(writes, SYSTEM_KEY, g, bucket)), { count: 1, keys: { orders: 1 } });
    }
  });

  test('tracks add up across points and requests; buckets stay apart', () => {
    const writes = emptyWriteSet();
    mergePoints(writes, plan, [point({ values: { n: 1 } }), point({ values: { n: 2 } })]);
    mergePoints(writes, plan, [point({ at: iso(T + 60_000), values: { n: 4 } })]);
    assert.deepEqual(after(opsOf(writes, 'orders', '1m', Date.UTC(2025, 2, 4, 10, 20))), { n: 3 });
    assert.deepEqual(after(opsOf(writes, 'orders', '1m', Date.UTC(2025, 2, 4, 10, 21))), { n: 4 });
    assert.deepEqual(after(opsOf(writes, 'orders', '1h', Date.UTC(2025, 2, 4, 10))), { n: 7 });
    assert.deepEqual(after(opsOf(writes, SYSTEM_KEY, '1h', Date.UTC(2025, 2, 4, 10))), {
      count: 3,
      keys: { orders: 3 },
    });
  });

  test('points of one bucket with different leaves sum per leaf', () => {
    const writes = emptyWriteSet();
    mergePoints(writes, plan, [
      point({ values: { a: 1, b: 1 } }),
      point({ values: { b: 2, c: 3 } }),
      point({ values: { a: 1, b: 1 } }),
      point({ values: { b: 1, a: 1 } }),
    ]);
    assert.deepEqual(after(opsOf(writes, 'orders', '1m', Date.UTC(2025, 2, 4, 10, 20))), {
      a: 3,
      b: 5,
      c: 3,
    });
  });

  test('assert then track: the track adds to the asserted value; other stored leaves stay', () => {
    const writes = emptyWriteSet();
    mergePoints(writes, plan, [
      point({ values: { level: 5 }, operation: 'assert' }),
      point({ values: { level: 2, other: 1 } }),
    ]);
    const ops = opsOf(writes, 'orders', '1h', Date.UTC(2025, 2, 4, 10));
    assert.deepEqual(after(ops, { level: 100, kept: 9 }), { level: 7, kept: 9, other: 1 });
  });

  test('track then assert: the assert replaces, earlier tracks included', () => {
    const writes = emptyWriteSet();
    mergePoints(writes, plan, [
      point({ values: { level: 2 } }),
      point({ values: { level: 5 }, operation: 'assert' }),
    ]);
    assert.deepEqual(after(opsOf(writes, 'orders', '1h', Date.UTC(2025, 2, 4, 10)), { level: 100 }), {
      level: 5,
    });
  });

  test('asserts and tracks interleaved across buckets keep their order in the shared bucket', () => {
    const writes = emptyWriteSet();
    const at = (minute: number) => iso(Date.UTC(2025, 2, 4, 10, minute, 30));
    mergePoints(writes, plan, [
      point({ at: at(20), values: { level: 5 }, operation: 'assert' }),
      point({ at: at(21), values: { level: 1 } }),
      point({ at: at(20), values: { level: 3 }, operation: 'assert' }),
      point({ at: at(22), values: { level: 2 } }),
    ]);
    const minute = (m: number) => opsOf(writes, 'orders', '1m', Date.UTC(2025, 2, 4, 10, m));
    assert.deepEqual(after(opsOf(writes, 'orders', '1h', Date.UTC(2025, 2, 4, 10)), { level: 100 }), {
      level: 5,
    });
    assert.deepEqual(after(minute(20), { level: 100 }), { level: 3 });
    assert.deepEqual(after(minute(21), { level: 100 }), { level: 101 });
    assert.deepEqual(after(minute(22), { level: 100 }), { level: 102 });
    assert.deepEqual(after(opsOf(writes, SYSTEM_KEY, '1h', Date.UTC(2025, 2, 4, 10))), {
      count: 4,
      keys: { orders: 4 },
    });
  });

  test('granularities that do not nest: one bucket of the finest, two of the other', () => {
    const odd = planFor({ ...source, id: 'src-3', granularities: ['7m', '5m'] });
    const writes = emptyWriteSet();
    const at = (m: number, s: number) => iso(Date.UTC(2025, 2, 4, 10, m, s));
    mergePoints(writes, odd, [
      parsePoint({ key: 'k', at: at(5, 30), values: { n: 1 } }),
      parsePoint({ key: 'k', at: at(7, 30), values: { n: 10 } }),
      parsePoint({ key: 'k', at: at(6, 0), values: { n: 100 } }),
    ]);
    const buckets = (g: string) =>
      [...writes.sources.get('src-3')!.get('k')!.get(g)!].map(([b, ops]) => [
        iso(b).slice(11, 16),
        after(ops),
      ]);
    assert.deepEqual(buckets('5m'), [['10:05', { n: 111 }]]);
    assert.deepEqual(buckets('7m').sort(), [
      ['10:00', { n: 101 }],
      ['10:07', { n: 10 }],
    ]);
  });

  test('untracked: values under the metric key, bookkeeping under keys.__untracked__', () => {
    const writes = emptyWriteSet();
    mergePoints(writes, plan, [
      point({ key: 'user.42', values: { n: 1 }, untracked: true }),
      point({ key: 'a.b', values: { n: 1 } }),
    ]);
    const hour = Date.UTC(2025, 2, 4, 10);
    assert.deepEqual(after(opsOf(writes, 'user.42', '1h', hour)), { n: 1 });
    assert.deepEqual(after(opsOf(writes, SYSTEM_KEY, '1h', hour)), {
      count: 2,
      keys: { __untracked__: 1, a: { b: 1 } },
    });
  });

  test('granularities of another zone floor on its wall clock', () => {
    const berlin = planFor({ ...source, id: 'src-2', timeZone: 'Europe/Berlin', granularities: ['1d'] });
    const writes = emptyWriteSet();
    mergePoints(writes, berlin, [point({ at: '2025-03-04T23:30:00Z', values: { n: 1 } })]);
    const days = [...writes.sources.get('src-2')!.get('orders')!.get('1d')!.keys()];
    assert.deepEqual(days.map(iso), ['2025-03-04T23:00:00.000Z']); // 5 March, 00:00 +01:00
  });

  test('PlanCache reuses a plan until the source settings change', () => {
    const cache = new PlanCache();
    assert.equal(cache.get(source), cache.get({ ...source }));
    assert.notEqual(cache.get(source), cache.get({ ...source, timeZone: 'Europe/Berlin' }));
  });

  test('PlanCache finds a frozen source by identity, and only a frozen one', () => {
    const cache = new PlanCache();
    const frozen = Object.freeze({ ...source, granularities: Object.freeze([...source.granularities]) });
    assert.equal(cache.get(frozen), cache.get({ ...source }));
    const open = { ...source, granularities: [...source.granularities] };
    const first = cache.get(open);
    open.granularities.push('1y'); // an unfrozen source may change: its settings decide again
    assert.notEqual(cache.get(open), first);
    assert.deepEqual(
      cache.get(open).granularities.map((g) => g.text),
      ['1m', '1h', '1d', '1y'],
    );
  });
});

/** Write sets as comparable nested arrays (maps in insertion order). */
function dump(writes: WriteSet): unknown {
  const walk = (value: unknown): unknown =>
    value instanceof Map
      ? [...value].map(([k, v]) => [k, walk(v)])
      : value && typeof value === 'object'
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v)]))
        : value;
  return walk(writes.sources); // the merge state aside
}

describe('mergeIntoPending', () => {
  const requests = () => [
    [point({ values: { n: 1, amount: { net: 2 } } }), point({ at: iso(T + 60_000), values: { n: 2 } })],
    [point({ key: 'other', values: { n: 5 } })],
    [point({ values: { n: 7 }, operation: 'assert' }), point({ values: { n: 1 } })],
    [
      point({ key: 'user.1', values: { n: 1 }, untracked: true }),
      point({ at: iso(T + 3_600_000), values: { n: 3 } }),
    ],
    [point({ values: { amount: { net: 4 } } })],
  ];

  test('merging request after request into one write set, then finishing it, equals merging each on its own', () => {
    const cached = emptyWriteSet();
    for (const points of requests()) mergeIntoPending(cached, plan, points);
    finishMerging(cached);
    const separate = emptyWriteSet();
    for (const points of requests()) mergePoints(separate, plan, points);
    assert.deepEqual(dump(cached), dump(separate));
    assert.deepEqual(after(opsOf(cached, 'orders', '1h', Date.UTC(2025, 2, 4, 10)), { n: 100 }), {
      n: 8,
      amount: { net: 6 },
    });
  });

  test('a new write set starts from nothing', () => {
    const first = emptyWriteSet();
    mergeIntoPending(first, plan, [point({ values: { n: 1 } })]);
    const second = emptyWriteSet();
    mergeIntoPending(second, plan, [point({ values: { n: 2 } })]);
    finishMerging(second);
    assert.deepEqual(after(opsOf(second, 'orders', '1m', Date.UTC(2025, 2, 4, 10, 20))), { n: 2 });
    assert.deepEqual(after(opsOf(second, SYSTEM_KEY, '1m', Date.UTC(2025, 2, 4, 10, 20))), {
      count: 1,
      keys: { orders: 1 },
    });
  });
});

describe('stored values', () => {
  const splitter = new PathSplitter();
  test('a later map replaces a leaf and a later leaf replaces a map', () => {
    const writes = emptyWriteSet();
    mergePoints(writes, plan, [point({ values: { a: { b: 2 } } })]);
    assert.deepEqual(after(opsOf(writes, 'orders', '1h', Date.UTC(2025, 2, 4, 10)), { a: 1 }), {
      a: { b: 2 },
    });
    assert.deepEqual(
      nestLeaves(
        [
          ['x.y', 1],
          ['x', 2],
        ],
        splitter,
      ),
      { x: 2 },
    );
  });

  test('a segment named __proto__ is stored as data, never as a prototype', () => {
    const tree = nestLeaves([['__proto__.polluted', 1]], splitter);
    assert.equal(JSON.stringify(tree), '{"__proto__":{"polluted":1}}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    const stored = JSON.parse('{"__proto__":{"polluted":1}}') as Tree;
    applyBucketOps(stored, { add: new Map([['__proto__.polluted', 2]]), set: null }, splitter);
    assert.equal(JSON.stringify(stored), '{"__proto__":{"polluted":3}}');
    assert.equal(Object.getPrototypeOf(stored), Object.prototype);
  });
});

describe('merging in groups', () => {
  /** Every bucket of a write set with its ops applied to an empty tree. */
  function applied(writes: WriteSet): Record<string, Tree> {
    const out: Record<string, Tree> = {};
    for (const [key, grans] of writes.sources.get(source.id) ?? []) {
      for (const [gran, buckets] of grans) {
        for (const [bucket, ops] of buckets) out[`${key} ${gran} ${iso(bucket)}`] = after(ops);
      }
    }
    return out;
  }

  test('equals spreading every point on its own, for a random mix of keys, times, shapes and asserts', () => {
    let seed = 7;
    const random = (n: number) => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) % n;
    const shapes = [
      (v: number) => ({ n: v, amount: { net: v * 2 } }),
      (v: number) => ({ n: v }),
      (v: number) => ({ m: { x: v } }),
    ];
    const points = Array.from({ length: 600 }, () =>
      point({
        key: ['orders', 'visits', 'user.1'][random(3)],
        at: iso(Date.UTC(2025, 2, 4, 10) + random(4) * 3_600_000 + random(90) * 60_000),
        values: shapes[random(3)]!(random(100)),
        untracked: random(5) === 0,
        ...(random(40) === 0 ? { operation: 'assert' } : {}),
      }),
    );
    const grouped = emptyWriteSet();
    mergePoints(grouped, plan, points);
    const oneByOne = emptyWriteSet();
    for (const p of points) mergePoints(oneByOne, plan, [p]);
    assert.deepEqual(applied(grouped), applied(oneByOne));
  });

  test('a window of more distinct keys than a merger holds groups for (10,000) still sums every point once', () => {
    const points = Array.from({ length: 25_000 }, (_, i) =>
      point({
        key: `k${i % 12_000}`,
        at: iso(Date.UTC(2025, 2, 4, 10) + (i % 7) * 60_000),
        values: { n: 1 + (i % 3) },
      }),
    );
    const window = emptyWriteSet();
    for (let i = 0; i < points.length; i += 1000) mergeIntoPending(window, plan, points.slice(i, i + 1000));
    finishMerging(window);
    const oneByOne = emptyWriteSet();
    for (const p of points) mergePoints(oneByOne, plan, [p]);
    assert.deepEqual(applied(window), applied(oneByOne));
  });
});
