// ntfy, Gotify and e-mail channels against real receivers on loopback: an HTTP server that checks
// the exact request shapes of ntfy's publish API (POST <server>/<topic>, the message as the body;
// Title, Priority, Tags and Authorization: Bearer as headers) and Gotify's (POST <server>/message,
// X-Gotify-Key, JSON {title, message, priority}), and an SMTP server (smtp-server) that receives
// and parses the message. "Send test" through the API for each, and the sender on a firing alert.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import https from 'node:https';
import { SMTPServer } from 'smtp-server';
import getTLSOptions from 'smtp-server/lib/tls-options';
import {
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
  controlRun,
} from '../helpers/server';
import { startReceiver, type Receiver } from './channels-receiver';
import { createChannelSender, httpRequestOf, headerText } from '../../src/domain/alerts/channels/sender';
import { testNotification } from '../../src/http/routes/channels';
import type { OutgoingNotification } from '../../src/domain/alerts/delivery-port';
import type { StoredChannel } from '../../src/storage/channels';

interface Mail {
  from: string;
  to: string[];
  raw: string;
  auth?: string;
}

/** Headers (unfolded, lower-case names) and the body (quoted-printable decoded) of a raw message. */
function parseMail(raw: string): { headers: Record<string, string>; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
  const headers: Record<string, string> = {};
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.slice(split + 4);
  if (/quoted-printable/i.test(headers['content-transfer-encoding'] ?? '')) {
    body = Buffer.from(
      body
        .replace(/=\r\n/g, '')
        .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      'latin1',
    ).toString('utf8');
  }
  return { headers, body: body.replace(/\r\n/g, '\n') };
}

async function startSmtp(): Promise<{ port: number; mails: Mail[]; close(): Promise<void> }> {
  const mails: Mail[] = [];
  const smtp = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'alerts' && auth.password === 'mail-password') callback(null, { user: 'alerts' });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (address.address === 'nobody@example.com') {
        const err = Object.assign(new Error('No such user here'), { responseCode: 550 });
        callback(err);
      } else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        mails.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
          auth: typeof session.user === 'string' ? session.user : undefined,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  const port = (smtp.server.address() as AddressInfo).port;
  return { port, mails, close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) };
}

describe('channels against real receivers', () => {
  let server: TestServer;
  let receiver: Receiver;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let agent: Agent;

  before(async () => {
    receiver = await startReceiver();
    smtp = await startSmtp();
    server = await startTestServer({
      SERVICE_SMTP_HOST: '127.0.0.1',
      SERVICE_SMTP_PORT: String(smtp.port),
      SERVICE_SMTP_TLS: 'none',
      SERVICE_SMTP_USERNAME: 'alerts',
      SERVICE_SMTP_PASSWORD: 'mail-password',
      SERVICE_SMTP_FROM: 'Alerts <alerts@example.com>',
    });
    agent = await signupWithOrganization(server);
  });
  after(async () => {
    await server.stop();
    await receiver.close();
    await smtp.close();
  });

  const create = async (body: Record<string, unknown>) => {
    const res = await request(server, 'POST', '/api/v1/channels', body, { token: agent.userToken });
    assert.equal(res.status, 201, res.text);
    return res.body.data;
  };
  const sendTest = async (id: string) => {
    const res = await request(server, 'POST', `/api/v1/channels/${id}/test`, undefined, {
      token: agent.userToken,
    });
    assert.equal(res.status, 200, res.text);
    return res.body.data;
  };

  test('ntfy: POST <server>/<topic>, the message as the body, Title/Priority/Tags/Authorization headers', async () => {
    const ch = await create({
      name: 'Phone ✓',
      type: 'ntfy',
      settings: {
        server: `${receiver.url}/ntfy/`,
        topic: 'homelab_alerts-1',
        priority: 5,
        tags: ['warning', 'skull'],
      },
      secrets: { token: 'tk_abcdefghijklmnopqrstuvwxyz012' },
    });
    assert.deepEqual(ch.secrets, { token: '…z012' });
    assert.deepEqual(ch.settings, {
      server: `${receiver.url}/ntfy/`,
      topic: 'homelab_alerts-1',
      priority: 5,
      tags: ['warning', 'skull'],
    });
    receiver.received.length = 0;
    assert.deepEqual(await sendTest(ch.id), { ok: true, status: 200 });
    assert.equal(receiver.received.length, 1);
    const got = receiver.received[0]!;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/ntfy/homelab_alerts-1');
    assert.equal(got.headers.title, headerText('Test notification for Phone ✓'));
    assert.match(
      String(got.headers.title),
      /^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/,
      'RFC 2047, which ntfy decodes',
    );
    assert.equal(
      Buffer.from(String(got.headers.title).slice(10, -2), 'base64').toString('utf8'),
      'Test notification for Phone ✓',
    );
    assert.equal(got.headers.priority, '5');
    assert.equal(got.headers.tags, 'warning,skull');
    assert.equal(got.headers.authorization, 'Bearer tk_abcdefghijklmnopqrstuvwxyz012');
    assert.equal(got.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(String(got.headers['x-idempotency-key']), /^test-/);
    assert.equal(
      got.body,
      'This is a test notification for the channel "Phone ✓". If you read this, the channel works.',
    );
  });

  test('ntfy: defaults (ntfy.sh, no token, priority by kind) and a token kept by a PUT that omits it', async () => {
    const ch = await create({ name: 'n', type: 'ntfy', settings: { topic: 't1' } });
    assert.deepEqual(ch.settings, { server: 'https://ntfy.sh', topic: 't1', priority: null, tags: [] });
    assert.deepEqual(ch.secrets, {});
    const withToken = await request(
      server,
      'PUT',
      `/api/v1/channels/${ch.id}`,
      { settings: { server: receiver.url }, secrets: { token: 'tk_0123456789abcdefghij' } },
      { token: agent.userToken },
    );
    assert.equal(withToken.status, 200, withToken.text);
    const renamed = await request(
      server,
      'PUT',
      `/api/v1/channels/${ch.id}`,
      { name: 'n2' },
      { token: agent.userToken },
    );
    assert.deepEqual(renamed.body.data.secrets, { token: '…ghij' });
    assert.equal(renamed.body.data.settings.topic, 't1', 'settings are merged, not replaced');
    receiver.received.length = 0;
    assert.equal((await sendTest(ch.id)).ok, true);
    const got = receiver.received[0]!;
    assert.equal(got.path, '/t1');
    assert.equal(got.headers.priority, '3', 'a test is sent at the default priority');
    assert.equal(got.headers.tags, undefined);
    assert.equal(got.headers.authorization, 'Bearer tk_0123456789abcdefghij');
    const cleared = await request(
      server,
      'PUT',
      `/api/v1/channels/${ch.id}`,
      { secrets: { token: null } },
      { token: agent.userToken },
    );
    assert.deepEqual(cleared.body.data.secrets, {}, 'null removes an optional secret');
  });

  test('gotify: POST <server>/message with X-Gotify-Key and JSON {title, message, priority}', async () => {
    const ch = await create({
      name: 'Gotify',
      type: 'gotify',
      settings: { server: `${receiver.url}/gotify`, priority: 9 },
      secrets: { token: 'AbCdEfGhIjKlMnO' },
    });
    assert.deepEqual(ch.secrets, { token: '…lMnO' });
    receiver.received.length = 0;
    assert.deepEqual(await sendTest(ch.id), { ok: true, status: 200 });
    const got = receiver.received[0]!;
    assert.equal(got.method, 'POST');
    assert.equal(got.path, '/gotify/message');
    assert.equal(got.headers['x-gotify-key'], 'AbCdEfGhIjKlMnO');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.match(String(got.headers['x-idempotency-key']), /^test-/);
    assert.deepEqual(JSON.parse(got.body), {
      title: 'Test notification for Gotify',
      message: 'This is a test notification for the channel "Gotify". If you read this, the channel works.',
      priority: 9,
    });
    receiver.answer.push({ status: 401, body: '{"error":"Unauthorized","errorCode":401}' });
    const refused = await sendTest(ch.id);
    assert.equal(refused.ok, false);
    assert.equal(refused.status, 401);
  });

  test('email: the SMTP server receives from, to, subject and body, authenticated', async () => {
    const ch = await create({
      name: 'Ops mail',
      type: 'email',
      settings: { to: ['ops@example.com', 'oncall@example.org'], subject_prefix: '[alerts]' },
    });
    assert.deepEqual(ch.secrets, {});
    smtp.mails.length = 0;
    assert.deepEqual(await sendTest(ch.id), { ok: true });
    assert.equal(smtp.mails.length, 1);
    const mail = smtp.mails[0]!;
    assert.equal(mail.auth, 'alerts');
    assert.equal(mail.from, 'alerts@example.com');
    assert.deepEqual(mail.to, ['ops@example.com', 'oncall@example.org']);
    const { headers, body } = parseMail(mail.raw);
    assert.equal(headers.from, 'Alerts <alerts@example.com>');
    assert.equal(headers.to, 'ops@example.com, oncall@example.org');
    assert.equal(headers.subject, '[alerts] Test notification for Ops mail');
    assert.match(headers['x-idempotency-key']!, /^test-/);
    assert.match(headers['message-id']!, /^<test-[0-9a-f-]+@example\.com>$/);
    assert.match(
      body,
      /^This is a test notification for the channel "Ops mail"\. If you read this, the channel works\.\n/,
    );
    assert.match(body, /State: test \(was test\)/);
  });

  test('email: a recipient the server refuses (550) is a permanent failure, reported', async () => {
    const ch = await create({ name: 'nobody', type: 'email', settings: { to: ['nobody@example.com'] } });
    const result = await sendTest(ch.id);
    assert.equal(result.ok, false);
    assert.equal(result.status, 550);
    assert.match(result.error, /550/);
  });

  test('email: recipients are checked (422 naming settings.to)', async () => {
    for (const to of [
      [],
      ['not-an-address'],
      'ops@example.com',
      Array.from({ length: 21 }, (_, i) => `u${i}@x.org`),
    ]) {
      const res = await request(
        server,
        'POST',
        '/api/v1/channels',
        { name: 'bad', type: 'email', settings: { to } },
        { token: agent.userToken },
      );
      assert.equal(res.status, 422, JSON.stringify(to));
      assert.deepEqual(Object.keys(res.body.errors), ['settings.to']);
    }
  });

  test('TLS: a certificate the machine does not trust is a permanent failure (HTTPS, STARTTLS, implicit TLS)', async () => {
    // smtp-server's built-in certificate for localhost: self-signed (and expired), so never trusted
    const tls = getTLSOptions({});
    const secure = https.createServer({ key: tls.key, cert: tls.cert }, (_req, res) => res.end('{}'));
    await new Promise<void>((resolve) => secure.listen(0, '127.0.0.1', resolve));
    const starttls = new SMTPServer({ authOptional: true, logger: false });
    await new Promise<void>((resolve) => starttls.listen(0, '127.0.0.1', resolve));
    try {
      const httpsPort = (secure.address() as AddressInfo).port;
      const ch = await create({
        name: 'tls',
        type: 'webhook',
        secrets: { url: `https://localhost:${httpsPort}/hook` },
      });
      const result = await sendTest(ch.id);
      assert.equal(result.ok, false);
      assert.match(result.error, /^TLS handshake failed/);
      const smtpPort = (starttls.server.address() as AddressInfo).port;
      const id = '00000000-0000-4000-8000-0000000000aa';
      await controlRun(
        server,
        `INSERT INTO channels (id, organization_id, name, type, preset, settings, secrets, inserted_at, updated_at)
         VALUES (?, ?, 'tls mail', 'email', NULL, '{"to":["ops@example.com"]}', '{}', 0, 0)`,
        id,
        agent.organizationId,
      );
      for (const mode of ['starttls', 'tls'] as const) {
        const deps = {
          ...server.deps,
          config: {
            ...server.deps.config,
            smtp: {
              ...server.deps.config.smtp,
              host: 'localhost',
              port: smtpPort,
              tls: mode,
              username: null,
              password: null,
            },
          },
        };
        const sent = await createChannelSender(deps).send(
          agent.organizationId,
          id,
          testNotification(Date.now(), 'tls mail'),
          AbortSignal.timeout(5000),
        );
        assert.equal(sent.ok, false, mode);
        assert.equal(sent.retryable, false, mode);
        assert.match(sent.error!, /^TLS with the SMTP server failed/, mode);
      }
    } finally {
      await new Promise<void>((resolve) => starttls.close(() => resolve()));
      secure.closeAllConnections();
      await new Promise<void>((resolve) => secure.close(() => resolve()));
    }
  });

  test('a firing alert: ntfy and Gotify priorities by kind, the template fields of an instance', () => {
    const n: OutgoingNotification = {
      idempotencyKey: 'n-1',
      kind: 'firing',
      monitor: { id: 'm1', name: 'CPU', url: 'https://metrics.example.com/monitors/m1' },
      instance: { host: 'pve1' },
      state: 'firing',
      previousState: 'pending',
      value: 97.5,
      condition: 'above 90',
      since: '2026-11-27T10:00:00Z',
      durationMs: 7_800_000,
      title: 'CPU is firing on host=pve1',
      message: 'CPU is 97.5, above 90',
    };
    const base = {
      id: 'c',
      organizationId: 'o',
      name: 'c',
      preset: null,
      insertedAt: 0,
      updatedAt: 0,
      secrets: {},
    };
    const ntfy = httpRequestOf(
      {
        ...base,
        type: 'ntfy',
        settings: { server: 'https://ntfy.sh', topic: 't', priority: null, tags: [] },
      } as StoredChannel,
      {},
      n,
    );
    assert.equal(ntfy.headers.priority, '4');
    assert.equal(ntfy.headers.click, 'https://metrics.example.com/monitors/m1');
    const gotify = httpRequestOf(
      { ...base, type: 'gotify', settings: { server: 'https://g.example', priority: null } } as StoredChannel,
      { token: 'x' },
      n,
    );
    assert.equal(JSON.parse(gotify.body).priority, 8);
    const hook = httpRequestOf(
      {
        ...base,
        type: 'webhook',
        settings: {
          method: 'POST',
          headers: {},
          body: {
            text: '{{monitor.name}} on {{instance.host}} for {{duration}}: {{value}}',
            v: '{{value}}',
            labels: '{{instance}}',
          },
        },
      } as StoredChannel,
      { url: 'https://x.example' },
      n,
    );
    assert.deepEqual(JSON.parse(hook.body), {
      text: 'CPU on pve1 for 2 h 10 m: 97.5',
      v: 97.5,
      labels: { host: 'pve1' },
    });
    assert.equal(hook.headers['x-idempotency-key'], 'n-1');
  });
});
