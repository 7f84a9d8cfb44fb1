// Numbers and keys at the ingest edge (SPEC 5.2). Issue 9: keys " ", a no-break space or a lone
// surrogate were accepted but could never be read back; `__system__key__` could be written
// directly; two tracks of 1e308 were both accepted, after which the embedded store returned null.
// The rules live in the ingest code (src/domain/metrics/ingest/points.ts, model/point-wire.ts and the checked
// lane of the write path); test/http/ingest-rules-engine.test.ts covers them for sqlite sources too.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  type ProjectAgent,
  type TestServer,
  startTestServer,
} from '../helpers/server';

const AT = '2026-01-24T10:00:00Z';
const RANGE = `from=${AT}&to=${AT}&granularity=1h`;

describe('ingest rules for keys and numbers', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  const as = () => ({ token: agent.sourceToken, sourceId: agent.sourceId });
  /** POST /metrics with the body as JSON text (lone surrogates need it written by hand). */
  const postText = (text: string) =>
    request(server, 'POST', '/api/v1/metrics', undefined, {
      ...as(),
      raw: text,
      headers: { 'content-type': 'application/json' },
    });
  const read = (key: string) =>
    request(server, 'GET', `/api/v1/metrics?key=${encodeURIComponent(key)}&${RANGE}`, undefined, as());

  before(async () => {
    server = await startTestServer();
    agent = await createProjectWithToken(server);
  });
  after(() => server.stop());

  async function assertNothingStored() {
    const system = await read('__system__key__');
    assert.equal(system.status, 200);
    const keys = Object.keys((system.body.data.values[0] ?? {}).keys ?? {});
    assert.deepEqual(
      keys.filter((k) => k !== 'ok' && k !== 'big'),
      [],
      `stored keys: ${keys.join(', ')}`,
    );
  }

  for (const [name, text] of [
    ['a blank key " "', `{"key":" ","at":"${AT}","values":{"n":1}}`],
    ['a key of white space (tab, newline)', `{"key":"\\t\\n","at":"${AT}","values":{"n":1}}`],
    ['a no-break-space-only key', `{"key":"\\u00a0","at":"${AT}","values":{"n":1}}`],
    ['a key with a lone surrogate', `{"key":"a\\ud800b","at":"${AT}","values":{"n":1}}`],
    ['a key with a lone low surrogate', `{"key":"\\udc00","at":"${AT}","values":{"n":1}}`],
  ] as const) {
    test(`${name} is 400 and stores nothing`, async () => {
      const res = await postText(text);
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.errors.detail, /key/);
      await assertNothingStored();
    });
  }

  test('__system__key__ written directly is 422 naming key, and the system key is unchanged', async () => {
    const ok = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key: 'ok', at: AT, values: { n: 1 } },
      as(),
    );
    assert.equal(ok.status, 201);
    const before = await read('__system__key__');
    const res = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key: '__system__key__', at: AT, values: { count: 1000 } },
      as(),
    );
    assert.equal(res.status, 422, res.text);
    assert.ok(res.body.errors.key, res.text);
    assert.deepEqual((await read('__system__key__')).body, before.body);
  });

  test('a second track of 1e308 would overflow: refused whole (422), the stored value unchanged', async () => {
    const first = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key: 'big', at: AT, values: { v: 1e308 } },
      as(),
    );
    assert.equal(first.status, 201, first.text);
    const second = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key: 'big', at: AT, values: { v: 1e308, other: 1 } },
      as(),
    );
    assert.equal(second.status, 422, second.text);
    const stored = await read('big');
    assert.deepEqual(
      stored.body.data.values,
      [{ v: 1e308 }],
      'the value is unchanged and the other leaf was not stored',
    );
  });

  test('the server stays healthy after all of it', async () => {
    assert.equal((await request(server, 'GET', '/api/v1/health')).status, 200);
    const res = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key: 'after', at: AT, values: { n: 1 } },
      as(),
    );
    assert.equal(res.status, 201);
  });
});
