// The embedded store acknowledges a point once its write-log record is written and folds it into
// the buckets later, on the metric writer's thread (docs/storage.md): reads still see every
// acknowledged point at once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProjectWithToken, request, startTestServer, type TestServer } from '../helpers/server';

let server: TestServer;
let as: { token: string; sourceId: string };
before(async () => {
  server = await startTestServer();
  const agent = await createProjectWithToken(server, { granularities: ['1m', '1h', '1y'] });
  as = { token: agent.sourceToken, sourceId: agent.sourceId };
});
after(() => server.stop());

const at = '2026-05-05T10:11:12Z';
const read = async (granularity: string, key?: string) => {
  const query = new URLSearchParams({ from: at, to: at, granularity, ...(key ? { key } : {}) });
  const res = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as);
  assert.equal(res.status, 200);
  return res.body.data.values[0];
};

test('each write is readable right after its 201, in every granularity and the system key', async () => {
  for (let i = 1; i <= 5; i++) {
    const res = await request(server, 'POST', '/api/v1/metrics', { key: 'fresh', at, values: { n: 2 } }, as);
    assert.equal(res.status, 201);
    for (const g of ['1m', '1h', '1y']) assert.deepEqual(await read(g, 'fresh'), { n: 2 * i });
    assert.deepEqual(await read('1y'), { count: i, keys: { fresh: i } });
  }
});

test('a batch and an assert are readable at once, in arrival order', async () => {
  const points = Array.from({ length: 50 }, () => ({ key: 'ordered', at, values: { level: 1 } }));
  assert.equal((await request(server, 'POST', '/api/v1/metrics/batch', { points }, as)).status, 201);
  assert.equal(
    (
      await request(
        server,
        'POST',
        '/api/v1/metrics',
        { key: 'ordered', at, operation: 'assert', values: { level: 7 } },
        as,
      )
    ).status,
    201,
  );
  assert.equal(
    (await request(server, 'POST', '/api/v1/metrics', { key: 'ordered', at, values: { level: 1 } }, as))
      .status,
    201,
  );
  assert.deepEqual(await read('1h', 'ordered'), { level: 8 });
});
