// A JSON value nested 20,000 levels deep, in any field of any JSON endpoint, is an ordinary
// refusal (400/404/409/413/422), never a 500 from a recursive walk (issue 9: dashboards answered
// RangeError 500s). JSON.parse itself is not recursive; everything after it must not be either.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';

const DEPTH = 20_000; // the stack overflowed at about 5,000
const deepList = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);
const AT = '2026-01-24T10:00:00Z';

let server: TestServer;
let agent: ProjectAgent;
before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
});
after(() => server.stop());

test('a 20,000-deep value in every field of every JSON endpoint: no 5xx, the server stays healthy', async () => {
  const point = { key: 'deep', at: AT, values: { n: 1 } };
  const dash = await request(
    server,
    'POST',
    '/api/v1/dashboards',
    { name: 'D', key: 'k', source: { type: 'project', id: agent.sourceId } },
    { token: agent.userToken },
  );
  const group = await request(
    server,
    'POST',
    '/api/v1/dashboard-groups',
    { name: 'G' },
    { token: agent.userToken },
  );
  const user = agent.userToken;
  const source = agent.sourceToken;
  const endpoints: Array<[string, string, Record<string, unknown>, string]> = [
    [
      'POST',
      '/api/v1/bootstrap/signup',
      {
        email: 'deep@example.com',
        password: 'long enough',
        organization_name: 'Deep',
        name: 'n',
        token_name: 't',
      },
      '',
    ],
    [
      'POST',
      '/api/v1/bootstrap/login',
      { email: 'deep@example.com', password: 'long enough', token_name: 't' },
      '',
    ],
    ['POST', '/api/v1/bootstrap/organizations', { name: 'x' }, user],
    [
      'POST',
      '/api/v1/bootstrap/projects',
      {
        name: 'P',
        time_zone: 'UTC',
        granularities: ['1h'],
        default_granularity: '1h',
        default_timeframe: '7d',
        expire_after: null,
        beginning_of_week: 1,
      },
      user,
    ],
    [
      'POST',
      '/api/v1/bootstrap/databases',
      { display_name: 'D', driver: 'sqlite', file_path: 'deep.sqlite', identifier_mode: 'full' },
      user,
    ],
    [
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: agent.sourceId, name: 'n', read: true, write: true },
      user,
    ],
    ['POST', '/api/v1/metrics', { ...point, operation: 'track', untracked: false }, source],
    ['POST', '/api/v1/metrics/batch', { points: [point] }, source],
    [
      'POST',
      '/api/v1/metrics/query',
      {
        key: 'deep',
        from: AT,
        to: AT,
        granularity: '1h',
        mode: 'aggregate',
        value_path: 'n',
        aggregator: 'sum',
        slices: 1,
      },
      source,
    ],
    [
      'POST',
      '/api/v1/dashboards',
      {
        name: 'D',
        key: 'k',
        source: { type: 'project', id: agent.sourceId },
        payload: {},
        segments: [],
        group_id: null,
        position: 1,
      },
      user,
    ],
    [
      'PUT',
      `/api/v1/dashboards/${dash.body.data.id}`,
      { name: 'D', payload: {}, segments: [], dashboard: {} },
      user,
    ],
    ['POST', '/api/v1/dashboard-groups', { name: 'G', position: 1 }, user],
    ['PUT', `/api/v1/dashboard-groups/${group.body.data.id}`, { name: 'G', dashboard_group: {} }, user],
  ];
  const answers: string[] = [];
  for (const [method, path, body, token] of endpoints) {
    for (const field of Object.keys(body)) {
      for (const deep of [deepList, deepObject]) {
        const text = JSON.stringify({ ...body, [field]: '\u0000' }).replace('"\\u0000"', deep);
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        const res = await request(server, method, path, undefined, {
          token: token || undefined,
          sourceId: token === source ? agent.sourceId : undefined,
          raw: text,
          headers,
        });
        answers.push(`${method} ${path} ${field}: ${res.status}`);
        assert.ok(
          res.status < 500,
          `${method} ${path} with ${field} nested ${DEPTH} deep: ${res.status} ${res.text.slice(0, 200)}`,
        );
      }
    }
  }
  assert.ok(answers.length > 50);
  assert.equal((await request(server, 'GET', '/api/v1/health')).status, 200);
  const ok = await request(server, 'POST', '/api/v1/metrics', point, {
    token: source,
    sourceId: agent.sourceId,
  });
  assert.equal(ok.status, 201);
});
