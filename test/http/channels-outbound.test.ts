// network.outbound for channels: in `public` mode loopback, private, link-local and metadata
// addresses are refused after name resolution (`localhost` resolves to 127.0.0.1), for every
// channel type, SMTP included; the refusal reads the same whether the port is open or closed and
// nothing reaches the receiver; `network.allowed_hosts` lists exceptions. Also: one attempt
// settles when its signal aborts (a hung receiver), and an organization cannot send through
// another's channel id.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
  controlRun,
} from '../helpers/server';
import { startReceiver, type Receiver } from './channels-receiver';
import { createChannelSender } from '../../src/domain/alerts/channels/sender';
import { REFUSED_MESSAGE } from '../../src/domain/alerts/channels/outbound-http';
import { testNotification } from '../../src/http/routes/channels';

/** A port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

describe('channels under network.outbound = public', () => {
  let server: TestServer;
  let receiver: Receiver;
  let agent: Agent;
  let closed: number;

  before(async () => {
    receiver = await startReceiver();
    closed = await closedPort();
    server = await startTestServer({
      SERVICE_NETWORK_OUTBOUND: 'public',
      SERVICE_SMTP_HOST: 'localhost',
      SERVICE_SMTP_PORT: String(receiver.port),
      SERVICE_SMTP_TLS: 'none',
      SERVICE_SMTP_FROM: 'alerts@example.com',
    });
    agent = await signupWithOrganization(server);
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  async function testSend(body: Record<string, unknown>) {
    const created = await request(server, 'POST', '/api/v1/channels', body, { token: agent.userToken });
    assert.equal(created.status, 201, created.text);
    const res = await request(server, 'POST', `/api/v1/channels/${created.body.data.id}/test`, undefined, {
      token: agent.userToken,
    });
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  }

  test('webhooks to loopback, private, link-local and metadata addresses are refused alike', async () => {
    const targets = [
      `http://localhost:${receiver.port}/hook`,
      `http://localhost:${closed}/hook`,
      `http://127.0.0.1:${receiver.port}/hook`,
      `http://127.0.0.1:${closed}/hook`,
      `http://[::1]:${receiver.port}/hook`,
      `http://[::ffff:127.0.0.1]:${receiver.port}/hook`,
      `http://[::ffff:7f00:1]:${receiver.port}/hook`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/latest/meta-data/',
      'http://10.0.0.1/hook',
      'http://192.168.1.10:8080/hook',
      'http://172.16.0.1/hook',
      'http://100.100.100.200/hook',
      'http://0.0.0.0:80/hook',
      'https://[fe80::1]/hook',
    ];
    receiver.received.length = 0;
    for (const url of targets) {
      const result = await testSend({ name: url, type: 'webhook', secrets: { url } });
      assert.deepEqual(result, { ok: false, error: REFUSED_MESSAGE }, url);
    }
    assert.equal(receiver.received.length, 0, 'nothing reached the receiver');
  });

  test('ntfy, Gotify and e-mail (the SMTP host) are refused the same way', async () => {
    receiver.received.length = 0;
    const ntfy = await testSend({
      name: 'ntfy',
      type: 'ntfy',
      settings: { server: `http://localhost:${receiver.port}`, topic: 'x' },
    });
    assert.deepEqual(ntfy, { ok: false, error: REFUSED_MESSAGE });
    const gotify = await testSend({
      name: 'gotify',
      type: 'gotify',
      settings: { server: `http://127.0.0.1:${receiver.port}` },
      secrets: { token: 'AbCdEfGhIjKl' },
    });
    assert.deepEqual(gotify, { ok: false, error: REFUSED_MESSAGE });
    const email = await testSend({ name: 'mail', type: 'email', settings: { to: ['ops@example.com'] } });
    assert.deepEqual(email, { ok: false, error: REFUSED_MESSAGE });
    assert.equal(receiver.received.length, 0);
  });

  test('names that resolve to internal addresses are refused after resolution; no rebinding', async () => {
    const answers: Record<string, string[]> = {
      'loopback.example': ['127.0.0.1'],
      'mixed.example': ['93.184.216.34', '10.0.0.5'], // one refused address refuses the name
      'metadata.example': ['169.254.169.254'],
      'v6.example': ['::1'],
    };
    const asked: string[] = [];
    const sender = createChannelSender(server.deps, { lookup: async (host) => answers[host] ?? [] });
    receiver.received.length = 0;
    for (const name of ['loopback.example', 'mixed.example', 'metadata.example', 'v6.example']) {
      const created = await request(
        server,
        'POST',
        '/api/v1/channels',
        { name, type: 'webhook', secrets: { url: `http://${name}:${receiver.port}/x` } },
        { token: agent.userToken },
      );
      const result = await sender.send(
        agent.organizationId,
        created.body.data.id,
        testNotification(Date.now(), name),
        AbortSignal.timeout(2000),
      );
      assert.deepEqual(result, { ok: false, retryable: false, error: REFUSED_MESSAGE }, name);
    }
    // Rebinding: the name first answers an address the policy lets through (127.0.0.2, listed in
    // allowed_hosts here; nothing listens there), then the receiver's 127.0.0.1. The attempt
    // resolves once and connects to the checked address: the receiver never hears of it.
    const rebinding = createChannelSender(
      {
        ...server.deps,
        config: {
          ...server.deps.config,
          network: { ...server.deps.config.network, allowedHosts: ['127.0.0.2'] },
        },
      },
      {
        lookup: async (host) => {
          asked.push(host);
          return asked.length === 1 ? ['127.0.0.2'] : ['127.0.0.1'];
        },
      },
    );
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'rebind', type: 'webhook', secrets: { url: `http://rebind.example:${receiver.port}/x` } },
      { token: agent.userToken },
    );
    asked.length = 0;
    const result = await rebinding.send(
      agent.organizationId,
      created.body.data.id,
      testNotification(Date.now(), 'rebind'),
      AbortSignal.timeout(2000),
    );
    assert.deepEqual(result, { ok: false, retryable: true, error: 'connection refused' });
    assert.deepEqual(asked, ['rebind.example'], 'resolved once');
    assert.equal(receiver.received.length, 0, 'nothing reached the receiver on 127.0.0.1');
  });

  test('any mode: the connection goes to the resolved address, the name kept for Host', async () => {
    const deps = {
      ...server.deps,
      config: { ...server.deps.config, network: { ...server.deps.config.network, outbound: 'any' as const } },
    };
    const sender = createChannelSender(deps, { lookup: async () => ['127.0.0.1'] });
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'pinned', type: 'webhook', secrets: { url: `http://pinned.example:${receiver.port}/pinned` } },
      { token: agent.userToken },
    );
    receiver.received.length = 0;
    const result = await sender.send(
      agent.organizationId,
      created.body.data.id,
      testNotification(Date.now(), 'pinned'),
      AbortSignal.timeout(2000),
    );
    assert.deepEqual(result, { ok: true, retryable: false, status: 200 });
    assert.equal(receiver.received[0]!.headers.host, `pinned.example:${receiver.port}`);
    assert.equal(receiver.received[0]!.path, '/pinned');
  });

  test('the sender refuses the same for an organization, and another organization gets "not found"', async () => {
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'x', type: 'webhook', secrets: { url: `http://localhost:${receiver.port}/x` } },
      { token: agent.userToken },
    );
    const sender = createChannelSender(server.deps);
    const n = testNotification(Date.now(), 'x');
    const own = await sender.send(agent.organizationId, created.body.data.id, n, AbortSignal.timeout(5000));
    assert.deepEqual(own, { ok: false, retryable: false, error: REFUSED_MESSAGE });
    const other = await signupWithOrganization(server);
    const theirs = await sender.send(
      other.organizationId,
      created.body.data.id,
      n,
      AbortSignal.timeout(5000),
    );
    assert.deepEqual(theirs, { ok: false, retryable: false, error: 'channel not found' });
  });
});

describe('channels: network.allowed_hosts, hung receivers, retry classes', () => {
  let server: TestServer;
  let receiver: Receiver;
  let agent: Agent;

  before(async () => {
    receiver = await startReceiver();
    server = await startTestServer({
      SERVICE_NETWORK_OUTBOUND: 'public',
      SERVICE_NETWORK_ALLOWED_HOSTS: 'localhost',
    });
    agent = await signupWithOrganization(server);
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  async function channel(url: string): Promise<string> {
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: url, type: 'webhook', secrets: { url } },
      { token: agent.userToken },
    );
    assert.equal(created.status, 201, created.text);
    return created.body.data.id;
  }

  test('a host listed in allowed_hosts is reached; other loopback spellings stay refused', async () => {
    const sender = createChannelSender(server.deps);
    const n = testNotification(Date.now(), 'x');
    receiver.received.length = 0;
    const allowed = await sender.send(
      agent.organizationId,
      await channel(`http://localhost:${receiver.port}/ok`),
      n,
      AbortSignal.timeout(5000),
    );
    assert.deepEqual(allowed, { ok: true, retryable: false, status: 200 });
    assert.equal(receiver.received.length, 1);
    assert.equal(receiver.received[0]!.headers.host, `localhost:${receiver.port}`);
    const literal = await sender.send(
      agent.organizationId,
      await channel(`http://127.0.0.1:${receiver.port}/no`),
      n,
      AbortSignal.timeout(5000),
    );
    assert.deepEqual(literal, { ok: false, retryable: false, error: REFUSED_MESSAGE });
  });

  test('a hung receiver: the attempt settles when its signal aborts, retryable', async () => {
    const sender = createChannelSender(server.deps);
    const id = await channel(`http://localhost:${receiver.port}/slow`);
    receiver.answer.push({ status: 200, delayMs: 5_000 });
    const started = Date.now();
    const result = await sender.send(
      agent.organizationId,
      id,
      testNotification(Date.now(), 'slow'),
      AbortSignal.timeout(300),
    );
    const took = Date.now() - started;
    assert.deepEqual(result, { ok: false, retryable: true, error: 'timed out' });
    assert.ok(took < 2_000, `settled in ${took} ms`);
  });

  test('an answer whose body never ends: a 2xx is delivered at once, another status ends with the signal', async () => {
    const sender = createChannelSender(server.deps);
    const id = await channel(`http://localhost:${receiver.port}/held`);
    receiver.answer.push({ status: 202, hold: true, body: 'x'.repeat(1000) });
    let started = Date.now();
    const accepted = await sender.send(
      agent.organizationId,
      id,
      testNotification(Date.now(), 'held'),
      AbortSignal.timeout(5000),
    );
    assert.deepEqual(accepted, { ok: true, retryable: false, status: 202 });
    assert.ok(Date.now() - started < 2_000);
    receiver.answer.push({ status: 503, hold: true, body: 'busy' });
    started = Date.now();
    const failed = await sender.send(
      agent.organizationId,
      id,
      testNotification(Date.now(), 'held'),
      AbortSignal.timeout(300),
    );
    assert.equal(failed.ok, false);
    assert.equal(failed.retryable, true);
    assert.ok(Date.now() - started < 2_000);
  });

  test('e-mail: an SMTP host in allowed_hosts is reached; a server that never greets ends with the signal', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => void sockets.push(socket)); // accepts, says nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const deps = {
        ...server.deps,
        config: {
          ...server.deps.config,
          smtp: {
            host: 'localhost',
            port,
            tls: 'none' as const,
            username: null,
            password: null,
            from: 'a@example.com',
          },
        },
      };
      const created = await request(
        server,
        'POST',
        '/api/v1/channels',
        { name: 'mail', type: 'email', settings: { to: ['ops@example.com'] } },
        { token: agent.userToken },
      );
      // this server has no [smtp]: e-mail channels cannot be created through its API
      assert.equal(created.status, 422);
      const id = '00000000-0000-4000-8000-000000000001';
      await controlRun(
        server,
        `INSERT INTO channels (id, organization_id, name, type, preset, settings, secrets, inserted_at, updated_at)
         VALUES (?, ?, 'mail', 'email', NULL, ?, '{}', 0, 0)`,
        id,
        agent.organizationId,
        JSON.stringify({ to: ['ops@example.com'], subject_prefix: null }),
      );
      const started = Date.now();
      const result = await createChannelSender(deps).send(
        agent.organizationId,
        id,
        testNotification(Date.now(), 'mail'),
        AbortSignal.timeout(300),
      );
      assert.deepEqual(result, { ok: false, retryable: true, error: 'timed out' });
      assert.ok(Date.now() - started < 2_000);
      assert.equal(sockets.length, 1, 'the connection went to the allowed host');
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(sockets[0]!.destroyed || sockets[0]!.readableEnded, 'and was closed');
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  test('retry classes: 408, 429 and 5xx retryable; other 4xx permanent; a closed port retryable', async () => {
    const sender = createChannelSender(server.deps);
    const id = await channel(`http://localhost:${receiver.port}/classes`);
    const n = testNotification(Date.now(), 'classes');
    for (const [status, retryable] of [
      [408, true],
      [429, true],
      [500, true],
      [502, true],
      [400, false],
      [404, false],
      [410, false],
    ] as const) {
      receiver.answer.push({ status, body: 'x'.repeat(100_000) });
      const result = await sender.send(agent.organizationId, id, n, AbortSignal.timeout(5000));
      assert.equal(result.ok, false);
      assert.equal(result.status, status);
      assert.equal(result.retryable, retryable, String(status));
      assert.ok(result.error!.length < 300, 'the quoted answer is bounded');
    }
    const port = await closedPort();
    const refused = await sender.send(
      agent.organizationId,
      await channel(`http://localhost:${port}/closed`),
      n,
      AbortSignal.timeout(5000),
    );
    assert.deepEqual(refused, { ok: false, retryable: true, error: 'connection refused' });
  });
});
