// POST /api/v1/metrics/query through HTTP: every mode, aggregator and slicing rule, with numbers
// computed by hand from the points written below.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  startTestServer,
} from '../helpers/server';

// Five 1h buckets 00:00..04:00 (UTC project):
//   00:00  orders 2, revenue.eur 10, revenue.usd 4
//   01:00  orders 1+3 = 4, revenue.eur 5
//   02:00  (empty)
//   03:00  orders 4, revenue.usd 6
//   04:00  (empty)
const POINTS = [
  { at: '2026-03-01T00:10:00Z', values: { orders: 2, revenue: { eur: 10, usd: 4 } } },
  { at: '2026-03-01T01:20:00Z', values: { orders: 1, revenue: { eur: 5 } } },
  { at: '2026-03-01T01:40:00Z', values: { orders: 3 } },
  { at: '2026-03-01T03:00:00Z', values: { orders: 4, revenue: { usd: 6 } } },
];
const AT = ['00', '01', '02', '03', '04'].map((h) => `2026-03-01T${h}:00:00Z`);
const RANGE = { key: 'shop', from: '2026-03-01T00:00:00Z', to: '2026-03-01T04:00:00Z', granularity: '1h' };
const AVAILABLE = ['orders', 'revenue.eur', 'revenue.usd'];

describe('metrics query over HTTP', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  const query = (body: Record<string, unknown>) =>
    request(
      server,
      'POST',
      '/api/v1/metrics/query',
      { ...RANGE, ...body },
      { token: agent.sourceToken, sourceId: agent.sourceId },
    );
  const data = async (body: Record<string, unknown>) => {
    const res = await query(body);
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };

  before(async () => {
    server = await startTestServer();
    agent = await createProjectWithToken(server, { granularities: '1h,1d' });
    const res = await request(
      server,
      'POST',
      '/api/v1/metrics/batch',
      { points: POINTS.map((p) => ({ key: 'shop', ...p })) },
      { token: agent.sourceToken, sourceId: agent.sourceId },
    );
    assert.equal(res.status, 201, res.text);
  });
  after(() => server.stop());

  test('aggregate, one slice: value, values, count, timeframe, paths and table', async () => {
    const d = await data({ mode: 'aggregate', aggregator: 'sum', value_path: 'orders' });
    assert.deepEqual(d, {
      status: 'ok',
      aggregator: 'sum',
      metric_key: 'shop',
      value_path: 'orders',
      slices: 1,
      value: 10,
      values: [10],
      count: 1,
      timeframe: { from: '2026-03-01T00:00:00Z', to: '2026-03-01T04:00:00Z', label: '4h', granularity: '1h' },
      available_paths: AVAILABLE,
      matched_paths: ['orders'],
      table: {
        columns: ['at', 'orders'],
        rows: [
          [AT[0], 2],
          [AT[1], 4],
          [AT[2], null],
          [AT[3], 4],
          [AT[4], null],
        ],
      },
    });
  });

  test('aggregators: mean over buckets with a value, min, max', async () => {
    assert.equal((await data({ mode: 'aggregate', aggregator: 'mean', value_path: 'orders' })).value, 10 / 3);
    assert.equal((await data({ mode: 'aggregate', aggregator: 'min', value_path: 'orders' })).value, 2);
    assert.equal((await data({ mode: 'aggregate', aggregator: 'max', value_path: 'revenue.usd' })).value, 6);
    assert.equal((await data({ mode: 'AGGREGATE', aggregator: 'sum', value_path: 'revenue.eur' })).value, 15);
  });

  test('slices drop the oldest buckets and cut the rest into equal groups', async () => {
    // 5 buckets, 2 slices: size 2, bucket 00:00 dropped, groups [01,02] and [03,04].
    const sum = await data({ mode: 'aggregate', aggregator: 'sum', value_path: 'revenue.eur', slices: 2 });
    assert.deepEqual([sum.values, sum.count, 'value' in sum], [[5, 0], 2, false]);
    const mean = await data({
      mode: 'aggregate',
      aggregator: 'mean',
      value_path: 'revenue.eur',
      slices: '2',
    });
    assert.deepEqual(mean.values, [5, null]);
    const max = await data({ mode: 'aggregate', aggregator: 'max', value_path: 'orders', slices: 2 });
    assert.deepEqual(max.values, [4, 4]);
    // 3 slices: size 1, two oldest dropped: [02], [03], [04].
    const three = await data({ mode: 'aggregate', aggregator: 'sum', value_path: 'orders', slices: 3 });
    assert.deepEqual(three.values, [0, 4, 0]);
  });

  test('timeline: one {at, value} per bucket, missing as 0; sliced into arrays', async () => {
    const d = await data({ format: 'timeline', value_path: 'orders' });
    assert.equal(d.formatter, 'timeline');
    assert.deepEqual(d.result, { orders: [2, 4, 0, 4, 0].map((value, i) => ({ at: AT[i], value })) });
    assert.deepEqual(d.matched_paths, ['orders']);
    const sliced = await data({ mode: 'timeline', value_path: 'orders', slices: 2 });
    assert.deepEqual(sliced.result, {
      orders: [
        [
          { at: AT[1], value: 4 },
          { at: AT[2], value: 0 },
        ],
        [
          { at: AT[3], value: 4 },
          { at: AT[4], value: 0 },
        ],
      ],
    });
  });

  test('category: a map path expands to its leaves, summed over the range or per slice', async () => {
    const d = await data({ mode: 'category', value_path: 'revenue' });
    assert.equal(d.formatter, 'category');
    assert.deepEqual(d.result, { 'revenue.eur': 15, 'revenue.usd': 10 });
    assert.deepEqual(d.matched_paths, ['revenue.eur', 'revenue.usd']);
    const sliced = await data({ mode: 'category', value_path: 'revenue', slices: 2 });
    assert.deepEqual(sliced.result, [
      { 'revenue.eur': 5, 'revenue.usd': 0 },
      { 'revenue.eur': 0, 'revenue.usd': 6 },
    ]);
  });

  test('query errors are 422 with the SPEC messages and fields', async () => {
    const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [
        { mode: 'aggregate', value_path: 'orders' },
        { error: 'Aggregator must be provided (options: max, mean, min, sum).' },
      ],
      [
        { mode: 'aggregate', value_path: 'orders', aggregator: 'median' },
        { allowed: ['max', 'mean', 'min', 'sum'] },
      ],
      [
        { mode: 'timeline', value_path: 'revenue.*' },
        { error: 'Wildcards are not supported in value_path "revenue.*"' },
      ],
      [
        { mode: 'aggregate', aggregator: 'sum', value_path: 'nope' },
        { error: 'Unknown path(s): nope', missing_paths: ['nope'], available_paths: AVAILABLE },
      ],
      [
        { mode: 'category', value_path: 'country' },
        { error: 'No matching data found for path country in the selected timeframe.' },
      ],
      [
        { mode: 'timeline', value_path: 'orders', slices: 0 },
        { error: 'slices must be a positive integer.' },
      ],
      [
        { mode: 'timeline', value_path: 'orders', slices: 1.5 },
        { error: 'slices must be a positive integer.' },
      ],
      [
        { mode: 'timeline', value_path: 'orders', slices: 'two' },
        { error: 'slices must be a positive integer.' },
      ],
      [{ mode: 'timeline', value_path: 'orders', slices: 6 }, {}],
    ];
    for (const [body, expected] of cases) {
      const res = await query(body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.body.errors.status, 'error');
      assert.equal(typeof res.body.errors.error, 'string');
      for (const [field, value] of Object.entries(expected))
        assert.deepEqual(res.body.errors[field], value, field);
    }
  });

  test('unreadable parameters are 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ mode: 'sideways', value_path: 'orders' }, /mode/],
      [{ mode: 'timeline' }, /value_path/],
      [{ mode: 'timeline', value_path: 'orders', from: '2026-03-01' }, /from/],
      [{ mode: 'timeline', value_path: 'orders', granularity: '1w' }, /granularity/],
      [{ mode: 'timeline', value_path: 'orders', key: undefined }, /key/],
    ];
    for (const [body, detail] of cases) {
      const res = await query(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.match(res.body.errors.detail, detail);
    }
  });
});
