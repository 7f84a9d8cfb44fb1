// /api/v1/channels through the real server: CRUD, the dashboards' token rules, secrets encrypted at
// rest and masked, 422s naming fields, size limits, organization isolation, and "send test" of a
// webhook channel against a receiver on loopback (every preset's exact body).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
  controlRow,
} from '../helpers/server';
import { startReceiver, type Receiver } from './channels-receiver';

const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXabcd';

describe('channels API', () => {
  let server: TestServer;
  let receiver: Receiver;
  let agent: Agent;
  let other: Agent;

  before(async () => {
    server = await startTestServer();
    receiver = await startReceiver();
    agent = await signupWithOrganization(server);
    other = await signupWithOrganization(server);
  });
  after(async () => {
    await receiver.close();
    await server.stop();
  });

  const as = (a: Agent) => ({ token: a.userToken });

  test('create, list, show, update, delete a webhook channel; the URL is a secret, masked', async () => {
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'Ops Slack', type: 'webhook', preset: 'slack', secrets: { url: SLACK_URL } },
      as(agent),
    );
    assert.equal(created.status, 201, created.text);
    const ch = created.body.data;
    assert.equal(ch.name, 'Ops Slack');
    assert.equal(ch.type, 'webhook');
    assert.equal(ch.preset, 'slack');
    assert.deepEqual(ch.secrets, { url: '…abcd' });
    assert.deepEqual(ch.settings, { method: 'POST', headers: {}, body: null });
    assert.match(ch.inserted_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.doesNotMatch(created.text, /XXXXXXXX/);

    const list = await request(server, 'GET', '/api/v1/channels', undefined, as(agent));
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.meta, {
      types: ['webhook', 'ntfy', 'gotify', 'email'],
      presets: ['slack', 'discord', 'mattermost', 'teams'],
      email_configured: false,
    });
    assert.deepEqual(
      list.body.data.map((c: { id: string }) => c.id),
      [ch.id],
    );
    const shown = await request(
      server,
      'GET',
      `/api/v1/channels/${ch.id.toUpperCase()}`,
      undefined,
      as(agent),
    );
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body.data.secrets, { url: '…abcd' });

    // a PUT that leaves the secret out keeps it
    const renamed = await request(
      server,
      'PUT',
      `/api/v1/channels/${ch.id}`,
      { name: 'Slack #ops' },
      as(agent),
    );
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.data.name, 'Slack #ops');
    assert.deepEqual(renamed.body.data.secrets, { url: '…abcd' });
    assert.equal(renamed.body.data.preset, 'slack');
    // a form that sends the whole channel back, masked secrets included, changes nothing secret
    const echoed = await request(
      server,
      'PUT',
      `/api/v1/channels/${ch.id}`,
      { ...renamed.body.data, name: 'Slack #ops2' },
      as(agent),
    );
    assert.equal(echoed.status, 200, echoed.text);
    assert.deepEqual(echoed.body.data.secrets, { url: '…abcd' });
    const wrongMask = await request(
      server,
      'PUT',
      `/api/v1/channels/${ch.id}`,
      { secrets: { url: '…zzzz' } },
      as(agent),
    );
    assert.equal(wrongMask.status, 422, 'another masked value is no URL');

    // at rest: encrypted, the plaintext nowhere in service.db
    const row = (await controlRow<{ settings: string; secrets: string }>(
      server,
      'SELECT settings, secrets FROM channels WHERE id = ?',
      ch.id,
    ))!;
    assert.match(JSON.parse(row.secrets).url, /^enc:v1:/);
    assert.equal(server.deps.secrets.decrypt(JSON.parse(row.secrets).url), SLACK_URL);
    assert.doesNotMatch(row.settings + row.secrets, /hooks\.slack\.com/);

    const removed = await request(server, 'DELETE', `/api/v1/channels/${ch.id}`, undefined, as(agent));
    assert.equal(removed.status, 200);
    assert.equal(removed.body.data.id, ch.id);
    const gone = await request(server, 'GET', `/api/v1/channels/${ch.id}`, undefined, as(agent));
    assert.equal(gone.status, 404);
  });

  test('422 names the fields; unknown types, presets and placeholders are refused', async () => {
    const empty = await request(server, 'POST', '/api/v1/channels', {}, as(agent));
    assert.equal(empty.status, 422);
    assert.ok(empty.body.errors.name);
    assert.ok(empty.body.errors.type);

    const bad = await request(
      server,
      'POST',
      '/api/v1/channels',
      {
        name: 'x',
        type: 'webhook',
        preset: 'teams',
        settings: { method: 'GET', headers: { Authorization: 'Bearer x' }, body: { text: '{{nope}}' } },
        secrets: { url: 'ftp://example.com/' },
      },
      as(agent),
    );
    assert.equal(bad.status, 422, bad.text);
    assert.deepEqual(Object.keys(bad.body.errors).sort(), [
      'secrets.url',
      'settings.body',
      'settings.headers',
      'settings.method',
    ]);
    assert.match(bad.body.errors['settings.body'][0], /\{\{nope\}\}/);

    const kinds = await request(server, 'POST', '/api/v1/channels', { name: 'x', type: 'pager' }, as(agent));
    assert.equal(kinds.status, 422);
    assert.ok(kinds.body.errors.type);
    const preset = await request(
      server,
      'POST',
      '/api/v1/channels',
      {
        name: 'x',
        type: 'gotify',
        preset: 'slack',
        settings: { server: 'https://push.example.com' },
        secrets: { token: 'Axxxxxxxxxxx' },
      },
      as(agent),
    );
    assert.equal(preset.status, 422);
    assert.deepEqual(Object.keys(preset.body.errors), ['preset']);

    const missing = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'x', type: 'gotify' },
      as(agent),
    );
    assert.equal(missing.status, 422);
    assert.deepEqual(Object.keys(missing.body.errors).sort(), ['secrets.token', 'settings.server']);

    const email = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'mail', type: 'email', settings: { to: ['ops@example.com'] } },
      as(agent),
    );
    assert.equal(email.status, 422, 'no [smtp] configured');
    assert.match(email.body.errors.type[0], /smtp/);

    const notObject = await request(server, 'POST', '/api/v1/channels', undefined, {
      ...as(agent),
      raw: '[1]',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notObject.status, 400);
  });

  test('size limits: names, headers, body templates', async () => {
    const long = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'n'.repeat(256), type: 'webhook', secrets: { url: `${receiver.url}/x` } },
      as(agent),
    );
    assert.equal(long.status, 422);
    assert.ok(long.body.errors.name);
    const headers: Record<string, string> = {};
    for (let i = 0; i < 21; i++) headers[`X-H${i}`] = 'v';
    const many = await request(
      server,
      'POST',
      '/api/v1/channels',
      {
        name: 'x',
        type: 'webhook',
        settings: { headers, body: { text: 'y'.repeat(17 * 1024) } },
        secrets: { url: `${receiver.url}/x` },
      },
      as(agent),
    );
    assert.equal(many.status, 422);
    assert.deepEqual(Object.keys(many.body.errors).sort(), ['settings.body', 'settings.headers']);
    const url = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'x', type: 'webhook', secrets: { url: `https://example.com/${'a'.repeat(2100)}` } },
      as(agent),
    );
    assert.equal(url.status, 422);
    assert.ok(url.body.errors['secrets.url']);
  });

  test('token rules as dashboards: source tokens need read for GET and write for changes and tests', async () => {
    const readOnly = await createProjectWithToken(server, {}, { read: true, write: false });
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'hook', type: 'webhook', secrets: { url: `${receiver.url}/hook` } },
      { token: readOnly.sourceToken },
    );
    assert.equal(created.status, 403);
    const byUser = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'hook', type: 'webhook', secrets: { url: `${receiver.url}/hook` } },
      { token: readOnly.userToken },
    );
    assert.equal(byUser.status, 201);
    const id = byUser.body.data.id;
    const read = await request(server, 'GET', `/api/v1/channels/${id}`, undefined, {
      token: readOnly.sourceToken,
    });
    assert.equal(read.status, 200);
    const testSend = await request(server, 'POST', `/api/v1/channels/${id}/test`, undefined, {
      token: readOnly.sourceToken,
    });
    assert.equal(testSend.status, 403);
    const noToken = await request(server, 'GET', '/api/v1/channels');
    assert.equal(noToken.status, 401);
  });

  test('organization isolation: another organization cannot read, change, test or delete a channel', async () => {
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'mine', type: 'webhook', secrets: { url: `${receiver.url}/mine` } },
      as(agent),
    );
    const id = created.body.data.id;
    const before = receiver.received.length;
    for (const [method, suffix] of [
      ['GET', ''],
      ['PUT', ''],
      ['DELETE', ''],
      ['POST', '/test'],
    ] as const) {
      const res = await request(
        server,
        method,
        `/api/v1/channels/${id}${suffix}`,
        method === 'PUT' ? { name: 'theirs' } : undefined,
        as(other),
      );
      assert.equal(res.status, 404, `${method} ${suffix}`);
    }
    const list = await request(server, 'GET', '/api/v1/channels', undefined, as(other));
    assert.deepEqual(list.body.data, []);
    assert.equal(receiver.received.length, before, 'nothing was sent');
    const still = await request(server, 'GET', `/api/v1/channels/${id}`, undefined, as(agent));
    assert.equal(still.body.data.name, 'mine');
    const repo = server.deps.channels;
    assert.equal(
      await repo.exists(agent.organizationId, id),
      true,
      'what monitors may name in delivery_channels',
    );
    assert.equal(await repo.exists(other.organizationId, id), false);
    const malformed = await request(server, 'GET', '/api/v1/channels/not-a-uuid', undefined, as(agent));
    assert.equal(malformed.status, 404);
  });

  test('send test: a webhook gets the full notification with X-Idempotency-Key', async () => {
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      {
        channel: {
          name: 'generic',
          type: 'webhook',
          settings: { method: 'PUT', headers: { 'X-Team': 'ops' } },
          secrets: { url: `${receiver.url}/generic?k=1`, authorization: 'Bearer s3cr3t-token-value' },
        },
      },
      as(agent),
    );
    assert.equal(created.status, 201, created.text);
    assert.deepEqual(created.body.data.secrets, { url: '…?k=1', authorization: '…alue' });
    receiver.received.length = 0;
    const res = await request(
      server,
      'POST',
      `/api/v1/channels/${created.body.data.id}/test`,
      undefined,
      as(agent),
    );
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.data, { ok: true, status: 200 });
    assert.equal(receiver.received.length, 1);
    const got = receiver.received[0]!;
    assert.equal(got.method, 'PUT');
    assert.equal(got.path, '/generic?k=1');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['x-team'], 'ops');
    assert.equal(got.headers.authorization, 'Bearer s3cr3t-token-value');
    assert.match(String(got.headers['x-idempotency-key']), /^test-[0-9a-f-]{36}$/);
    const body = JSON.parse(got.body);
    assert.deepEqual(Object.keys(body).sort(), [
      'condition',
      'duration_ms',
      'idempotency_key',
      'instance',
      'kind',
      'message',
      'monitor',
      'previous_state',
      'since',
      'state',
      'title',
      'value',
    ]);
    assert.equal(body.kind, 'test');
    assert.equal(body.value, null);
    assert.deepEqual(body.instance, {});
    assert.equal(body.idempotency_key, got.headers['x-idempotency-key']);
    assert.match(body.title, /generic/);
  });

  test('send test: a template renders the fields, whole placeholders keep their JSON type', async () => {
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      {
        name: 'templated',
        type: 'webhook',
        settings: {
          body: {
            summary: '[{{kind}}] {{title}}',
            value: '{{value}}',
            labels: '{{instance}}',
            list: ['{{state}}', 3],
          },
        },
        secrets: { url: `${receiver.url}/templated` },
      },
      as(agent),
    );
    assert.equal(created.status, 201, created.text);
    receiver.received.length = 0;
    const res = await request(
      server,
      'POST',
      `/api/v1/channels/${created.body.data.id}/test`,
      undefined,
      as(agent),
    );
    assert.deepEqual(res.body.data, { ok: true, status: 200 });
    assert.deepEqual(JSON.parse(receiver.received[0]!.body), {
      summary: '[test] Test notification for templated',
      value: null,
      labels: {},
      list: ['test', 3],
    });
  });

  test("send test: each preset sends its service's documented body", async () => {
    const expected: Record<string, (body: any) => void> = {
      slack: (b) => {
        assert.deepEqual(Object.keys(b), ['text']);
        assert.match(b.text, /^\*Test notification for slack\*\nThis is a test notification/);
      },
      discord: (b) => {
        assert.deepEqual(Object.keys(b).sort(), ['allowed_mentions', 'content']);
        assert.deepEqual(b.allowed_mentions, { parse: [] });
        assert.match(b.content, /^\*\*Test notification for discord\*\*\n/);
        assert.ok(b.content.length <= 2000);
      },
      mattermost: (b) => {
        assert.deepEqual(Object.keys(b), ['text']);
        assert.match(b.text, /^\*\*Test notification for mattermost\*\*\n/);
      },
      teams: (b) => {
        assert.equal(b.type, 'message');
        assert.equal(b.attachments.length, 1);
        const att = b.attachments[0];
        assert.equal(att.contentType, 'application/vnd.microsoft.card.adaptive');
        assert.equal(att.content.type, 'AdaptiveCard');
        assert.equal(att.content.$schema, 'http://adaptivecards.io/schemas/adaptive-card.json');
        assert.equal(att.content.body[0].type, 'TextBlock');
        assert.equal(att.content.body[0].text, 'Test notification for teams');
        assert.equal(att.content.body[2].type, 'FactSet');
      },
    };
    for (const preset of Object.keys(expected)) {
      const created = await request(
        server,
        'POST',
        '/api/v1/channels',
        { name: preset, type: 'webhook', preset, settings: { url: `${receiver.url}/${preset}` } },
        as(agent),
      );
      assert.equal(created.status, 201, created.text);
      assert.ok(created.body.data.secrets.url, 'a URL sent among the settings is kept as a secret');
      assert.equal(created.body.data.settings.url, undefined);
      receiver.received.length = 0;
      const res = await request(
        server,
        'POST',
        `/api/v1/channels/${created.body.data.id}/test`,
        undefined,
        as(agent),
      );
      assert.deepEqual(res.body.data, { ok: true, status: 200 }, preset);
      const got = receiver.received[0]!;
      assert.equal(got.method, 'POST');
      assert.equal(got.path, `/${preset}`);
      assert.equal(got.headers['content-type'], 'application/json');
      assert.ok(got.headers['x-idempotency-key']);
      expected[preset]!(JSON.parse(got.body));
    }
  });

  test('test sends are limited per organization: 30 a minute, then 429 with Retry-After', async () => {
    const busy = await signupWithOrganization(server);
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'busy', type: 'webhook', secrets: { url: `${receiver.url}/busy` } },
      as(busy),
    );
    const id = created.body.data.id;
    for (let i = 0; i < 30; i++) {
      const res = await request(server, 'POST', `/api/v1/channels/${id}/test`, undefined, as(busy));
      assert.equal(res.status, 200, `send ${i + 1}`);
    }
    const limited = await request(server, 'POST', `/api/v1/channels/${id}/test`, undefined, as(busy));
    assert.equal(limited.status, 429);
    assert.match(limited.body.errors.detail, /30 test sends a minute/);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    const otherOrg = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'calm', type: 'webhook', secrets: { url: `${receiver.url}/calm` } },
      as(other),
    );
    const calm = await request(
      server,
      'POST',
      `/api/v1/channels/${otherOrg.body.data.id}/test`,
      undefined,
      as(other),
    );
    assert.equal(calm.status, 200, 'another organization is not limited by it');
  });

  test('random bodies never make a 5xx: POST and PUT answer 201/200, 400 or 422', async () => {
    const fuzzer = await signupWithOrganization(server);
    const existing = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'fuzzed', type: 'ntfy', settings: { topic: 'fuzz', server: `${receiver.url}` } },
      as(fuzzer),
    );
    const id = existing.body.data.id;
    const key = fc.constantFrom('name', 'type', 'preset', 'settings', 'secrets', 'channel', 'url', 'x');
    const leaf = fc.oneof(
      fc.string(),
      fc.integer(),
      fc.constant(null),
      fc.boolean(),
      fc.constantFrom(
        'webhook',
        'ntfy',
        'gotify',
        'email',
        'slack',
        'teams',
        '{{value}}',
        'https://example.com/h',
      ),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(key, tie('node')),
      ),
    })).node;
    const body = fc.oneof(fc.dictionary(key, value), value);
    const deep = (depth: number) => {
      let v: unknown = '{{value}}';
      for (let i = 0; i < depth; i++) v = { a: v };
      return v;
    };
    const samples = fc.sample(body, { numRuns: 300, seed: 23 }) as unknown[];
    samples.push(
      {
        name: 'deep',
        type: 'webhook',
        settings: { body: deep(17) },
        secrets: { url: 'https://example.com/x' },
      },
      { name: 'arr', type: 'webhook', settings: [], secrets: [] },
    );
    // 20,000 levels, as raw text (a recursive stringify would overflow here first)
    const deepText = `{"name":"deep","type":"webhook","secrets":{"url":"https://example.com/x"},"settings":{"body":${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}}}`;
    for (const [method, url] of [
      ['POST', '/api/v1/channels'],
      ['PUT', `/api/v1/channels/${id}`],
    ] as const) {
      const res = await request(server, method, url, undefined, {
        ...as(fuzzer),
        raw: deepText,
        headers: { 'content-type': 'application/json' },
      });
      assert.ok([400, 422].includes(res.status), `${method} deep: ${res.status}`);
    }
    for (const sample of samples) {
      for (const [method, url] of [
        ['POST', '/api/v1/channels'],
        ['PUT', `/api/v1/channels/${id}`],
      ] as const) {
        const res = await request(server, method, url, sample, as(fuzzer));
        assert.ok(
          [200, 201, 400, 422].includes(res.status),
          `${method} ${JSON.stringify(sample).slice(0, 200)}: ${res.status} ${res.text.slice(0, 200)}`,
        );
      }
    }
  });

  test('send test reports failures: 4xx permanent with the answer quoted, 5xx, redirects not followed', async () => {
    const created = await request(
      server,
      'POST',
      '/api/v1/channels',
      { name: 'failing', type: 'webhook', secrets: { url: `${receiver.url}/failing` } },
      as(agent),
    );
    const id = created.body.data.id;
    receiver.answer.push({ status: 400, body: 'invalid_payload' });
    const bad = await request(server, 'POST', `/api/v1/channels/${id}/test`, undefined, as(agent));
    assert.deepEqual(bad.body.data, {
      ok: false,
      status: 400,
      error: 'the receiver answered 400: invalid_payload',
    });
    receiver.answer.push({ status: 503 });
    const down = await request(server, 'POST', `/api/v1/channels/${id}/test`, undefined, as(agent));
    assert.equal(down.body.data.ok, false);
    assert.equal(down.body.data.status, 503);
    receiver.answer.push({ status: 302, headers: { location: `${receiver.url}/elsewhere` } });
    receiver.received.length = 0;
    const moved = await request(server, 'POST', `/api/v1/channels/${id}/test`, undefined, as(agent));
    assert.equal(moved.body.data.ok, false);
    assert.match(moved.body.data.error, /redirects are not followed/);
    assert.equal(receiver.received.length, 1, 'the redirect was not followed');
  });
});
