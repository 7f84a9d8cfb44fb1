// The web interface's API extensions (docs/interface.md): the cookie session (a credential of its
// own, hashed, ended after an idle time and a lifetime, listed and revoked), CSRF on
// cookie-authenticated writes, first-run state, source-token list and revocation, and the
// organization-scoped series read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type TestServer,
  controlRun,
  controlRows,
} from '../helpers/server';

const CSRF = { 'x-service-csrf': '1' };

/** The `svc_session=<value>` pair of a Set-Cookie answer, and the whole header for its attributes. */
function sessionCookie(headers: Headers): { pair: string; header: string } {
  const header = headers.getSetCookie().find((c) => c.startsWith('svc_session=')) ?? '';
  return { pair: header.split(';')[0]!, header };
}

/** A signed-in session of the agent: its `svc_session=<value>` pair. */
async function signIn(
  server: TestServer,
  agent: { email: string; password: string },
  headers: Record<string, string> = {},
): Promise<string> {
  const res = await request(
    server,
    'POST',
    '/api/v1/session',
    { email: agent.email, password: agent.password },
    { headers: { ...CSRF, ...headers } },
  );
  assert.equal(res.status, 201, res.text);
  return sessionCookie(res.headers).pair;
}

describe('first-run state', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('needs_setup until the first user exists; no authentication needed', async () => {
    const before = await request(server, 'GET', '/api/v1/bootstrap/setup-state');
    assert.equal(before.status, 200);
    assert.deepEqual(before.body.data, {
      needs_setup: true,
      registration_enabled: true,
      projects_enabled: true,
    });
    await signupWithOrganization(server);
    const afterSignup = await request(server, 'GET', '/api/v1/bootstrap/setup-state');
    assert.equal(afterSignup.body.data.needs_setup, false);
  });

  test('registration disabled: never needs setup', async () => {
    const closed = await startTestServer({ SERVICE_REGISTRATION_ENABLED: 'false' });
    try {
      const res = await request(closed, 'GET', '/api/v1/bootstrap/setup-state');
      assert.equal(res.body.data.needs_setup, false);
      assert.equal(res.body.data.registration_enabled, false);
    } finally {
      await closed.stop();
    }
  });
});

describe('the session cookie', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('sign-in sets an HttpOnly SameSite=Strict cookie, no token in the body; sign-out revokes it', async () => {
    const agent = await signupWithOrganization(server);
    const res = await request(
      server,
      'POST',
      '/api/v1/session',
      { email: agent.email.toUpperCase(), password: agent.password },
      { headers: CSRF },
    );
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.user.email, agent.email);
    assert.equal(res.body.data.organization.id, agent.organizationId);
    assert.ok(!res.text.includes('svc_uat_'), 'the token stays out of the body');
    const { pair, header } = sessionCookie(res.headers);
    assert.match(pair, /^svc_session=svc_ses_[A-Za-z0-9_-]{43}$/, 'a session credential, not an API token');
    assert.match(header, /httponly/i);
    assert.match(header, /samesite=strict/i);
    assert.match(header, /path=\//i);

    const cookie = { cookie: pair };
    const me = await request(server, 'GET', '/api/v1/session', undefined, { headers: cookie });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.user.email, agent.email);
    // ?optional=1 (the interface's first read): the account with a session, {data:null} without one,
    // a 401 still for a bad bearer token.
    const optional = '/api/v1/session?optional=1';
    const mine = await request(server, 'GET', optional, undefined, { headers: cookie });
    assert.equal(mine.body.data.user.email, agent.email);
    const none = await request(server, 'GET', optional);
    assert.deepEqual([none.status, none.body], [200, { data: null }]);
    const stale = await request(server, 'GET', optional, undefined, {
      headers: { cookie: 'svc_session=svc_ses_x' },
    });
    assert.deepEqual([stale.status, stale.body], [200, { data: null }]);
    assert.equal((await request(server, 'GET', optional, undefined, { token: 'svc_uat_nope' })).status, 401);
    assert.equal((await request(server, 'GET', '/api/v1/session')).status, 401);
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, { headers: cookie });
    assert.equal(dashboards.status, 200);

    const out = await request(server, 'DELETE', '/api/v1/session', undefined, {
      headers: { ...cookie, ...CSRF },
    });
    assert.equal(out.status, 200);
    assert.match(sessionCookie(out.headers).header, /svc_session=;/);
    const again = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { headers: cookie });
    assert.equal(again.status, 401);
    const bearer = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, {
      token: pair.slice('svc_session='.length),
    });
    assert.equal(bearer.status, 401, 'the ended session fails as a bearer token too');
  });

  test('wrong password 401, missing fields 400, the CSRF header required', async () => {
    const agent = await signupWithOrganization(server);
    const wrong = await request(
      server,
      'POST',
      '/api/v1/session',
      { email: agent.email, password: 'not the password' },
      { headers: CSRF },
    );
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, { errors: { detail: 'Invalid email or password' } });
    assert.equal(sessionCookie(wrong.headers).pair, '');
    const missing = await request(
      server,
      'POST',
      '/api/v1/session',
      { email: agent.email },
      { headers: CSRF },
    );
    assert.equal(missing.status, 400);
    const noHeader = await request(server, 'POST', '/api/v1/session', {
      email: agent.email,
      password: agent.password,
    });
    assert.equal(noHeader.status, 403);
    const array = await request(server, 'POST', '/api/v1/session', [1], { headers: CSRF });
    assert.equal(array.status, 400);
  });

  test('a bearer user token with no body opens a session (the first-run signup), then can be revoked alone', async () => {
    const agent = await signupWithOrganization(server);
    const res = await request(server, 'POST', '/api/v1/session', undefined, {
      token: agent.userToken,
      headers: CSRF,
    });
    assert.equal(res.status, 201, res.text);
    const pair = sessionCookie(res.headers).pair;
    assert.match(pair, /^svc_session=svc_ses_/);
    assert.ok(!pair.includes(agent.userToken), 'the cookie never carries the API token');
    const dropped = await request(server, 'DELETE', '/api/v1/session', undefined, { token: agent.userToken });
    assert.equal(dropped.status, 200);
    assert.equal(
      sessionCookie(dropped.headers).pair,
      '',
      'revoking the bearer token leaves the cookie alone',
    );
    assert.equal(
      (await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { token: agent.userToken })).status,
      401,
    );
    assert.equal(
      (await request(server, 'GET', '/api/v1/session', undefined, { headers: { cookie: pair } })).status,
      200,
      'the session lives on',
    );
    const noToken = await request(server, 'POST', '/api/v1/session', undefined, { headers: CSRF });
    assert.equal(noToken.status, 401);
    const project = await createProjectWithToken(server);
    const source = await request(server, 'POST', '/api/v1/session', undefined, {
      token: project.sourceToken,
      headers: CSRF,
    });
    assert.equal(source.status, 403, 'a source token cannot become a session');
  });

  test('cookie-authenticated writes need X-Service-CSRF; reads do not; a source token in the cookie is 401', async () => {
    const agent = await signupWithOrganization(server);
    const cookie = { cookie: await signIn(server, agent) };
    const body = { name: 'Team' };
    const refused = await request(server, 'POST', '/api/v1/dashboard-groups', body, { headers: cookie });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, { errors: { detail: 'Missing X-Service-CSRF header' } });
    const created = await request(server, 'POST', '/api/v1/dashboard-groups', body, {
      headers: { ...cookie, ...CSRF },
    });
    assert.equal(created.status, 201);
    const signOut = await request(server, 'DELETE', '/api/v1/session', undefined, { headers: cookie });
    assert.equal(signOut.status, 403, 'sign-out by cookie needs the header too');
    const project = await createProjectWithToken(server);
    const sourceCookie = await request(server, 'GET', '/api/v1/dashboards', undefined, {
      headers: { cookie: `svc_session=${project.sourceToken}` },
    });
    assert.equal(sourceCookie.status, 401);
    const junk = await request(server, 'GET', '/api/v1/dashboards', undefined, {
      headers: { cookie: 'svc_session=junk' },
    });
    assert.equal(junk.status, 401);
    const apiToken = await request(server, 'GET', '/api/v1/dashboards', undefined, {
      headers: { cookie: `svc_session=${agent.userToken}` },
    });
    assert.equal(
      apiToken.status,
      401,
      'an API token in the cookie (what older versions set) is no session: sign in again',
    );
  });

  test('an Authorization header wins over the cookie', async () => {
    const agent = await signupWithOrganization(server);
    const res = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, {
      headers: { cookie: await signIn(server, agent), authorization: 'Bearer nonsense' },
    });
    assert.equal(res.status, 401);
  });
});

describe('source tokens: list and revoke', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('lists without values; revoking stops the token at once; another organization gets 404', async () => {
    const owner = await createProjectWithToken(server);
    const list = await request(
      server,
      'GET',
      `/api/v1/bootstrap/source-tokens?source_id=${owner.sourceId.toUpperCase()}`,
      undefined,
      { token: owner.userToken },
    );
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    const listed = list.body.data[0];
    assert.deepEqual(Object.keys(listed).sort(), [
      'id',
      'inserted_at',
      'last5',
      'name',
      'read',
      'source_id',
      'write',
    ]);
    assert.equal(listed.last5, owner.sourceToken.slice(-5));
    assert.ok(!list.text.includes(owner.sourceToken));

    const read = () =>
      request(
        server,
        'GET',
        '/api/v1/metrics?from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z&granularity=1h',
        undefined,
        {
          token: owner.sourceToken,
          sourceId: owner.sourceId,
        },
      );
    assert.equal((await read()).status, 200, 'the token works (and is cached) before revocation');

    const other = await signupWithOrganization(server);
    const foreign = await request(
      server,
      'DELETE',
      `/api/v1/bootstrap/source-tokens/${listed.id}`,
      undefined,
      { token: other.userToken },
    );
    assert.equal(foreign.status, 404);
    const foreignList = await request(server, 'GET', '/api/v1/bootstrap/source-tokens', undefined, {
      token: other.userToken,
    });
    assert.deepEqual(foreignList.body.data, []);
    const bySource = await request(
      server,
      'DELETE',
      `/api/v1/bootstrap/source-tokens/${listed.id}`,
      undefined,
      { token: owner.sourceToken },
    );
    assert.equal(bySource.status, 403);

    const revoked = await request(
      server,
      'DELETE',
      `/api/v1/bootstrap/source-tokens/${listed.id}`,
      undefined,
      { token: owner.userToken },
    );
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.data.id, listed.id);
    assert.equal((await read()).status, 401);
    const twice = await request(server, 'DELETE', `/api/v1/bootstrap/source-tokens/${listed.id}`, undefined, {
      token: owner.userToken,
    });
    assert.equal(twice.status, 404);
    const malformed = await request(server, 'DELETE', '/api/v1/bootstrap/source-tokens/nope', undefined, {
      token: owner.userToken,
    });
    assert.equal(malformed.status, 404);
    const badFilter = await request(
      server,
      'GET',
      '/api/v1/bootstrap/source-tokens?source_id=nope',
      undefined,
      { token: owner.userToken },
    );
    assert.equal(badFilter.status, 400);
  });
});

describe('GET /api/v1/sources/:id/metrics', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('the user reads its organization’s series with /metrics rules; others 404; source tokens 403', async () => {
    const owner = await createProjectWithToken(server, { granularities: ['1h', '1d'] });
    const point = { key: 'orders', at: '2026-01-24T10:15:00Z', values: { count: 2, country: { SK: 2 } } };
    const track = await request(server, 'POST', '/api/v1/metrics', point, {
      token: owner.sourceToken,
      sourceId: owner.sourceId,
    });
    assert.equal(track.status, 201);
    const query = 'key=orders&from=2026-01-24T09:00:00Z&to=2026-01-24T11:00:00Z&granularity=1h';
    const path = `/api/v1/sources/${owner.sourceId}/metrics?${query}`;
    const viaUser = await request(server, 'GET', path, undefined, { token: owner.userToken });
    assert.equal(viaUser.status, 200, viaUser.text);
    const viaSource = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, {
      token: owner.sourceToken,
      sourceId: owner.sourceId,
    });
    assert.deepEqual(viaUser.body, viaSource.body);
    assert.deepEqual(viaUser.body.data.values[1], { count: 2, country: { SK: 2 } });

    const viaCookie = await request(server, 'GET', path, undefined, {
      headers: { cookie: await signIn(server, owner) },
    });
    assert.equal(viaCookie.status, 200);
    const system = await request(
      server,
      'GET',
      `/api/v1/sources/${owner.sourceId}/metrics?from=2026-01-24T10:00:00Z&to=2026-01-24T10:00:00Z&granularity=1h`,
      undefined,
      { token: owner.userToken },
    );
    assert.deepEqual(system.body.data.values[0], { count: 1, keys: { orders: 1 } });

    const other = await signupWithOrganization(server);
    assert.equal((await request(server, 'GET', path, undefined, { token: other.userToken })).status, 404);
    assert.equal((await request(server, 'GET', path, undefined, { token: owner.sourceToken })).status, 403);
    assert.equal((await request(server, 'GET', path)).status, 401);
    assert.equal(
      (
        await request(server, 'GET', `/api/v1/sources/nope/metrics?${query}`, undefined, {
          token: owner.userToken,
        })
      ).status,
      404,
    );
    const bad = await request(
      server,
      'GET',
      `/api/v1/sources/${owner.sourceId}/metrics?key=orders&from=x&to=y&granularity=1h`,
      undefined,
      { token: owner.userToken },
    );
    assert.equal(bad.status, 400);
    const notAllowed = await request(
      server,
      'GET',
      `/api/v1/sources/${owner.sourceId}/metrics?key=orders&from=2026-01-24T09:00:00Z&to=2026-01-24T11:00:00Z&granularity=1m`,
      undefined,
      { token: owner.userToken },
    );
    assert.equal(notAllowed.status, 400);
    const noOrg = await request(server, 'POST', '/api/v1/bootstrap/signup', {
      email: uniqueEmail(),
      password: 'long enough pw',
    });
    const orphan = await request(server, 'GET', path, undefined, { token: noOrg.body.data.token.value });
    assert.equal(orphan.status, 404);
  });
});

describe('interface sessions: their own credential, limited in time, listed and revoked', () => {
  let server: TestServer;
  let short: TestServer;
  before(async () => {
    server = await startTestServer();
    short = await startTestServer({
      SERVICE_SESSION_IDLE_TIMEOUT_SECONDS: '120',
      SERVICE_SESSION_MAX_LIFETIME_SECONDS: '600',
    });
  });
  after(async () => {
    await server.stop();
    await short.stop();
  });

  /** Runs `sql` on the server's tables (service.db, or PostgreSQL in cluster mode), as an operator would. */
  const sqlOn = (s: TestServer, sql: string, ...params: unknown[]) => controlRun(s, sql, ...params);
  const rowsOf = (s: TestServer, sql: string, ...params: unknown[]) => controlRows(s, sql, ...params);
  const valueOf = (pair: string) => pair.slice('svc_session='.length);
  const status = async (s: TestServer, pair: string) =>
    (await request(s, 'GET', '/api/v1/session', undefined, { headers: { cookie: pair } })).status;

  test('the cookie is no API token: as a bearer token it is 401; only its hash is stored', async () => {
    const agent = await signupWithOrganization(server);
    const pair = await signIn(server, agent);
    assert.equal(await status(server, pair), 200);
    for (const path of ['/api/v1/bootstrap/me', '/api/v1/dashboards', '/api/v1/session']) {
      const res = await request(server, 'GET', path, undefined, { token: valueOf(pair) });
      assert.equal(res.status, 401, `${path} with the session as a bearer token`);
    }
    const rows = await rowsOf(
      server,
      'SELECT s.* FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE u.email = ?',
      agent.email,
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.token_hash, createHash('sha256').update(valueOf(pair)).digest('hex'));
    assert.ok(!JSON.stringify(rows).includes(valueOf(pair)));
    const tokens = await rowsOf(
      server,
      "SELECT t.* FROM user_tokens t JOIN users u ON u.id = t.user_id WHERE u.email = ? AND t.name = 'Web session'",
      agent.email,
    );
    assert.equal(tokens.length, 0, 'signing in mints no API token');
  });

  test('the server ends a session after its idle time and its lifetime (configurable)', async () => {
    const agent = await signupWithOrganization(short);
    const idle = await signIn(short, agent);
    await sqlOn(
      short,
      'UPDATE web_sessions SET last_seen_at = last_seen_at - 100000 WHERE token_hash = ?',
      createHash('sha256').update(valueOf(idle)).digest('hex'),
    );
    assert.equal(await status(short, idle), 200, '100 s unused: within the configured 120 s');
    await sqlOn(
      short,
      'UPDATE web_sessions SET last_seen_at = last_seen_at - 30000 WHERE token_hash = ?',
      createHash('sha256').update(valueOf(idle)).digest('hex'),
    );
    assert.equal(await status(short, idle), 200, 'the last request counted as use');
    await sqlOn(
      short,
      'UPDATE web_sessions SET last_seen_at = last_seen_at - 121000 WHERE token_hash = ?',
      createHash('sha256').update(valueOf(idle)).digest('hex'),
    );
    assert.equal(await status(short, idle), 401, 'unused for longer than the idle time');
    assert.equal(
      (
        await rowsOf(
          short,
          'SELECT 1 FROM web_sessions WHERE token_hash = ?',
          createHash('sha256').update(valueOf(idle)).digest('hex'),
        )
      ).length,
      0,
      'and deleted',
    );

    const old = await signIn(short, agent);
    await sqlOn(
      short,
      'UPDATE web_sessions SET created_at = created_at - 601000 WHERE token_hash = ?',
      createHash('sha256').update(valueOf(old)).digest('hex'),
    );
    assert.equal(await status(short, old), 401, 'older than the lifetime, though used a moment ago');

    // The defaults: 7 days idle, 30 days in all.
    const owner = await signupWithOrganization(server);
    const pair = await signIn(server, owner);
    const hash = createHash('sha256').update(valueOf(pair)).digest('hex');
    await sqlOn(
      server,
      'UPDATE web_sessions SET last_seen_at = last_seen_at - ?, created_at = created_at - ? WHERE token_hash = ?',
      6.9 * 86400_000,
      29 * 86400_000,
      hash,
    );
    assert.equal(await status(server, pair), 200);
    await sqlOn(
      server,
      'UPDATE web_sessions SET last_seen_at = last_seen_at - ? WHERE token_hash = ?',
      7.1 * 86400_000,
      hash,
    );
    assert.equal(await status(server, pair), 401, 'a week unused');
    const month = await signIn(server, owner);
    await sqlOn(
      server,
      'UPDATE web_sessions SET created_at = created_at - ? WHERE token_hash = ?',
      30.1 * 86400_000,
      createHash('sha256').update(valueOf(month)).digest('hex'),
    );
    assert.equal(await status(server, month), 401, 'a month old');
    const cookie = sessionCookie(
      (
        await request(
          server,
          'POST',
          '/api/v1/session',
          { email: owner.email, password: owner.password },
          { headers: CSRF },
        )
      ).headers,
    ).header;
    const expires = Date.parse(/expires=([^;]+)/i.exec(cookie)?.[1] ?? '');
    assert.ok(
      Math.abs(expires - Date.now() - 30 * 86400_000) < 120_000,
      `the cookie lasts the lifetime: ${cookie}`,
    );
  });

  test('the user lists their sessions and revokes one; others cannot', async () => {
    const agent = await signupWithOrganization(server);
    const laptop = await signIn(server, agent, { 'user-agent': 'Laptop browser' });
    const phone = await signIn(server, agent, { 'user-agent': 'Phone browser' });
    const listed = await request(server, 'GET', '/api/v1/session/sessions', undefined, {
      headers: { cookie: laptop },
    });
    assert.equal(listed.status, 200, listed.text);
    const sessions = listed.body.data as Array<{
      id: string;
      current: boolean;
      user_agent: string;
      inserted_at: string;
      last_seen_at: string;
      expires_at: string;
    }>;
    assert.deepEqual(sessions.map((s) => [s.user_agent, s.current]).sort(), [
      ['Laptop browser', true],
      ['Phone browser', false],
    ]);
    assert.ok(
      !listed.text.includes(valueOf(laptop)) && !listed.text.includes(valueOf(phone)),
      'no credential in the list',
    );
    assert.ok(sessions.every((s) => typeof s.inserted_at === 'string' && typeof s.expires_at === 'string'));

    const other = await signupWithOrganization(server);
    const otherPair = await signIn(server, other);
    const phoneId = sessions.find((s) => !s.current)!.id;
    const foreign = await request(server, 'DELETE', `/api/v1/session/sessions/${phoneId}`, undefined, {
      headers: { cookie: otherPair, ...CSRF },
    });
    assert.equal(foreign.status, 404, "another user's session");
    assert.equal(await status(server, phone), 200);
    assert.equal(
      (
        await request(server, 'DELETE', '/api/v1/session/sessions/nope', undefined, {
          headers: { cookie: laptop, ...CSRF },
        })
      ).status,
      404,
    );
    assert.equal(
      (
        await request(server, 'DELETE', `/api/v1/session/sessions/${phoneId}`, undefined, {
          headers: { cookie: laptop },
        })
      ).status,
      403,
      'CSRF header required',
    );

    const revoked = await request(server, 'DELETE', `/api/v1/session/sessions/${phoneId}`, undefined, {
      headers: { cookie: laptop, ...CSRF },
    });
    assert.equal(revoked.status, 200, revoked.text);
    assert.equal(await status(server, phone), 401, 'the revoked session stops at once');
    assert.equal(await status(server, laptop), 200);
    const after = await request(server, 'GET', '/api/v1/session/sessions', undefined, {
      headers: { cookie: laptop },
    });
    assert.equal(after.body.data.length, 1);
    assert.equal((await request(server, 'GET', '/api/v1/session/sessions')).status, 401);

    // Sign-out ends the session for good, even if the cookie was copied before.
    const out = await request(server, 'DELETE', '/api/v1/session', undefined, {
      headers: { cookie: laptop, ...CSRF },
    });
    assert.equal(out.status, 200);
    assert.equal(await status(server, laptop), 401);
    assert.equal(
      (
        await rowsOf(
          server,
          'SELECT 1 FROM web_sessions WHERE token_hash = ?',
          createHash('sha256').update(valueOf(laptop)).digest('hex'),
        )
      ).length,
      0,
    );
  });
});
