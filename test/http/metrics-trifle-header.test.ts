// X-Trifle-Source-Id, the Trifle::Stats libraries' header name, works as an alias of
// X-Service-Source-Id on metrics calls (SPEC 3): same checks, and both sent must agree.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  startTestServer,
} from '../helpers/server';

const POINT = { key: 'hits', at: '2026-02-01T10:00:00Z', values: { n: 1 } };
const READ = '/api/v1/metrics?key=hits&from=2026-02-01T10:00:00Z&to=2026-02-01T10:00:00Z&granularity=1h';

describe('X-Trifle-Source-Id', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  let other: ProjectAgent;
  before(async () => {
    server = await startTestServer();
    agent = await createProjectWithToken(server);
    other = await createProjectWithToken(server);
  });
  after(() => server.stop());
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    request(server, method, path, body, {
      headers: { authorization: `Bearer ${agent.sourceToken}`, ...headers },
    });

  test('alone, it writes and reads like X-Service-Source-Id (any case of the id)', async () => {
    const write = await call('POST', '/api/v1/metrics', { 'x-trifle-source-id': agent.sourceId }, POINT);
    assert.equal(write.status, 201, write.text);
    const read = await call('GET', READ, { 'x-trifle-source-id': agent.sourceId.toUpperCase() });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.data.values, [{ n: 1 }]);
    const query = await call(
      'POST',
      '/api/v1/metrics/query',
      { 'x-trifle-source-id': agent.sourceId },
      {
        key: 'hits',
        from: '2026-02-01T10:00:00Z',
        to: '2026-02-01T10:00:00Z',
        granularity: '1h',
        mode: 'aggregate',
        value_path: 'n',
        aggregator: 'sum',
      },
    );
    assert.equal(query.status, 200, query.text);
  });

  test('the same checks: malformed 400, another source 403', async () => {
    const bad = await call('GET', READ, { 'x-trifle-source-id': 'abc' });
    assert.deepEqual(
      [bad.status, bad.body],
      [400, { errors: { detail: 'Invalid X-Service-Source-Id header' } }],
    );
    for (const id of [randomUUID(), other.sourceId]) {
      const res = await call('GET', READ, { 'x-trifle-source-id': id });
      assert.deepEqual([res.status, res.body], [403, { errors: { detail: 'Forbidden' } }]);
    }
    const user = await request(server, 'GET', READ, undefined, {
      headers: { authorization: `Bearer ${agent.userToken}`, 'x-trifle-source-id': 'abc' },
    });
    assert.equal(user.status, 400);
  });

  test('both headers: equal ids pass, different ids are 400', async () => {
    const same = await call('GET', READ, {
      'x-service-source-id': agent.sourceId,
      'x-trifle-source-id': agent.sourceId.toUpperCase(),
    });
    assert.equal(same.status, 200, same.text);
    const differ = await call('GET', READ, {
      'x-service-source-id': agent.sourceId,
      'x-trifle-source-id': other.sourceId,
    });
    assert.equal(differ.status, 400);
    assert.match(differ.body.errors.detail, /X-Trifle-Source-Id/);
    const write = await call(
      'POST',
      '/api/v1/metrics',
      { 'x-service-source-id': agent.sourceId, 'x-trifle-source-id': 'junk' },
      POINT,
    );
    assert.equal(write.status, 400);
  });

  test('dashboards keep their own header only', async () => {
    const res = await call('GET', '/api/v1/dashboards', { 'x-trifle-source-id': randomUUID() });
    assert.equal(res.status, 200, res.text);
  });
});
