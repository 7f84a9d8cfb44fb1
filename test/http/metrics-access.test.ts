// Who may call the metrics endpoints (SPEC 3, in its order of checks), projects-disabled mode
// (SPEC 7), and the body and queue limits of the write path (SPEC 9).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import net from 'node:net';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
} from '../helpers/server';
import { databaseFixture } from '../helpers/databases';

const POINT = { key: 'hits', at: '2026-02-01T10:00:00Z', values: { n: 1 } };
const READ = '/api/v1/metrics?key=hits&from=2026-02-01T10:00:00Z&to=2026-02-01T10:00:00Z&granularity=1h';

async function mintToken(
  server: TestServer,
  agent: ProjectAgent,
  perms: Record<string, boolean>,
): Promise<string> {
  const res = await request(
    server,
    'POST',
    '/api/v1/bootstrap/source-tokens',
    { source_type: 'project', source_id: agent.sourceId, ...perms },
    { token: agent.userToken },
  );
  assert.equal(res.status, 201, res.text);
  return res.body.data.token.value;
}

describe('metrics access rules', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  let other: ProjectAgent;
  before(async () => {
    server = await startTestServer();
    agent = await createProjectWithToken(server);
    other = await createProjectWithToken(server);
  });
  after(() => server.stop());

  test('checks run in SPEC order: token, header present, header a UUID, same source, permission', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{}, 401, 'Bad token'],
      [{ authorization: 'Bearer svc_sat_nope' }, 401, 'Bad token'],
      [{ authorization: `Bearer ${agent.sourceToken}x` }, 401, 'Bad token'],
      [{ authorization: `Bearer ${agent.sourceToken}` }, 400, 'Missing X-Service-Source-Id header'],
      [
        { authorization: `Bearer ${agent.sourceToken}`, 'x-service-source-id': 'abc' },
        400,
        'Invalid X-Service-Source-Id header',
      ],
      [
        { authorization: `Bearer ${agent.sourceToken}`, 'x-service-source-id': randomUUID() },
        403,
        'Forbidden',
      ],
      [
        { authorization: `Bearer ${agent.sourceToken}`, 'x-service-source-id': other.sourceId },
        403,
        'Forbidden',
      ],
      [
        { authorization: `Bearer ${agent.userToken}`, 'x-service-source-id': agent.sourceId },
        403,
        'Forbidden',
      ],
    ];
    for (const [headers, status, detail] of cases) {
      for (const [method, path, body] of [
        ['GET', READ, undefined],
        ['POST', '/api/v1/metrics', POINT],
      ] as const) {
        const res = await request(server, method, path, body, { headers });
        assert.deepEqual(
          [res.status, res.body],
          [status, { errors: { detail } }],
          `${method} ${JSON.stringify(headers)}`,
        );
      }
    }
  });

  test('an upper-case spelling of the source id names the same source', async () => {
    const res = await request(server, 'GET', READ, undefined, {
      token: agent.sourceToken,
      sourceId: agent.sourceId.toUpperCase(),
    });
    assert.equal(res.status, 200);
  });

  test('read and write permissions are enforced per endpoint', async () => {
    const readOnly = await mintToken(server, agent, { write: false });
    const writeOnly = await mintToken(server, agent, { read: false });
    const as = (token: string) => ({ token, sourceId: agent.sourceId });
    const query = {
      key: 'hits',
      from: POINT.at,
      to: POINT.at,
      granularity: '1h',
      mode: 'timeline',
      value_path: 'n',
    };
    assert.equal((await request(server, 'POST', '/api/v1/metrics', POINT, as(readOnly))).status, 403);
    assert.equal(
      (await request(server, 'POST', '/api/v1/metrics/batch', { points: [POINT] }, as(readOnly))).status,
      403,
    );
    assert.equal((await request(server, 'POST', '/api/v1/metrics', POINT, as(writeOnly))).status, 201);
    assert.equal((await request(server, 'GET', READ, undefined, as(writeOnly))).status, 403);
    assert.equal((await request(server, 'POST', '/api/v1/metrics/query', query, as(writeOnly))).status, 403);
    const read = await request(server, 'GET', READ, undefined, as(readOnly));
    assert.deepEqual(read.body.data.values, [{ n: 1 }]);
    assert.equal((await request(server, 'POST', '/api/v1/metrics/query', query, as(readOnly))).status, 200);
  });

  test('a source token is refused on bootstrap endpoints', async () => {
    const res = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { token: agent.sourceToken });
    assert.deepEqual([res.status, res.body], [403, { errors: { detail: 'Forbidden' } }]);
  });

  test("one organization never reads another organization's points", async () => {
    await request(
      server,
      'POST',
      '/api/v1/metrics',
      { ...POINT, key: 'secret' },
      { token: other.sourceToken, sourceId: other.sourceId },
    );
    const mine = await request(server, 'GET', READ.replace('key=hits', 'key=secret'), undefined, {
      token: agent.sourceToken,
      sourceId: agent.sourceId,
    });
    assert.deepEqual(mine.body.data.values, [{}]);
  });
});

describe('metrics write limits', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  before(async () => {
    server = await startTestServer({ SERVICE_MAX_BODY_BYTES: '4096', SERVICE_WRITE_QUEUE_MAX_POINTS: '1' });
    agent = await createProjectWithToken(server);
  });
  after(() => server.stop());
  const as = () => ({ token: agent.sourceToken, sourceId: agent.sourceId });

  test('a gzip bomb is cut off at the body limit with 413 and stores nothing', async () => {
    const padding = 'x'.repeat(5 * 1024 * 1024);
    const bomb = gzipSync(JSON.stringify({ ...POINT, padding }));
    const res = await request(server, 'POST', '/api/v1/metrics', undefined, {
      ...as(),
      raw: bomb,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    });
    assert.equal(res.status, 413);
    assert.match(res.body.errors.detail, /4096/);
    const read = await request(server, 'GET', READ, undefined, as());
    assert.deepEqual(read.body.data.values, [{}]);
  });

  test('a full write queue answers 503 with Retry-After, and every 201 is stored', async () => {
    const replies = await simultaneousPosts(server, 40, JSON.stringify(POINT), agent);
    const statuses = replies.map((r) => Number(/^HTTP\/1\.1 (\d{3})/.exec(r)?.[1]));
    const created = statuses.filter((s) => s === 201).length;
    const refused = replies.filter((r) => r.startsWith('HTTP/1.1 503'));
    assert.equal(created + refused.length, replies.length, statuses.join(','));
    assert.ok(refused.length > 0, 'with room for one point, simultaneous writes must overflow');
    assert.ok(created > 0);
    for (const r of refused) {
      assert.match(r, /\r\nretry-after: \d+\r\n/i);
      assert.match(r, /\{"errors":\{"detail":"[^"]+"\}\}$/);
    }
    const read = await request(server, 'GET', READ, undefined, as());
    assert.deepEqual(read.body.data.values, [{ n: created }]);
  });
});

/**
 * Sends `count` POSTs so that all of them reach the server in one turn of its event loop: the
 * sockets connect first, the requests are written, and this thread sleeps until the kernel has
 * delivered them. The server then reads them all before its write queue's first flush.
 */
async function simultaneousPosts(
  server: TestServer,
  count: number,
  body: string,
  agent: ProjectAgent,
): Promise<string[]> {
  const sockets = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect(server.port, '127.0.0.1', () => resolve(socket));
        }),
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 50)); // let the server accept every connection
  const replies = sockets.map(
    (socket) =>
      new Promise<string>((resolve) => {
        let data = '';
        socket.on('data', (chunk) => (data += chunk.toString()));
        socket.on('end', () => resolve(data));
      }),
  );
  const head =
    `POST /api/v1/metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\n` +
    `Authorization: Bearer ${agent.sourceToken}\r\nX-Service-Source-Id: ${agent.sourceId}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n`;
  for (const socket of sockets) socket.write(head + body);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  return Promise.all(replies);
}

describe('metrics with projects disabled', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SERVICE_PROJECTS_ENABLED: 'false' });
  });
  after(() => server.stop());

  test('ingestion is refused with the SPEC message; reads of a database source keep working', async () => {
    const agent = await signupWithOrganization(server);
    const user = { token: agent.userToken };
    const db = await request(
      server,
      'POST',
      '/api/v1/bootstrap/databases',
      { display_name: 'Stats', ...(await databaseFixture(server, 'stats', { setup: true })) },
      user,
    );
    assert.equal(db.status, 201, db.text);
    const id = db.body.data.source.id as string;
    assert.equal(
      (await request(server, 'POST', `/api/v1/bootstrap/databases/${id}/setup`, undefined, user)).status,
      200,
    );
    const token = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'database', source_id: id },
      user,
    );
    const as = { token: token.body.data.token.value as string, sourceId: id };
    const detail = 'Metric ingestion is disabled: projects are disabled for this deployment';
    for (const [path, body] of [
      ['/api/v1/metrics', POINT],
      ['/api/v1/metrics/batch', { points: [POINT] }],
    ] as const) {
      const res = await request(server, 'POST', path, body, as);
      assert.deepEqual([res.status, res.body], [403, { errors: { detail } }], path);
      // refused before its body is looked at, as before the body was validated at the edge
      const junk = await request(server, 'POST', path, { points: 'none', at: 7 }, as);
      assert.deepEqual([junk.status, junk.body], [403, { errors: { detail } }], `${path}, invalid body`);
    }
    const read = await request(server, 'GET', READ, undefined, as);
    assert.deepEqual([read.status, read.body.data.values], [200, [{}]]);
  });
});
