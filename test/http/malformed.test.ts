// Malformed requests to the bootstrap endpoints: every one answers 4xx with the SPEC error body,
// and afterwards the server is healthy and the data created before is unchanged.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type Agent,
  type TestServer,
  controlRow,
} from '../helpers/server';
import { databaseFixture } from '../helpers/databases';

const B = '/api/v1/bootstrap';
const JSON_TYPE = { 'content-type': 'application/json' };

interface Case {
  name: string;
  method?: string;
  path: string;
  body?: unknown;
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  /** which token to send: the agent's (with organization), a user without one, or none */
  as?: 'agent' | 'lone' | 'none';
  status: number;
}

const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

function cases(databaseId: string): Case[] {
  const uuid = databaseId;
  return [
    { name: 'signup: array body', path: `${B}/signup`, body: [], as: 'none', status: 400 },
    {
      name: 'signup: string body',
      path: `${B}/signup`,
      raw: '"email"',
      headers: JSON_TYPE,
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: null body',
      path: `${B}/signup`,
      raw: 'null',
      headers: JSON_TYPE,
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: number body',
      path: `${B}/signup`,
      raw: '12345',
      headers: JSON_TYPE,
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: truncated JSON',
      path: `${B}/signup`,
      raw: '{"email":',
      headers: JSON_TYPE,
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: single quotes',
      path: `${B}/signup`,
      raw: "{'email':'a@b'}",
      headers: JSON_TYPE,
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: empty JSON body',
      path: `${B}/signup`,
      raw: '',
      headers: JSON_TYPE,
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: email object',
      path: `${B}/signup`,
      body: { email: { $ne: null }, password: 'xxxxxxxx' },
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: email array',
      path: `${B}/signup`,
      body: { email: ['a@b.c'], password: 'xxxxxxxx' },
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: password null',
      path: `${B}/signup`,
      body: { email: 'a@b.c', password: null },
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: huge email',
      path: `${B}/signup`,
      body: { email: `${'a'.repeat(200_000)}@b.c`, password: 'xxxxxxxx' },
      as: 'none',
      status: 422,
    },
    {
      name: 'signup: SQL in email',
      path: `${B}/signup`,
      body: { email: "x' OR '1'='1", password: 'xxxxxxxx' },
      as: 'none',
      status: 422,
    },
    {
      name: 'signup: invalid UTF-8 bytes',
      path: `${B}/signup`,
      raw: Buffer.from([0x7b, 0xff, 0xfe, 0x22, 0x7d]),
      headers: JSON_TYPE,
      as: 'none',
      status: 400,
    },
    {
      name: 'signup: text/plain',
      path: `${B}/signup`,
      raw: 'email=a@b.c',
      headers: { 'content-type': 'text/plain' },
      as: 'none',
      status: 415,
    },
    {
      name: 'signup: form-urlencoded',
      path: `${B}/signup`,
      raw: 'email=a%40b.c&password=xxxxxxxx',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      as: 'none',
      status: 415,
    },
    {
      name: 'signup: multipart on a JSON endpoint',
      path: `${B}/signup`,
      raw: '--x\r\n\r\n--x--',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      as: 'none',
      status: 415,
    },
    { name: 'signup: PUT', method: 'PUT', path: `${B}/signup`, body: {}, as: 'none', status: 405 },
    {
      name: 'login: SQL in both fields',
      path: `${B}/login`,
      body: { email: "' OR 1=1 --", password: "' OR '1'='1" },
      as: 'none',
      status: 401,
    },
    {
      name: 'login: gzip header, plain bytes',
      path: `${B}/login`,
      raw: '{"email":"a@b.c"}',
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
      as: 'none',
      status: 400,
    },
    {
      name: 'login: gzip of junk JSON',
      path: `${B}/login`,
      raw: gzipSync('{{{{'),
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
      as: 'none',
      status: 400,
    },
    {
      name: 'login: brotli encoding',
      path: `${B}/login`,
      raw: '{}',
      headers: { ...JSON_TYPE, 'content-encoding': 'br' },
      as: 'none',
      status: 415,
    },
    {
      name: 'login: truncated gzip',
      path: `${B}/login`,
      raw: gzipSync('{"email":"a@b.c","password":"xxxxxxxx"}').subarray(0, 12),
      headers: { ...JSON_TYPE, 'content-encoding': 'gzip' },
      as: 'none',
      status: 400,
    },
    {
      name: 'me: oversized bearer token',
      method: 'GET',
      path: `${B}/me`,
      headers: { authorization: `Bearer ${'a'.repeat(5000)}` },
      as: 'none',
      status: 401,
    },
    {
      name: 'me: token with SQL',
      method: 'GET',
      path: `${B}/me`,
      headers: { authorization: "Bearer svc_uat_' OR 1=1 --" },
      as: 'none',
      status: 401,
    },
    {
      name: 'me: header over the limit',
      method: 'GET',
      path: `${B}/me`,
      headers: { authorization: `Bearer ${'a'.repeat(40_000)}` },
      as: 'none',
      status: 431,
    },
    {
      name: 'organizations: operator object as name',
      path: `${B}/organizations`,
      body: { name: { $gt: '' } },
      as: 'lone',
      status: 422,
    },
    {
      name: 'organizations: nested arrays as name',
      path: `${B}/organizations`,
      raw: `{"name":${nested(5000)}}`,
      headers: JSON_TYPE,
      as: 'lone',
      status: 422,
    },
    {
      name: 'organizations: 200k name',
      path: `${B}/organizations`,
      body: { name: 'n'.repeat(200_000) },
      as: 'lone',
      status: 422,
    },
    {
      name: 'organizations: __proto__ junk',
      path: `${B}/organizations`,
      raw: '{"__proto__":{"name":"x"},"constructor":{"prototype":{"name":"y"}}}',
      headers: JSON_TYPE,
      as: 'lone',
      status: 422,
    },
    {
      name: 'organizations: body over 1 MB',
      path: `${B}/organizations`,
      body: { name: 'n'.repeat(1_100_000) },
      as: 'lone',
      status: 413,
    },
    { name: 'projects: array body', path: `${B}/projects`, body: [{ name: 'p' }], status: 400 },
    { name: 'projects: name null', path: `${B}/projects`, body: { name: null }, status: 422 },
    {
      name: 'projects: SQL time zone',
      path: `${B}/projects`,
      body: { name: 'p', time_zone: "UTC'; DROP TABLE sources; --" },
      status: 422,
    },
    {
      name: 'projects: granularities of objects',
      path: `${B}/projects`,
      body: { name: 'p', granularities: [{ n: 1 }, ['1h']] },
      status: 422,
    },
    {
      name: 'projects: overflowing number',
      path: `${B}/projects`,
      raw: '{"name":"p","expire_after":1e400}',
      headers: JSON_TYPE,
      status: 422,
    },
    {
      name: 'projects: week as text with SQL',
      path: `${B}/projects`,
      body: { name: 'p', beginning_of_week: '1; DROP TABLE users' },
      status: 422,
    },
    {
      name: 'projects: huge granularity list',
      path: `${B}/projects`,
      body: { name: 'p', granularities: Array(10_000).fill('1h') },
      status: 422,
    },
    { name: 'databases: boolean body', path: `${B}/databases`, raw: 'true', headers: JSON_TYPE, status: 400 },
    {
      name: 'databases: driver null',
      path: `${B}/databases`,
      body: { display_name: 'd', driver: null },
      status: 422,
    },
    {
      name: 'databases: negative port',
      path: `${B}/databases`,
      body: { display_name: 'd', driver: 'redis', host: 'h', port: -1 },
      status: 422,
    },
    {
      name: 'databases: NUL in file_path',
      path: `${B}/databases`,
      body: { display_name: 'd', driver: 'sqlite', file_path: 'a\u0000b.sqlite' },
      status: 422,
    },
    {
      name: 'databases: /etc/passwd via ..',
      path: `${B}/databases`,
      body: { display_name: 'd', driver: 'sqlite', file_path: '../../../../etc/passwd' },
      status: 422,
    },
    {
      name: 'databases: broken multipart',
      path: `${B}/databases`,
      raw: 'this is not multipart',
      headers: { 'content-type': 'multipart/form-data; boundary=zzz' },
      status: 400,
    },
    {
      name: 'databases: multipart without boundary',
      path: `${B}/databases`,
      raw: '--\r\n',
      headers: { 'content-type': 'multipart/form-data' },
      status: 400,
    },
    {
      name: 'setup: SQL as id',
      path: `${B}/databases/${encodeURIComponent("'; DROP TABLE sources; --")}/setup`,
      status: 404,
    },
    { name: 'setup: 2000-char id', path: `${B}/databases/${'9'.repeat(2000)}/setup`, status: 404 },
    {
      name: 'setup: string body',
      path: `${B}/databases/${uuid}/setup`,
      raw: '"go"',
      headers: JSON_TYPE,
      status: 400,
    },
    {
      name: 'source-tokens: read as text',
      path: `${B}/source-tokens`,
      body: { source_type: 'database', source_id: uuid, read: 'true' },
      status: 422,
    },
    {
      name: 'source-tokens: source_id operator',
      path: `${B}/source-tokens`,
      body: { source_type: 'database', source_id: { $gt: '' } },
      status: 422,
    },
    {
      name: 'source-tokens: source_id list',
      path: `${B}/source-tokens`,
      body: { source_type: 'database', source_id: [uuid, uuid] },
      status: 422,
    },
    {
      name: 'source-tokens: type with SQL',
      path: `${B}/source-tokens`,
      body: { source_type: "database' --", source_id: uuid },
      status: 422,
    },
  ];
}

function assertErrorBody(c: Case, status: number, body: any): void {
  assert.equal(typeof body, 'object', `${c.name}: JSON body`);
  assert.equal(typeof body.errors, 'object', `${c.name}: errors object`);
  if (status === 422) {
    const entries = Object.entries(body.errors);
    assert.ok(entries.length > 0, c.name);
    for (const [field, messages] of entries) {
      assert.ok(Array.isArray(messages) && messages.length > 0, `${c.name}: ${field}`);
      for (const m of messages as unknown[]) assert.equal(typeof m, 'string', `${c.name}: ${field}`);
    }
  } else {
    assert.equal(typeof body.errors.detail, 'string', `${c.name}: detail`);
  }
}

describe('malformed bootstrap requests', () => {
  let server: TestServer;
  let agent: Agent;
  let lone: string;
  let databaseId: string;
  const snapshot = async () => ({
    me: (await request(server, 'GET', `${B}/me`, undefined, { token: agent.userToken })).body,
    sources: (await request(server, 'GET', `${B}/sources`, undefined, { token: agent.userToken })).body,
    lone: (await request(server, 'GET', `${B}/me`, undefined, { token: lone })).body,
    counts: await Promise.all(
      ['users', 'organizations', 'memberships', 'user_tokens', 'sources', 'source_tokens'].map(
        async (t) => (await controlRow<{ n: number }>(server, `SELECT count(*) AS n FROM ${t}`))!.n,
      ),
    ),
  });

  before(async () => {
    server = await startTestServer();
    agent = await signupWithOrganization(server, 'Malformed Inc');
    const signup = await request(server, 'POST', `${B}/signup`, {
      email: uniqueEmail(),
      password: 'correct horse battery',
    });
    lone = signup.body.data.token.value;
    await request(server, 'POST', `${B}/projects`, { name: 'Existing project' }, { token: agent.userToken });
    const db = await request(
      server,
      'POST',
      `${B}/databases`,
      { display_name: 'Existing db', ...(await databaseFixture(server, 'e', { setup: true })) },
      { token: agent.userToken },
    );
    databaseId = db.body.data.source.id;
    await request(server, 'POST', `${B}/databases/${databaseId}/setup`, undefined, {
      token: agent.userToken,
    });
  });
  after(() => server.stop());

  test('at least 30 malformed requests each answer their 4xx with the SPEC body; nothing changes', async () => {
    const before = await snapshot();
    const all = cases(databaseId);
    assert.ok(all.length >= 30);
    for (const c of all) {
      const token = c.as === 'none' ? undefined : c.as === 'lone' ? lone : agent.userToken;
      const res = await request(server, c.method ?? 'POST', c.path, c.body, {
        token,
        raw: c.raw,
        headers: c.headers,
      });
      assert.equal(res.status, c.status, `${c.name}: ${res.text.slice(0, 200)}`);
      assertErrorBody(c, res.status, res.body);
    }
    const health = await request(server, 'GET', '/api/v1/health');
    assert.equal(health.status, 200);
    assert.equal(health.body.status, 'ok');
    assert.deepEqual(await snapshot(), before);
  });
});
