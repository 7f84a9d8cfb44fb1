// /api/v1/metrics through HTTP: ingest (single, batch, gzip), series reads, the query endpoint and
// a sqlite database source, on a real server.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  startTestServer,
  embeddedOnly,
} from '../helpers/server';

describe('metrics over HTTP', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  const as = () => ({ token: agent.sourceToken, sourceId: agent.sourceId });
  const post = (path: string, body: unknown) => request(server, 'POST', `/api/v1/metrics${path}`, body, as());
  const get = (query: Record<string, string>) =>
    request(server, 'GET', `/api/v1/metrics?${new URLSearchParams(query)}`, undefined, as());
  const hours = { from: '2026-01-24T10:00:00Z', to: '2026-01-24T12:00:00Z', granularity: '1h' };

  before(async () => {
    server = await startTestServer();
    agent = await createProjectWithToken(server, { time_zone: 'Europe/Paris', granularities: '1m,1h,1d' });
  });
  after(() => server.stop());

  test('a point is 201 once stored; GET returns one nested map per bucket in the source zone', async () => {
    const res = await post('', {
      key: 'orders',
      at: '2026-01-24T11:05:00Z',
      values: { count: 1, amount: { net: 9.5 } },
    });
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, { data: { created: 'ok' } });
    const series = await get({ ...hours, key: 'orders' });
    assert.equal(series.status, 200);
    assert.deepEqual(series.body, {
      data: {
        at: ['2026-01-24T11:00:00+01:00', '2026-01-24T12:00:00+01:00', '2026-01-24T13:00:00+01:00'],
        values: [{}, { count: 1, amount: { net: 9.5 } }, {}],
      },
    });
  });

  test('without key, GET reads the system key', async () => {
    await post('', { key: 'sys.check', at: '2026-01-25T08:00:00Z', values: { n: 1 } });
    await post('', { key: 'hidden', at: '2026-01-25T08:00:00Z', values: { n: 1 }, untracked: true });
    const res = await get({ from: '2026-01-25T08:00:00Z', to: '2026-01-25T08:00:00Z', granularity: '1h' });
    assert.deepEqual(res.body.data.values, [{ count: 2, keys: { sys: { check: 1 }, __untracked__: 1 } }]);
    const hidden = await get({
      key: 'hidden',
      from: '2026-01-25T08:00:00Z',
      to: '2026-01-25T08:00:00Z',
      granularity: '1h',
    });
    assert.deepEqual(hidden.body.data.values, [{ n: 1 }]);
  });

  test('assert sets leaves and keeps the others; gzip bodies are read', async () => {
    await post('', { key: 'level', at: '2026-01-24T10:10:00Z', values: { a: 5, b: 1 } });
    const gz = gzipSync(
      JSON.stringify({ key: 'level', at: '2026-01-24T10:20:00Z', values: { a: 2 }, operation: 'assert' }),
    );
    const res = await request(server, 'POST', '/api/v1/metrics', undefined, {
      ...as(),
      raw: gz,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual((await get({ ...hours, key: 'level' })).body.data.values[0], { a: 2, b: 1 });
  });

  test('invalid points: 400 when unreadable, 422 naming the field', async () => {
    assert.equal((await post('', [1])).status, 400);
    const noAt = await post('', { key: 'k', values: { n: 1 } });
    assert.deepEqual([noAt.status, noAt.body], [400, { errors: { detail: 'at is required' } }]);
    const leaf = await post('', { key: 'k', at: '2026-01-24T10:00:00Z', values: { a: { b: 'x' } } });
    assert.deepEqual(
      [leaf.status, leaf.body],
      [422, { errors: { values: ['leaf a.b must be a finite number'] } }],
    );
  });

  test('batch: 201 with the count, or 422 naming the index and nothing stored', async () => {
    const point = { key: 'batched', at: '2026-01-24T10:30:00Z', values: { n: 1 } };
    const bad = await post('/batch', { points: [point, point, { ...point, values: {} }] });
    assert.equal(bad.status, 422);
    assert.deepEqual(Object.keys(bad.body.errors), ['points[2].values']);
    assert.deepEqual((await get({ ...hours, key: 'batched' })).body.data.values[0], {});
    const ok = await post('/batch', { points: [point, point, point] });
    assert.deepEqual([ok.status, ok.body], [201, { data: { created: 3 } }]);
    assert.deepEqual((await get({ ...hours, key: 'batched' })).body.data.values[0], { n: 3 });
  });

  test('batch bodies that cannot be read: 400, 413, 415 with the SPEC body, nothing stored', async () => {
    const send = (
      raw: string | Uint8Array,
      headers: Record<string, string> = { 'content-type': 'application/json' },
    ) => request(server, 'POST', '/api/v1/metrics/batch', undefined, { ...as(), headers, raw });
    const big = JSON.stringify({
      points: [{ key: 'unread', at: '2026-01-24T10:30:00Z', values: { n: 1 } }],
    }).padEnd(1_048_577, ' ');
    const cases: Array<[string, Promise<{ status: number; body: any }>, number, string]> = [
      ['no body', send(''), 400, 'Request body must be a JSON object'],
      ['malformed small', send('{"points": ['), 400, 'Malformed JSON body'],
      [
        'malformed large',
        send(`{"points": [${'{"key":"unread","at":"2026-01-24T10:30:00Z","values":{"n":1}},'.repeat(1_000)}`),
        400,
        'Malformed JSON body',
      ],
      [
        'not gzip',
        send('{"points": []}', { 'content-type': 'application/json', 'content-encoding': 'gzip' }),
        400,
        'Request body is not valid gzip',
      ],
      ['too large', send(big), 413, 'Request body exceeds the limit of 1048576 bytes'],
      [
        'text/plain',
        send('{"points": []}', { 'content-type': 'text/plain' }),
        415,
        'Unsupported Content-Type: text/plain (use application/json)',
      ],
    ];
    for (const [name, reply, status, detail] of cases) {
      const res = await reply;
      assert.deepEqual([res.status, res.body], [status, { errors: { detail } }], name);
    }
    assert.deepEqual((await get({ ...hours, key: 'unread' })).body.data.values, [{}, {}, {}]);
  });

  test('large batches (parsed off the event loop): sums read back, a bad point refuses all, gzip too', async () => {
    // 3,000 points over two hours (each about 100 bytes: past the worker's 256 KB threshold)
    const points = Array.from({ length: 3_000 }, (_, i) => ({
      key: 'big.batch',
      at: new Date(Date.UTC(2026, 0, 24, 10) + i * 2_400).toISOString(),
      values: { count: 1, amount: { net: i % 10, tax: 0.5 } },
      ...(i === 2_999 ? { operation: 'assert', values: { count: 100 } } : {}),
    }));
    const read = () => get({ ...hours, key: 'big.batch' }).then((r) => r.body.data.values);
    const bad = await post('/batch', {
      points: [...points.slice(0, 2_500), { ...points[0], at: 'noon' }, ...points.slice(2_500)],
    });
    assert.deepEqual(
      [bad.status, bad.body],
      [422, { errors: { 'points[2500].at': ['must be an RFC 3339 timestamp with a time zone offset'] } }],
    );
    const invalidPoint = await post('/batch', {
      points: [...points.slice(0, 2_900), { ...points[0], values: { n: true } }],
    });
    assert.deepEqual(
      [invalidPoint.status, invalidPoint.body],
      [422, { errors: { 'points[2900].values': ['leaf n must be a finite number'] } }],
    );
    assert.deepEqual(await read(), [{}, {}, {}]);

    const ok = await post('/batch', { points });
    assert.deepEqual([ok.status, ok.body], [201, { data: { created: 3_000 } }]);
    // 10:00-11:00 holds points 0..1499 (2.4 s apart); 11:00-12:00 holds 1500..2999, the last an assert
    const net = (from: number, to: number) =>
      points.slice(from, to).reduce((s, _p, i) => s + ((from + i) % 10), 0);
    assert.deepEqual(await read(), [
      { count: 1_500, amount: { net: net(0, 1_500), tax: 750 } },
      { count: 100, amount: { net: net(1_500, 2_999), tax: 749.5 } },
      {},
    ]);

    const zipped = await request(server, 'POST', '/api/v1/metrics/batch', undefined, {
      ...as(),
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      raw: gzipSync(JSON.stringify({ points: points.slice(0, 1_500) })),
    });
    assert.deepEqual([zipped.status, zipped.body], [201, { data: { created: 1_500 } }]);
    assert.equal((await read())[0].count, 3_000);
  });

  test('the ingest paths answer alike in every spelling the router accepts, and with a query string', async () => {
    const point = { key: 'spelled', at: '2026-01-24T10:30:00Z', values: { n: 1 } };
    for (const path of ['/api/v1/metrics', '/api/v1/metrics/', '/API/V1/Metrics', '/api/v1/metrics?x=1']) {
      const res = await request(server, 'POST', path, point, as());
      assert.deepEqual([res.status, res.body], [201, { data: { created: 'ok' } }], path);
    }
    for (const path of ['/api/v1/metrics/batch', '/api/v1/metrics/batch/', '/api/v1/Metrics/Batch']) {
      const res = await request(server, 'POST', path, { points: [point] }, as());
      assert.deepEqual([res.status, res.body], [201, { data: { created: 1 } }], path);
    }
    assert.deepEqual((await get({ ...hours, key: 'spelled' })).body.data.values[0], { n: 7 });
    const noToken = await request(server, 'POST', '/api/v1/metrics', point);
    assert.equal(noToken.status, 401);
    const put = await request(server, 'PUT', '/api/v1/metrics', point, as());
    assert.equal(put.status, 405);
  });

  test('GET parameters: 400 naming the parameter', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ...hours, key: ' ' }, /key/],
      [{ to: hours.to, granularity: '1h' }, /from is required/],
      [{ ...hours, granularity: 'weekly' }, /granularity/],
      [{ ...hours, granularity: '1w' }, /not allowed/],
      [{ ...hours, from: hours.to, to: hours.from }, /from must not be after to/],
    ];
    for (const [query, detail] of cases) {
      const res = await get(query);
      assert.equal(res.status, 400, JSON.stringify(query));
      assert.match(res.body.errors.detail, detail);
    }
  });

  test('query: aggregate over the read series; 400 and 422 per SPEC 5.4', async () => {
    for (const at of ['2026-01-26T10:00:00Z', '2026-01-26T10:01:00Z', '2026-01-26T11:00:00Z']) {
      await post('', { key: 'sales', at, values: { total: 2 } });
    }
    const body = {
      key: 'sales',
      from: '2026-01-26T10:00:00Z',
      to: '2026-01-26T11:00:00Z',
      granularity: '1h',
      value_path: 'total',
    };
    const sum = await request(
      server,
      'POST',
      '/api/v1/metrics/query',
      { ...body, mode: 'aggregate', aggregator: 'sum' },
      as(),
    );
    assert.equal(sum.status, 200, sum.text);
    assert.equal(sum.body.data.value, 6);
    assert.deepEqual(
      sum.body.data.table.rows.map((r: unknown[]) => r[1]),
      [4, 2],
    );
    const noMode = await request(server, 'POST', '/api/v1/metrics/query', body, as());
    assert.deepEqual(
      [noMode.status, noMode.body.errors.detail],
      [400, 'mode is required (aggregate, timeline or category)'],
    );
    const noPath = await request(
      server,
      'POST',
      '/api/v1/metrics/query',
      { ...body, value_path: undefined, format: 'timeline' },
      as(),
    );
    assert.equal(noPath.status, 400);
    const noAggregator = await request(
      server,
      'POST',
      '/api/v1/metrics/query',
      { ...body, mode: 'aggregate' },
      as(),
    );
    assert.equal(noAggregator.status, 422);
    assert.equal(noAggregator.body.errors.status, 'error');
  });
});

describe(
  'metrics of a sqlite database source over HTTP',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(() => server.stop());

    test('create, set up, write and read back through the Trifle layout', async () => {
      const agent = await createProjectWithToken(server);
      const user = { token: agent.userToken };
      const created = await request(
        server,
        'POST',
        '/api/v1/bootstrap/databases',
        {
          display_name: 'App stats',
          driver: 'sqlite',
          file_path: 'app/stats.sqlite',
          identifier_mode: 'partial',
        },
        user,
      );
      assert.equal(created.status, 201, created.text);
      const id = created.body.data.source.id as string;
      const token = await request(
        server,
        'POST',
        '/api/v1/bootstrap/source-tokens',
        { source_type: 'database', source_id: id },
        user,
      );
      const as = { token: token.body.data.token.value as string, sourceId: id };
      const point = { key: 'signups', at: '2026-01-24T10:00:00Z', values: { n: 1 } };
      const early = await request(server, 'POST', '/api/v1/metrics', point, as);
      assert.equal(early.status, 409, 'writes wait for setup');
      assert.equal(
        (await request(server, 'POST', `/api/v1/bootstrap/databases/${id}/setup`, undefined, user)).status,
        200,
      );
      assert.equal((await request(server, 'POST', '/api/v1/metrics', point, as)).status, 201);
      const read = await request(
        server,
        'GET',
        '/api/v1/metrics?key=signups&from=2026-01-24T10:00:00Z&to=2026-01-24T10:00:00Z&granularity=1h',
        undefined,
        as,
      );
      assert.deepEqual(read.body, { data: { at: ['2026-01-24T10:00:00Z'], values: [{ n: 1 }] } });
    });
  },
);
