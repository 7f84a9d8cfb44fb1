import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError, toHttp } from '../../src/errors';
import {
  MAX_QUERY_CELLS,
  type QueryRequest,
  type SeriesData,
  flattenLeaves,
  parseMode,
  runQuery,
  timeframeLabel,
} from '../../src/domain/metrics/query/query';

const HOUR = 3_600_000;
const FROM = Date.UTC(2026, 0, 24, 10);
const hourAt = (h: number) => `2026-01-24T${String(h).padStart(2, '0')}:00:00Z`;
const AT = [10, 11, 12, 13, 14].map(hourAt);

// Five hourly buckets; 11:00 is empty; `legacy` only in the oldest bucket (dropped when slicing).
const SERIES: SeriesData = {
  at: AT,
  values: [
    { count: 1, legacy: 7, country: { US: 2, UK: 1 } },
    {},
    { count: 4, country: { US: 1 }, duration: { p50: 0.5 } },
    { count: 2, country: { UK: 3, EU: { FR: 1 } } },
    { count: 6, country: { US: 5 } },
  ],
};
const AVAILABLE = ['count', 'country.EU.FR', 'country.UK', 'country.US', 'duration.p50', 'legacy'];
const TIMEFRAME = {
  from: '2026-01-24T10:00:00Z',
  to: '2026-01-24T14:00:00Z',
  label: '4h',
  granularity: '1h',
};
const COUNT_ROWS = [
  [AT[0], 1],
  [AT[1], null],
  [AT[2], 4],
  [AT[3], 2],
  [AT[4], 6],
];

function request(over: Partial<QueryRequest>): QueryRequest {
  return {
    key: 'events',
    fromMs: FROM,
    toMs: FROM + 4 * HOUR,
    granularity: '1h',
    mode: 'aggregate',
    valuePath: 'count',
    aggregator: 'sum',
    slices: undefined,
    ...over,
  };
}

const query = (over: Partial<QueryRequest>, series: SeriesData = SERIES) => runQuery(request(over), series);
const values = (over: Partial<QueryRequest>, series?: SeriesData) => query(over, series).values;

/** Asserts a 422 query error with exactly this message and these extra body members. */
function assertQueryError(run: () => unknown, error: string, extra: Record<string, unknown> = {}) {
  assert.throws(run, (err: unknown) => {
    assert.ok(err instanceof AppError);
    const http = toHttp(err);
    assert.equal(http.status, 422);
    assert.deepEqual(http.body, { errors: { status: 'error', error, ...extra } });
    return true;
  });
}

/** A series of `n` hourly buckets whose `count` is 1, 2, ..., n. */
function countingSeries(n: number): SeriesData {
  const at = Array.from({ length: n }, (_, i) => hourAt(i));
  return { at, values: at.map((_, i) => ({ count: i + 1 })) };
}

describe('aggregate', () => {
  test('every aggregator over the range (missing bucket: 0 for sum, else skipped)', () => {
    assert.deepEqual(values({ aggregator: 'sum' }), [13]); // 1 + 0 + 4 + 2 + 6
    assert.deepEqual(values({ aggregator: 'mean' }), [3.25]); // 13 / 4 buckets holding a value
    assert.deepEqual(values({ aggregator: 'min' }), [1]);
    assert.deepEqual(values({ aggregator: 'max' }), [6]);
  });

  test('full body with slices 1, in the documented order', () => {
    const body = query({});
    assert.deepEqual(body, {
      status: 'ok',
      aggregator: 'sum',
      metric_key: 'events',
      value_path: 'count',
      slices: 1,
      value: 13,
      values: [13],
      count: 1,
      timeframe: {
        from: '2026-01-24T10:00:00Z',
        to: '2026-01-24T14:00:00Z',
        label: '4h',
        granularity: '1h',
      },
      available_paths: AVAILABLE,
      matched_paths: ['count'],
      table: {
        columns: ['at', 'count'],
        rows: [
          [AT[0], 1],
          [AT[1], null],
          [AT[2], 4],
          [AT[3], 2],
          [AT[4], 6],
        ],
      },
    });
    assert.deepEqual(Object.keys(body), [
      'status',
      'aggregator',
      'metric_key',
      'value_path',
      'slices',
      'value',
      'values',
      'count',
      'timeframe',
      'available_paths',
      'matched_paths',
      'table',
    ]);
  });

  test('slices 2 over 5 buckets drops the oldest and has no value', () => {
    // size 2, drop 1: groups [11:00, 12:00] and [13:00, 14:00]
    const body = query({ slices: 2 });
    assert.equal('value' in body, false);
    assert.deepEqual(body.values, [4, 8]);
    assert.equal(body.count, 2);
    assert.equal(body.slices, 2);
    assert.deepEqual(values({ slices: 2, aggregator: 'mean' }), [4, 4]); // 4/1, (2+6)/2
    assert.deepEqual(values({ slices: 2, aggregator: 'min' }), [4, 2]);
    assert.deepEqual(values({ slices: 2, aggregator: 'max' }), [4, 6]);
    // the table keeps every bucket of the range, the dropped one too
    assert.equal((body.table as { rows: unknown[] }).rows.length, 5);
  });

  test('slices 3 over 5 buckets: size 1, the two oldest dropped; string slices accepted', () => {
    assert.deepEqual(values({ slices: 3 }), [4, 2, 6]);
    assert.deepEqual(values({ slices: '3' }), [4, 2, 6]);
    assert.deepEqual(values({ slices: null }), [13]);
  });

  test('uneven bucket counts: 7 buckets holding 1..7', () => {
    const seven = countingSeries(7);
    assert.deepEqual(values({ slices: 1 }, seven), [28]);
    assert.deepEqual(values({ slices: 2 }, seven), [9, 18]); // drop 1; [2,3,4] [5,6,7]
    assert.deepEqual(values({ slices: 3 }, seven), [5, 9, 13]); // drop 1; [2,3] [4,5] [6,7]
    assert.deepEqual(values({ slices: 3, aggregator: 'mean' }, seven), [2.5, 4.5, 6.5]);
    assert.deepEqual(values({ slices: 7, aggregator: 'max' }, seven), [1, 2, 3, 4, 5, 6, 7]);
  });

  test('a group without any value: sum 0, mean/min/max null', () => {
    // duration.p50 only at 12:00; slices 2 -> [11:00, 12:00] [13:00, 14:00]
    assert.deepEqual(values({ valuePath: 'duration.p50', slices: 2 }), [0.5, 0]);
    for (const aggregator of ['mean', 'min', 'max']) {
      assert.deepEqual(values({ valuePath: 'duration.p50', slices: 2, aggregator }), [0.5, null]);
    }
    // legacy is only in the dropped oldest bucket, yet still a known path
    assert.deepEqual(values({ valuePath: 'legacy', slices: 2, aggregator: 'max' }), [null, null]);
    assert.deepEqual(values({ valuePath: 'legacy' }), [7]);
  });

  test('nested path and case-insensitive aggregator', () => {
    const body = query({ valuePath: 'country.EU.FR', aggregator: 'SUM' });
    assert.equal(body.aggregator, 'sum');
    assert.equal(body.value, 1);
    assert.deepEqual(body.matched_paths, ['country.EU.FR']);
    assert.deepEqual(values({ valuePath: 'country.US', aggregator: 'Mean' }), [8 / 3]); // (2+1+5)/3
  });

  test('compensated summation and non-finite results', () => {
    const at = [0, 1, 2].map(hourAt);
    const cancel: SeriesData = { at, values: [{ x: 1e100 }, { x: 1 }, { x: -1e100 }] };
    assert.deepEqual(values({ valuePath: 'x' }, cancel), [1]); // plain summation gives 0
    const tenths = countingSeries(10);
    tenths.values = tenths.values.map(() => ({ x: 0.1 }));
    // plain summation gives 0.9999999999999999
    assert.deepEqual(values({ valuePath: 'x' }, tenths), [1]);
    const huge: SeriesData = { at: at.slice(0, 2), values: [{ x: 1e308 }, { x: 1e308 }] };
    assert.deepEqual(values({ valuePath: 'x' }, huge), [null]);
    assert.deepEqual(values({ valuePath: 'x', aggregator: 'mean' }, huge), [null]);
    assert.deepEqual(values({ valuePath: 'x', aggregator: 'max' }, huge), [1e308]);
  });

  test('non-numeric and non-finite leaves are not paths', () => {
    const odd: SeriesData = {
      at: [0, 1].map(hourAt),
      values: [
        { a: '5', b: null, c: [1], d: Number.NaN, e: true },
        { f: Number.POSITIVE_INFINITY, g: 2 },
      ],
    };
    assert.deepEqual(query({ valuePath: 'g' }, odd).available_paths, ['g']);
  });

  test('key order changing between buckets, and a dotted key colliding with nesting', () => {
    const at = [0, 1, 2, 3].map(hourAt);
    const shuffled: SeriesData = {
      at,
      values: [{ x: 1, y: 2 }, { y: 3, x: 4 }, { y: 10 }, { z: { w: 1 }, x: 100 }],
    };
    assert.deepEqual(values({ valuePath: 'x' }, shuffled), [105]); // 1 + 4 + 100
    assert.deepEqual(values({ valuePath: 'y' }, shuffled), [15]); // 2 + 3 + 10
    assert.deepEqual(query({ valuePath: 'x' }, shuffled).available_paths, ['x', 'y', 'z.w']);
    // `a.b` spelled twice in one bucket: the later key wins, and the path is listed once
    const dotted: SeriesData = { at: at.slice(0, 2), values: [{ 'a.b': 1, a: { b: 2 } }, { 'a.b': 5 }] };
    const body = query({ valuePath: 'a.b' }, dotted);
    assert.deepEqual(body.values, [7]); // 2 + 5
    assert.deepEqual(body.available_paths, ['a.b']);
  });

  test('leaves nested deeper than 64 levels are not paths', () => {
    const nest = (levels: number) => {
      let v: Record<string, unknown> = { x: 1 };
      for (let i = 1; i < levels; i++) v = { k: v };
      return v;
    };
    const path64 = `${'k.'.repeat(63)}x`;
    const one = (levels: number): SeriesData => ({ at: [hourAt(0)], values: [nest(levels)] });
    assert.deepEqual(query({ valuePath: path64 }, one(64)).available_paths, [path64]);
    assertQueryError(() => query({ valuePath: `k.${path64}` }, one(65)), `Unknown path(s): k.${path64}`, {
      missing_paths: [`k.${path64}`],
      available_paths: [],
    });
  });
});

describe('timeline', () => {
  test('one leaf, missing bucket as 0', () => {
    const body = query({ mode: 'timeline', aggregator: undefined });
    assert.deepEqual(body, {
      status: 'ok',
      formatter: 'timeline',
      metric_key: 'events',
      value_path: 'count',
      slices: 1,
      timeframe: TIMEFRAME,
      result: {
        count: [
          { at: AT[0], value: 1 },
          { at: AT[1], value: 0 },
          { at: AT[2], value: 4 },
          { at: AT[3], value: 2 },
          { at: AT[4], value: 6 },
        ],
      },
      available_paths: AVAILABLE,
      matched_paths: ['count'],
      table: { columns: ['at', 'count'], rows: COUNT_ROWS },
    });
  });

  test('slices 2 gives two chronological arrays without the oldest bucket', () => {
    const body = query({ mode: 'timeline', slices: 2 });
    assert.deepEqual(body.result, {
      count: [
        [
          { at: AT[1], value: 0 },
          { at: AT[2], value: 4 },
        ],
        [
          { at: AT[3], value: 2 },
          { at: AT[4], value: 6 },
        ],
      ],
    });
  });

  test('slices 3 over 7 buckets', () => {
    const seven = countingSeries(7);
    const result = query({ mode: 'timeline', slices: 3 }, seven).result as Record<string, unknown>;
    assert.deepEqual(result.count, [
      [
        { at: hourAt(1), value: 2 },
        { at: hourAt(2), value: 3 },
      ],
      [
        { at: hourAt(3), value: 4 },
        { at: hourAt(4), value: 5 },
      ],
      [
        { at: hourAt(5), value: 6 },
        { at: hourAt(6), value: 7 },
      ],
    ]);
  });

  test('a map path expands to its leaves; the aggregator is ignored', () => {
    const body = query({ mode: 'timeline', valuePath: 'country', aggregator: 'median' });
    assert.deepEqual(body.matched_paths, ['country.EU.FR', 'country.UK', 'country.US']);
    const result = body.result as Record<string, Array<{ at: string; value: number }>>;
    assert.deepEqual(Object.keys(result), ['country.EU.FR', 'country.UK', 'country.US']);
    assert.deepEqual(
      result['country.US']!.map((p) => p.value),
      [2, 0, 1, 0, 5],
    );
    assert.deepEqual(
      result['country.UK']!.map((p) => p.value),
      [1, 0, 0, 3, 0],
    );
    assert.deepEqual(
      result['country.EU.FR']!.map((p) => p.value),
      [0, 0, 0, 1, 0],
    );
  });
});

describe('category', () => {
  test('a map path expands to nested leaves, summed over the range, with its table', () => {
    const body = query({ mode: 'category', valuePath: 'country', aggregator: undefined });
    assert.deepEqual(body, {
      status: 'ok',
      formatter: 'category',
      metric_key: 'events',
      value_path: 'country',
      slices: 1,
      timeframe: TIMEFRAME,
      result: { 'country.EU.FR': 1, 'country.UK': 4, 'country.US': 8 },
      available_paths: AVAILABLE,
      matched_paths: ['country.EU.FR', 'country.UK', 'country.US'],
      table: {
        columns: ['at', 'country.EU.FR', 'country.UK', 'country.US'],
        rows: [
          [AT[0], null, 1, 2],
          [AT[1], null, null, null],
          [AT[2], null, null, 1],
          [AT[3], 1, 3, null],
          [AT[4], null, null, 5],
        ],
      },
    });
  });

  test('slices 2: one map per slice, every matched path in each', () => {
    const body = query({ mode: 'category', valuePath: 'country', slices: 2 });
    assert.deepEqual(body.result, [
      { 'country.EU.FR': 0, 'country.UK': 0, 'country.US': 1 }, // 11:00, 12:00
      { 'country.EU.FR': 1, 'country.UK': 3, 'country.US': 5 }, // 13:00, 14:00
    ]);
  });

  test('a leaf path gives itself; a deeper map its leaves; a name prefix is no match', () => {
    const category = (valuePath: string) => query({ mode: 'category', valuePath }).result;
    assert.deepEqual(category('country.US'), { 'country.US': 8 });
    assert.deepEqual(category('country.EU'), { 'country.EU.FR': 1 });
    assert.deepEqual(category('count'), { count: 13 });
    assertQueryError(
      () => query({ mode: 'category', valuePath: 'coun' }),
      'No matching data found for path coun in the selected timeframe.',
      { available_paths: AVAILABLE },
    );
  });
});

describe('errors', () => {
  test('slices must be a positive integer', () => {
    const bad = [0, -1, 1.5, '1.5', '', '0', ' 2', '+2', 'abc', true, {}, [2], 2 ** 60, '9'.repeat(20)];
    for (const slices of bad) {
      assertQueryError(() => query({ slices }), 'slices must be a positive integer.');
    }
  });

  test('more slices than buckets', () => {
    assertQueryError(() => query({ slices: 6 }), 'slices (6) cannot exceed the number of buckets (5).');
    assertQueryError(
      () => query({}, { at: [], values: [] }),
      'slices (1) cannot exceed the number of buckets (0).',
    );
  });

  test('wildcards in value_path, in every mode', () => {
    for (const mode of ['aggregate', 'timeline', 'category'] as const) {
      assertQueryError(
        () => query({ mode, valuePath: 'country.*' }),
        'Wildcards are not supported in value_path "country.*"',
      );
    }
  });

  test('aggregator missing, unknown or not a string', () => {
    for (const aggregator of [undefined, null, '', '  ']) {
      assertQueryError(
        () => query({ aggregator }),
        'Aggregator must be provided (options: max, mean, min, sum).',
      );
    }
    const allowed = { allowed: ['max', 'mean', 'min', 'sum'] };
    assertQueryError(
      () => query({ aggregator: 'median' }),
      'Unknown aggregator "median" (options: max, mean, min, sum).',
      allowed,
    );
    assertQueryError(
      () => query({ aggregator: 'x'.repeat(100) }),
      `Unknown aggregator "${'x'.repeat(64)}..." (options: max, mean, min, sum).`,
      allowed,
    );
    assertQueryError(
      () => query({ aggregator: 5 }),
      'Aggregator must be a string (options: max, mean, min, sum).',
      allowed,
    );
  });

  test('aggregate on an unknown path or on a map path', () => {
    for (const valuePath of ['nope', 'country', 'country.EU']) {
      assertQueryError(() => query({ valuePath }), `Unknown path(s): ${valuePath}`, {
        missing_paths: [valuePath],
        available_paths: AVAILABLE,
      });
    }
  });

  test('timeline and category without a match', () => {
    for (const mode of ['timeline', 'category'] as const) {
      assertQueryError(
        () => query({ mode, valuePath: 'nope' }),
        'No matching data found for path nope in the selected timeframe.',
        { available_paths: AVAILABLE },
      );
    }
  });

  test('answers larger than the cell limit are refused', () => {
    // 1,001 buckets with two own leaves each: 2,002 matched paths x 1,001 buckets > 2,000,000
    assert.equal(MAX_QUERY_CELLS, 2_000_000);
    const at = Array.from({ length: 1001 }, (_, i) => hourAt(i));
    const values = at.map((_, i) => ({ m: { [`a${i}`]: 1, [`b${i}`]: 1 } }));
    const wide = { at, values };
    assertQueryError(
      () => query({ mode: 'category', valuePath: 'm' }, wide),
      'value_path m matches 2002 paths over 1001 buckets, more than 2000000 values; ' +
        'narrow value_path or the timeframe.',
      { matched_count: 2002, limit: 2_000_000 },
    );
    // 1,000 buckets stay within the limit: 2,000 x 1,000 = 2,000,000
    wide.at.pop();
    wide.values.pop();
    const result = query({ mode: 'category', valuePath: 'm' }, wide).result as object;
    assert.equal(Object.keys(result).length, 2000);
  });

  test('a series whose arrays differ in length is a programming error, not a query error', () => {
    assert.throws(
      () => query({}, { at: AT, values: [] }),
      (err: unknown) => err instanceof Error && !(err instanceof AppError),
    );
  });
});

describe('timeframe', () => {
  test('labels in the largest whole unit', () => {
    const cases: Array<[number, string]> = [
      [24 * HOUR, '1d'],
      [7 * 24 * HOUR, '7d'],
      [5 * HOUR, '5h'],
      [25 * HOUR, '25h'],
      [90 * 60_000, '90m'],
      [60_000, '1m'],
      [45_000, '45s'],
      [1_500, 'custom'],
      [0, 'custom'],
      [-HOUR, 'custom'],
    ];
    for (const [span, label] of cases) {
      assert.equal(timeframeLabel(FROM, FROM + span), label, `span ${span}`);
    }
  });

  test('from and to in UTC to the second', () => {
    const body = query({ fromMs: FROM + 250, toMs: FROM + 24 * HOUR + 250, granularity: '1d' });
    assert.deepEqual(body.timeframe, {
      from: '2026-01-24T10:00:00Z',
      to: '2026-01-25T10:00:00Z',
      label: '1d',
      granularity: '1d',
    });
  });
});

describe('parseMode', () => {
  test('case-insensitive, null for anything else', () => {
    assert.equal(parseMode('aggregate'), 'aggregate');
    assert.equal(parseMode('TimeLine'), 'timeline');
    assert.equal(parseMode('CATEGORY'), 'category');
    for (const raw of ['', 'format', ' timeline', 'sum', 1, null, undefined, ['timeline']]) {
      assert.equal(parseMode(raw), null, String(raw));
    }
  });
});

describe('flattenLeaves', () => {
  test('dot paths of finite numeric leaves, with prefix and target map', () => {
    assert.deepEqual(
      [...flattenLeaves({ a: 1, b: { c: 2, d: { e: 3.5 } }, s: 'x', n: null, l: [4] })],
      [
        ['a', 1],
        ['b.c', 2],
        ['b.d.e', 3.5],
      ],
    );
    const out = new Map([['keep', 9]]);
    assert.equal(flattenLeaves({ x: 1 }, 'p', out), out);
    assert.deepEqual(
      [...out],
      [
        ['keep', 9],
        ['p.x', 1],
      ],
    );
  });

  test('a dotted key and the nesting it mimics are one path; the later wins', () => {
    assert.deepEqual([...flattenLeaves({ 'a.b': 1, a: { b: 2 } })], [['a.b', 2]]);
  });

  test('nesting beyond 64 levels is ignored', () => {
    const deep = (levels: number) => {
      let v: Record<string, unknown> = { x: 1 };
      for (let i = 1; i < levels; i++) v = { k: v };
      return v;
    };
    assert.equal(flattenLeaves(deep(64)).size, 1);
    assert.equal(flattenLeaves(deep(65)).size, 0);
  });
});
