// The login throttle through the real server (SPEC 3). Issue 9: 200 parallel wrong passwords were
// all checked and the right one still logged in (the throttle was read before the asynchronous
// argon2 check and updated after it); the throttle was per e-mail only, and 10,001 failures on other
// e-mails cleared a victim's block.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type TestServer,
} from '../helpers/server';
import { ADDRESS_RULE, EMAIL_RULE, createLoginThrottle } from '../../src/domain/login-throttle';

const LOGIN = '/api/v1/bootstrap/login';
const TOO_MANY = { errors: { detail: 'Too many failed login attempts, retry later' } };

/** A server whose clock stands still (the throttle reads deps.now), so the tests do not race it. */
async function frozenServer(
  env: Record<string, string> = {},
): Promise<{ server: TestServer; advance(ms: number): void }> {
  const server = await startTestServer(env);
  let clock = Date.now();
  server.deps.now = () => clock;
  return { server, advance: (ms) => void (clock += ms) };
}

describe('login throttle over HTTP', () => {
  let server: TestServer;
  let advance: (ms: number) => void;
  before(async () => {
    ({ server, advance } = await frozenServer());
  });
  after(() => server.stop());

  test('200 parallel wrong passwords: at most 5 are checked, the rest 429 + Retry-After, and the right one is then refused', async () => {
    const victim = await signupWithOrganization(server);
    const guesses = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        request(server, 'POST', LOGIN, { email: victim.email, password: `wrong guess ${i}` }),
      ),
    );
    const statuses = guesses.map((r) => r.status);
    assert.equal(
      statuses.filter((s) => s === 401).length,
      5,
      'only the free attempts reach the password check',
    );
    assert.equal(statuses.filter((s) => s === 429).length, 195);
    for (const r of guesses.filter((g) => g.status === 429)) {
      assert.deepEqual(r.body, TOO_MANY);
      assert.match(r.headers.get('retry-after') ?? '', /^[1-9]\d*$/);
    }
    const right = await request(server, 'POST', LOGIN, { email: victim.email, password: victim.password });
    assert.deepEqual(
      [right.status, right.body],
      [429, TOO_MANY],
      'the right password is refused while blocked',
    );
    // The victim's account is intact and usable once the block has run out.
    assert.equal(
      (await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { token: victim.userToken })).status,
      200,
    );
    advance(1_000);
    const later = await request(server, 'POST', LOGIN, { email: victim.email, password: victim.password });
    assert.equal(later.status, 201, later.text);
  });

  test('failures on many other e-mails do not clear a blocked victim (bounded map, small here)', async () => {
    // The same eviction rule as the 10,000-entry default (unit-tested at 10,001), on a map of 50 so
    // that 60 argon2 checks suffice; the address rule is lifted so only the e-mail map is exercised.
    const real = server.deps.loginThrottle;
    server.deps.loginThrottle = createLoginThrottle({
      email: { ...EMAIL_RULE, maxEntries: 50 },
      address: { ...ADDRESS_RULE, free: 1e9 },
    });
    try {
      const victim = await signupWithOrganization(server);
      for (let i = 0; i < 5; i++)
        await request(server, 'POST', LOGIN, { email: victim.email, password: 'nope nope' });
      for (let i = 0; i < 60; i++) {
        const res = await request(server, 'POST', LOGIN, {
          email: uniqueEmail('spray'),
          password: 'whatever1',
        });
        assert.equal(res.status, 401);
      }
      const right = await request(server, 'POST', LOGIN, { email: victim.email, password: victim.password });
      assert.deepEqual([right.status, right.body], [429, TOO_MANY]);
    } finally {
      server.deps.loginThrottle = real;
    }
  });
});

describe('login throttle per client address over HTTP', () => {
  let server: TestServer;
  let advance: (ms: number) => void;
  before(async () => {
    ({ server, advance } = await frozenServer());
  });
  after(() => server.stop());

  test('an address failing on many accounts is slowed, even on an account it never tried', async () => {
    const bystander = await signupWithOrganization(server);
    for (let i = 0; i < ADDRESS_RULE.free; i++) {
      const res = await request(server, 'POST', LOGIN, { email: uniqueEmail('acct'), password: 'wrong one' });
      assert.equal(res.status, 401, `attempt ${i + 1}`);
    }
    const next = await request(server, 'POST', LOGIN, {
      email: bystander.email,
      password: bystander.password,
    });
    assert.deepEqual([next.status, next.body], [429, TOO_MANY]);
    assert.equal(next.headers.get('retry-after'), '1');
    advance(1_000);
    const after = await request(server, 'POST', LOGIN, {
      email: bystander.email,
      password: bystander.password,
    });
    assert.equal(after.status, 201, after.text);
    const health = await request(server, 'GET', '/api/v1/health');
    assert.equal(health.status, 200);
  });
});

describe('the client address behind a reverse proxy', () => {
  const login = (server: TestServer, email: string, password: string, forwardedFor: string) =>
    request(server, 'POST', LOGIN, { email, password }, { headers: { 'x-forwarded-for': forwardedFor } });

  test('with server.trust_proxy, X-Forwarded-For (its last entry) names the address that is slowed', async () => {
    const { server } = await frozenServer({ SERVICE_TRUST_PROXY: 'true' });
    try {
      const bystander = await signupWithOrganization(server);
      for (let i = 0; i < ADDRESS_RULE.free; i++) {
        // A forged first entry does not move the failures elsewhere: the proxy's own entry is last.
        const res = await login(server, uniqueEmail('p'), 'wrong one', `10.9.9.${i}, 198.51.100.1`);
        assert.equal(res.status, 401);
      }
      const attacker = await login(server, bystander.email, bystander.password, '198.51.100.1');
      assert.equal(attacker.status, 429);
      const neighbour = await login(server, bystander.email, bystander.password, '198.51.100.2');
      assert.equal(neighbour.status, 201, 'another client behind the same proxy is not slowed');
    } finally {
      await server.stop();
    }
  });

  test('without it, X-Forwarded-For is ignored (it could be forged)', async () => {
    const { server } = await frozenServer();
    try {
      for (let i = 0; i < ADDRESS_RULE.free; i++) {
        assert.equal((await login(server, uniqueEmail('d'), 'wrong one', `203.0.113.${i}`)).status, 401);
      }
      assert.equal((await login(server, uniqueEmail('d'), 'wrong one', '203.0.113.250')).status, 429);
    } finally {
      await server.stop();
    }
  });
});
