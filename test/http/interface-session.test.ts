// The web interface's API extensions (docs/interface.md): the cookie session, CSRF on
// cookie-authenticated writes, first-run state, source-token list and revocation, and the
// organization-scoped series read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type TestServer,
} from '../helpers/server';

const CSRF = { 'x-service-csrf': '1' };

/** The `svc_session=<value>` pair of a Set-Cookie answer, and the whole header for its attributes. */
function sessionCookie(headers: Headers): { pair: string; header: string } {
  const header = headers.getSetCookie().find((c) => c.startsWith('svc_session=')) ?? '';
  return { pair: header.split(';')[0]!, header };
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
    assert.deepEqual(before.body.data, { needs_setup: true, registration_enabled: true, projects_enabled: true });
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
    const res = await request(server, 'POST', '/api/v1/session', { email: agent.email.toUpperCase(), password: agent.password }, { headers: CSRF });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.data.user.email, agent.email);
    assert.equal(res.body.data.organization.id, agent.organizationId);
    assert.ok(!res.text.includes('svc_uat_'), 'the token stays out of the body');
    const { pair, header } = sessionCookie(res.headers);
    assert.match(pair, /^svc_session=svc_uat_/);
    assert.match(header, /httponly/i);
    assert.match(header, /samesite=strict/i);
    assert.match(header, /path=\//i);

    const cookie = { cookie: pair };
    const me = await request(server, 'GET', '/api/v1/session', undefined, { headers: cookie });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.user.email, agent.email);
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, { headers: cookie });
    assert.equal(dashboards.status, 200);

    const out = await request(server, 'DELETE', '/api/v1/session', undefined, { headers: { ...cookie, ...CSRF } });
    assert.equal(out.status, 200);
    assert.match(sessionCookie(out.headers).header, /svc_session=;/);
    const again = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { headers: cookie });
    assert.equal(again.status, 401);
    const bearer = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { token: pair.slice('svc_session='.length) });
    assert.equal(bearer.status, 401, 'the revoked token fails as a bearer token too');
  });

  test('wrong password 401, missing fields 400, the CSRF header required', async () => {
    const agent = await signupWithOrganization(server);
    const wrong = await request(server, 'POST', '/api/v1/session', { email: agent.email, password: 'not the password' }, { headers: CSRF });
    assert.equal(wrong.status, 401);
    assert.deepEqual(wrong.body, { errors: { detail: 'Invalid email or password' } });
    assert.equal(sessionCookie(wrong.headers).pair, '');
    const missing = await request(server, 'POST', '/api/v1/session', { email: agent.email }, { headers: CSRF });
    assert.equal(missing.status, 400);
    const noHeader = await request(server, 'POST', '/api/v1/session', { email: agent.email, password: agent.password });
    assert.equal(noHeader.status, 403);
    const array = await request(server, 'POST', '/api/v1/session', [1], { headers: CSRF });
    assert.equal(array.status, 400);
  });

  test('a bearer user token with no body becomes the session (the first-run signup adopts its token)', async () => {
    const agent = await signupWithOrganization(server);
    const res = await request(server, 'POST', '/api/v1/session', undefined, { token: agent.userToken, headers: CSRF });
    assert.equal(res.status, 201, res.text);
    assert.equal(sessionCookie(res.headers).pair, `svc_session=${agent.userToken}`);
    const noToken = await request(server, 'POST', '/api/v1/session', undefined, { headers: CSRF });
    assert.equal(noToken.status, 401);
    const project = await createProjectWithToken(server);
    const source = await request(server, 'POST', '/api/v1/session', undefined, { token: project.sourceToken, headers: CSRF });
    assert.equal(source.status, 403, 'a source token cannot become a session');
  });

  test('cookie-authenticated writes need X-Service-CSRF; reads do not; a source token in the cookie is 401', async () => {
    const agent = await signupWithOrganization(server);
    const cookie = { cookie: `svc_session=${agent.userToken}` };
    const body = { name: 'Team' };
    const refused = await request(server, 'POST', '/api/v1/dashboard-groups', body, { headers: cookie });
    assert.equal(refused.status, 403);
    assert.deepEqual(refused.body, { errors: { detail: 'Missing X-Service-CSRF header' } });
    const created = await request(server, 'POST', '/api/v1/dashboard-groups', body, { headers: { ...cookie, ...CSRF } });
    assert.equal(created.status, 201);
    const signOut = await request(server, 'DELETE', '/api/v1/session', undefined, { headers: cookie });
    assert.equal(signOut.status, 403, 'sign-out by cookie needs the header too');
    const project = await createProjectWithToken(server);
    const sourceCookie = await request(server, 'GET', '/api/v1/dashboards', undefined, { headers: { cookie: `svc_session=${project.sourceToken}` } });
    assert.equal(sourceCookie.status, 401);
    const junk = await request(server, 'GET', '/api/v1/dashboards', undefined, { headers: { cookie: 'svc_session=junk' } });
    assert.equal(junk.status, 401);
  });

  test('an Authorization header wins over the cookie', async () => {
    const agent = await signupWithOrganization(server);
    const res = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, {
      headers: { cookie: `svc_session=${agent.userToken}`, authorization: 'Bearer nonsense' },
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
    const list = await request(server, 'GET', `/api/v1/bootstrap/source-tokens?source_id=${owner.sourceId.toUpperCase()}`, undefined, { token: owner.userToken });
    assert.equal(list.status, 200);
    assert.equal(list.body.data.length, 1);
    const listed = list.body.data[0];
    assert.deepEqual(Object.keys(listed).sort(), ['id', 'inserted_at', 'last5', 'name', 'read', 'source_id', 'write']);
    assert.equal(listed.last5, owner.sourceToken.slice(-5));
    assert.ok(!list.text.includes(owner.sourceToken));

    const read = () =>
      request(server, 'GET', '/api/v1/metrics?from=2026-01-01T00:00:00Z&to=2026-01-01T01:00:00Z&granularity=1h', undefined, {
        token: owner.sourceToken,
        sourceId: owner.sourceId,
      });
    assert.equal((await read()).status, 200, 'the token works (and is cached) before revocation');

    const other = await signupWithOrganization(server);
    const foreign = await request(server, 'DELETE', `/api/v1/bootstrap/source-tokens/${listed.id}`, undefined, { token: other.userToken });
    assert.equal(foreign.status, 404);
    const foreignList = await request(server, 'GET', '/api/v1/bootstrap/source-tokens', undefined, { token: other.userToken });
    assert.deepEqual(foreignList.body.data, []);
    const bySource = await request(server, 'DELETE', `/api/v1/bootstrap/source-tokens/${listed.id}`, undefined, { token: owner.sourceToken });
    assert.equal(bySource.status, 403);

    const revoked = await request(server, 'DELETE', `/api/v1/bootstrap/source-tokens/${listed.id}`, undefined, { token: owner.userToken });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.body.data.id, listed.id);
    assert.equal((await read()).status, 401);
    const twice = await request(server, 'DELETE', `/api/v1/bootstrap/source-tokens/${listed.id}`, undefined, { token: owner.userToken });
    assert.equal(twice.status, 404);
    const malformed = await request(server, 'DELETE', '/api/v1/bootstrap/source-tokens/nope', undefined, { token: owner.userToken });
    assert.equal(malformed.status, 404);
    const badFilter = await request(server, 'GET', '/api/v1/bootstrap/source-tokens?source_id=nope', undefined, { token: owner.userToken });
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
    const track = await request(server, 'POST', '/api/v1/metrics', point, { token: owner.sourceToken, sourceId: owner.sourceId });
    assert.equal(track.status, 201);
    const query = 'key=orders&from=2026-01-24T09:00:00Z&to=2026-01-24T11:00:00Z&granularity=1h';
    const path = `/api/v1/sources/${owner.sourceId}/metrics?${query}`;
    const viaUser = await request(server, 'GET', path, undefined, { token: owner.userToken });
    assert.equal(viaUser.status, 200, viaUser.text);
    const viaSource = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, { token: owner.sourceToken, sourceId: owner.sourceId });
    assert.deepEqual(viaUser.body, viaSource.body);
    assert.deepEqual(viaUser.body.data.values[1], { count: 2, country: { SK: 2 } });

    const viaCookie = await request(server, 'GET', path, undefined, { headers: { cookie: `svc_session=${owner.userToken}` } });
    assert.equal(viaCookie.status, 200);
    const system = await request(server, 'GET', `/api/v1/sources/${owner.sourceId}/metrics?from=2026-01-24T10:00:00Z&to=2026-01-24T10:00:00Z&granularity=1h`, undefined, { token: owner.userToken });
    assert.deepEqual(system.body.data.values[0], { count: 1, keys: { orders: 1 } });

    const other = await signupWithOrganization(server);
    assert.equal((await request(server, 'GET', path, undefined, { token: other.userToken })).status, 404);
    assert.equal((await request(server, 'GET', path, undefined, { token: owner.sourceToken })).status, 403);
    assert.equal((await request(server, 'GET', path)).status, 401);
    assert.equal((await request(server, 'GET', `/api/v1/sources/nope/metrics?${query}`, undefined, { token: owner.userToken })).status, 404);
    const bad = await request(server, 'GET', `/api/v1/sources/${owner.sourceId}/metrics?key=orders&from=x&to=y&granularity=1h`, undefined, { token: owner.userToken });
    assert.equal(bad.status, 400);
    const notAllowed = await request(server, 'GET', `/api/v1/sources/${owner.sourceId}/metrics?key=orders&from=2026-01-24T09:00:00Z&to=2026-01-24T11:00:00Z&granularity=1m`, undefined, { token: owner.userToken });
    assert.equal(notAllowed.status, 400);
    const noOrg = await request(server, 'POST', '/api/v1/bootstrap/signup', { email: uniqueEmail(), password: 'long enough pw' });
    const orphan = await request(server, 'GET', path, undefined, { token: noOrg.body.data.token.value });
    assert.equal(orphan.status, 404);
  });
});
