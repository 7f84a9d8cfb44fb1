// SPEC 5.2 ingest rules that live in the write path: blank and malformed keys (400), the system
// key (422), and tracks whose sum would leave the finite range of a double (422, nothing of the
// point or its batch stored, also when only the stored value shows the overflow), for the embedded
// store and a sqlite database source.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  type TestServer,
} from '../helpers/server';
import { databaseFixture } from '../helpers/databases';

let server: TestServer;
let as: { token: string; sourceId: string };
before(async () => {
  server = await startTestServer();
  const agent = await createProjectWithToken(server, { granularities: ['1m', '1h', '1y'] });
  as = { token: agent.sourceToken, sourceId: agent.sourceId };
});
after(() => server.stop());

const at = '2026-02-03T04:05:06Z';
const post = (body: unknown, who = as) => request(server, 'POST', '/api/v1/metrics', body, who);
const batch = (points: unknown[], who = as) =>
  request(server, 'POST', '/api/v1/metrics/batch', { points }, who);
const raw = (text: string) =>
  request(server, 'POST', '/api/v1/metrics', undefined, {
    ...as,
    raw: text,
    headers: { 'content-type': 'application/json' },
  });

async function stored(key: string, granularity = '1h', who = as): Promise<unknown> {
  const res = await request(
    server,
    'GET',
    `/api/v1/metrics?${new URLSearchParams({ key, from: at, to: at, granularity })}`,
    undefined,
    who,
  );
  assert.equal(res.status, 200, res.text);
  return res.body.data.values[0];
}

describe('keys', () => {
  const blanks = [' ', '   ', '\t\n', '\u00a0', '\u2003', '\u3000', '\u202f', '\u200b', ' \u00a0\u2009 '];
  test('a blank key, white space of any kind only, is a 400', async () => {
    for (const key of blanks) {
      const res = await post({ key, at, values: { n: 1 } });
      assert.equal(res.status, 400, JSON.stringify(key));
      assert.match(res.body.errors.detail, /key must not be blank/);
    }
  });

  test('a key with a lone surrogate is a 400; a well-formed pair is fine', async () => {
    for (const key of ['a\\ud800b', '\\udc00', 'x\\ud83d']) {
      const res = await raw(`{"key":"${key}","at":"${at}","values":{"n":1}}`);
      assert.equal(res.status, 400, key);
      assert.match(res.body.errors.detail, /lone surrogate/);
    }
    assert.equal((await raw(`{"key":"smile\\ud83d\\ude00","at":"${at}","values":{"n":1}}`)).status, 201);
    assert.deepEqual(await stored('smile\u{1f600}'), { n: 1 });
  });

  test('longer than 255 characters is a 400; 255 characters beyond the BMP pass', async () => {
    assert.equal((await post({ key: 'k'.repeat(256), at, values: { n: 1 } })).status, 400);
    assert.equal((await post({ key: '\u{1f600}'.repeat(255), at, values: { n: 1 } })).status, 201);
  });

  test('the system key is a 422, and a batch holding it stores nothing', async () => {
    const res = await post({ key: '__system__key__', at, values: { count: 5 } });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.errors.key, ['must not be the system key __system__key__']);
    const b = await batch([
      { key: 'sys.ok', at, values: { n: 1 } },
      { key: '__system__key__', at, values: { n: 1 } },
    ]);
    assert.equal(b.status, 422);
    assert.ok(b.body.errors['points[1].key']);
    assert.deepEqual(await stored('sys.ok'), {});
  });

  test('in a batch, a blank key names its point', async () => {
    const b = await batch([
      { key: 'fine', at, values: { n: 1 } },
      { key: '\u00a0', at, values: { n: 1 } },
    ]);
    assert.equal(b.status, 422);
    assert.deepEqual(b.body.errors['points[1].key'], ['must not be blank']);
  });
});

describe('tracks that would overflow', () => {
  test('two tracks of 1e308: the second is refused and 1e308 stays, in every granularity', async () => {
    assert.equal((await post({ key: 'big', at, values: { v: 1e308, other: 1 } })).status, 201);
    const res = await post({ key: 'big', at, values: { v: 1e308, other: 1 } });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body.errors.values, ['track of v would leave the finite range of a double']);
    for (const g of ['1m', '1h', '1y']) assert.deepEqual(await stored('big', g), { v: 1e308, other: 1 });
  });

  test('a small track against a stored value at the edge is refused; one that fits passes', async () => {
    assert.equal((await post({ key: 'edge', at, values: { v: Number.MAX_VALUE } })).status, 201);
    assert.equal((await post({ key: 'edge', at, values: { v: 1e295 } })).status, 422);
    assert.equal((await post({ key: 'edge', at, values: { v: -1e308 } })).status, 201);
    assert.deepEqual(await stored('edge'), { v: Number.MAX_VALUE - 1e308 });
  });

  test('negative sums too', async () => {
    assert.equal((await post({ key: 'neg', at, values: { v: -1.5e308 } })).status, 201);
    assert.equal((await post({ key: 'neg', at, values: { v: -1e308 } })).status, 422);
    assert.deepEqual(await stored('neg'), { v: -1.5e308 });
  });

  test('a batch that overflows only against the stored value is refused whole', async () => {
    assert.equal((await post({ key: 'stored', at, values: { v: 1.2e308 } })).status, 201);
    const b = await batch([
      { key: 'bystander', at, values: { n: 1 } },
      { key: 'stored', at, values: { v: 5e307 } },
      { key: 'stored', at, values: { v: 5e307 } },
    ]);
    assert.equal(b.status, 422);
    assert.deepEqual(b.body.errors['points[2].values'], [
      'track of v would leave the finite range of a double',
    ]);
    assert.deepEqual(await stored('bystander'), {});
    assert.deepEqual(await stored('stored'), { v: 1.2e308 });
  });

  test('within one batch, the overflow is found between its own points; an assert resets the sum', async () => {
    const b = await batch([
      { key: 'inner', at, values: { v: 1e308 } },
      { key: 'inner', at, values: { v: 1e308 } },
    ]);
    assert.equal(b.status, 422);
    assert.ok(b.body.errors['points[1].values']);
    const ok = await batch([
      { key: 'inner', at, values: { v: 1e308 } },
      { key: 'inner', at, operation: 'assert', values: { v: 1 } },
      { key: 'inner', at, values: { v: 1e308 } },
    ]);
    assert.equal(ok.status, 201);
    assert.deepEqual(await stored('inner', '1m'), { v: 1e308 + 1 });
  });

  test('a refused track does not fail the requests committed with it', async () => {
    assert.equal((await post({ key: 'crowd.big', at, values: { v: 1e308 } })).status, 201);
    const others = Array.from({ length: 30 }, () => post({ key: 'crowd', at, values: { n: 1 } }));
    const refused = post({ key: 'crowd.big', at, values: { v: 1e308 } });
    const more = Array.from({ length: 30 }, () => batch([{ key: 'crowd', at, values: { n: 1 } }]));
    const statuses = (await Promise.all([...others, ...more])).map((r) => r.status);
    assert.deepEqual(new Set(statuses), new Set([201]));
    assert.equal((await refused).status, 422);
    assert.deepEqual(await stored('crowd'), { n: 60 });
    assert.deepEqual(await stored('crowd.big'), { v: 1e308 });
  });
});

describe('a sqlite database source', () => {
  test('refuses an overflowing track too and never stores a non-finite number', async () => {
    const agent = await signupWithOrganization(server);
    const user = { token: agent.userToken };
    const db = await request(
      server,
      'POST',
      '/api/v1/bootstrap/databases',
      { display_name: 'Stats', ...(await databaseFixture(server, 'overflow', { setup: true })) },
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
    const who = { token: token.body.data.token.value as string, sourceId: id };
    assert.equal((await post({ key: 'big', at, values: { v: 1e308 } }, who)).status, 201);
    assert.equal((await post({ key: 'big', at, values: { v: 1e308 } }, who)).status, 422);
    assert.equal(
      (
        await batch(
          [
            { key: 'big', at, values: { v: 1 } },
            { key: 'big', at, values: { v: 1e308 } },
          ],
          who,
        )
      ).status,
      422,
    );
    assert.deepEqual(await stored('big', '1h', who), { v: 1e308 });
  });
});
