// Concurrent tracks through HTTP are merged by group commit without losing or doubling any.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  startTestServer,
} from '../helpers/server';

let server: TestServer;
let agent: ProjectAgent;
const GRANULARITIES = ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'];

before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server); // default granularities: all seven
});
after(() => server.stop());

test('200 concurrent tracks of {count: 1} read back exactly 200 in every granularity and in the system key', async () => {
  const as = { token: agent.sourceToken, sourceId: agent.sourceId };
  const at = '2026-02-10T09:30:15Z';
  const answers = await Promise.all(
    Array.from({ length: 200 }, () =>
      request(server, 'POST', '/api/v1/metrics', { key: 'visits', at, values: { count: 1 } }, as),
    ),
  );
  assert.deepEqual(new Set(answers.map((a) => a.status)), new Set([201]));
  for (const granularity of GRANULARITIES) {
    const read = async (key?: string) => {
      const query = new URLSearchParams({ from: at, to: at, granularity, ...(key ? { key } : {}) });
      const res = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as);
      assert.equal(res.status, 200, res.text);
      return res.body.data.values;
    };
    assert.deepEqual(await read('visits'), [{ count: 200 }], granularity);
    assert.deepEqual(await read(), [{ count: 200, keys: { visits: 200 } }], granularity);
  }
});
