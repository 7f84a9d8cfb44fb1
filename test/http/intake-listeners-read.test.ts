// GET /api/v1/bootstrap/sources/:id/listeners: the listeners bound to a source, read by any member
// of its organization (a viewer too), with the real ports of listeners started on port 0; another
// organization's source is 404, a source token 403, no token 401.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  uniqueEmail,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { parseListeners, startListeners, type Listeners } from '../../src/intake/listeners';

let server: TestServer;
let agent: ProjectAgent;
let other: ProjectAgent;
let listeners: Listeners;

before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
  other = await createProjectWithToken(server);
  const parsed = parseListeners([
    { protocol: 'graphite', transport: 'tcp', listen: '127.0.0.1:0', source: agent.sourceId },
    { protocol: 'influx', transport: 'udp', listen: '127.0.0.1:0', source: agent.sourceId, precision: 'ms' },
    { protocol: 'statsd', transport: 'udp', listen: '127.0.0.1:0', source: other.sourceId },
  ]);
  assert.ok(Array.isArray(parsed), String(parsed));
  listeners = await startListeners(server.deps, parsed);
});
after(async () => {
  await listeners.close();
  await server.stop();
});

const path = (id: string) => `/api/v1/bootstrap/sources/${id}/listeners`;

test("a source's listeners: protocol, transport, the bound port, precision for line protocol", async () => {
  const res = await request(server, 'GET', path(agent.sourceId), undefined, { token: agent.userToken });
  assert.equal(res.status, 200, res.text);
  const ports = listeners.running.map((l) => l.address.port);
  assert.deepEqual(res.body.data, [
    {
      protocol: 'graphite',
      transport: 'tcp',
      listen: '127.0.0.1:0',
      host: '127.0.0.1',
      port: ports[0],
      precision: null,
      flush_interval_ms: null,
      key_prefix: '',
    },
    {
      protocol: 'influx',
      transport: 'udp',
      listen: '127.0.0.1:0',
      host: '127.0.0.1',
      port: ports[1],
      precision: 'ms',
      flush_interval_ms: null,
      key_prefix: '',
    },
  ]);
  assert.ok(ports[0]! > 0 && ports[1]! > 0);
  const theirs = await request(server, 'GET', path(other.sourceId), undefined, { token: other.userToken });
  assert.equal(theirs.body.data.length, 1);
  assert.equal(theirs.body.data[0].flush_interval_ms, 10_000);
});

test('any member reads it (a viewer too); another organization and unknown ids are 404', async () => {
  const invite = await request(
    server,
    'POST',
    '/api/v1/organization/invitations',
    { role: 'viewer', email: uniqueEmail('viewer') },
    { token: agent.userToken },
  );
  assert.equal(invite.status, 201, invite.text);
  const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', {
    email: uniqueEmail('viewer'),
    password: 'correct horse battery',
  });
  const viewer = { userToken: signup.body.data.token.value as string };
  const accepted = await request(
    server,
    'POST',
    '/api/v1/invitations/accept',
    { token: invite.body.data.token },
    { token: viewer.userToken },
  );
  assert.equal(accepted.status, 201, accepted.text);
  const read = await request(server, 'GET', path(agent.sourceId), undefined, { token: viewer.userToken });
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.data.length, 2);

  const foreign = await request(server, 'GET', path(agent.sourceId), undefined, { token: other.userToken });
  assert.equal(foreign.status, 404);
  const unknown = await request(server, 'GET', path('00000000-0000-4000-8000-000000000000'), undefined, {
    token: agent.userToken,
  });
  assert.equal(unknown.status, 404);
  const bad = await request(server, 'GET', path('not-an-id'), undefined, { token: agent.userToken });
  assert.equal(bad.status, 404);
});

test('a source token is 403, no token 401', async () => {
  const source = await request(server, 'GET', path(agent.sourceId), undefined, {
    token: agent.sourceToken,
    sourceId: agent.sourceId,
  });
  assert.equal(source.status, 403);
  const none = await request(server, 'GET', path(agent.sourceId));
  assert.equal(none.status, 401);
});

test('listeners closed are no longer listed', async () => {
  const parsed = parseListeners([
    { protocol: 'graphite', transport: 'udp', listen: '127.0.0.1:0', source: agent.sourceId },
  ]);
  assert.ok(Array.isArray(parsed));
  const extra = await startListeners(server.deps, parsed);
  const during = await request(server, 'GET', path(agent.sourceId), undefined, { token: agent.userToken });
  assert.equal(during.body.data.length, 3);
  await extra.close();
  const afterwards = await request(server, 'GET', path(agent.sourceId), undefined, {
    token: agent.userToken,
  });
  assert.equal(afterwards.body.data.length, 2);
});
