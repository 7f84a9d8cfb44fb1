// Bootstrap accounts: signup, login (with its throttle), me, organizations (SPEC sections 3 and 4).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type TestServer,
  controlRow,
} from '../helpers/server';

const SIGNUP = '/api/v1/bootstrap/signup';
const LOGIN = '/api/v1/bootstrap/login';
const ME = '/api/v1/bootstrap/me';
const ORGS = '/api/v1/bootstrap/organizations';
const PASSWORD = 'correct horse battery';
const USER_TOKEN = /^svc_uat_[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const count = async (server: TestServer, table: string): Promise<number> =>
  (await controlRow<{ n: number }>(server, `SELECT count(*) AS n FROM ${table}`))!.n;

describe('bootstrap signup', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('without organization_name: user and token, organization and membership null', async () => {
    const email = uniqueEmail();
    const res = await request(server, 'POST', SIGNUP, { email, password: PASSWORD });
    assert.equal(res.status, 201);
    const { user, token, organization, membership } = res.body.data;
    assert.match(user.id, UUID);
    assert.deepEqual(user, { id: user.id, email, name: null });
    assert.equal(token.name, 'CLI token');
    assert.match(token.value, USER_TOKEN);
    assert.deepEqual(Object.keys(res.body.data).sort(), ['membership', 'organization', 'token', 'user']);
    assert.equal(organization, null);
    assert.equal(membership, null);
  });

  test('with organization_name: organization with a slug, owner membership, name and token_name kept', async () => {
    const res = await request(server, 'POST', SIGNUP, {
      email: uniqueEmail(),
      password: PASSWORD,
      name: '  Ada Lovelace ',
      organization_name: 'Analytical Engines, Ltd.',
      token_name: 'laptop',
    });
    assert.equal(res.status, 201);
    const { user, token, organization, membership } = res.body.data;
    assert.equal(user.name, 'Ada Lovelace');
    assert.equal(token.name, 'laptop');
    assert.deepEqual(organization, {
      id: organization.id,
      name: 'Analytical Engines, Ltd.',
      slug: 'analytical-engines-ltd',
    });
    assert.match(membership.id, UUID);
    assert.deepEqual(membership, { id: membership.id, role: 'owner', organization_id: organization.id });
  });

  test('stores an argon2id hash and only the SHA-256 and last 5 characters of the token', async () => {
    const email = uniqueEmail();
    const res = await request(server, 'POST', SIGNUP, { email, password: PASSWORD });
    const value: string = res.body.data.token.value;
    const user = (await controlRow(server, 'SELECT * FROM users WHERE id = ?', res.body.data.user.id))!;
    assert.match(String(user.password_hash), /^\$argon2id\$/);
    assert.ok(!Object.values(user).includes(PASSWORD));
    const row = (await controlRow(server, 'SELECT * FROM user_tokens WHERE user_id = ?', user.id))!;
    assert.equal(row.token_hash, createHash('sha256').update(value).digest('hex'));
    assert.equal(row.last5, value.slice(-5));
    assert.ok(!Object.values(row).includes(value));
  });

  test('emails are unique case-insensitively and kept as given', async () => {
    const email = `Mixed.Case-${Date.now()}@Example.COM`;
    const first = await request(server, 'POST', SIGNUP, { email, password: PASSWORD });
    assert.equal(first.status, 201);
    assert.equal(first.body.data.user.email, email);
    const again = await request(server, 'POST', SIGNUP, { email: email.toLowerCase(), password: PASSWORD });
    assert.equal(again.status, 422);
    assert.deepEqual(again.body, { errors: { email: ['has already been taken'] } });
  });

  test('missing or non-string email/password is 400 naming the field', async () => {
    const cases: [unknown, string][] = [
      [{ password: PASSWORD }, 'email is required'],
      [{ email: uniqueEmail() }, 'password is required'],
      [{ email: null, password: PASSWORD }, 'email is required'],
      [{ email: 42, password: PASSWORD }, 'email must be a string'],
      [{ email: uniqueEmail(), password: ['x'] }, 'password must be a string'],
      [{}, 'email is required'],
    ];
    for (const [body, detail] of cases) {
      const res = await request(server, 'POST', SIGNUP, body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.deepEqual(res.body, { errors: { detail } });
    }
  });

  test('field rules are 422 naming every broken field', async () => {
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ email: 'no-at-sign', password: PASSWORD }, { email: ['is not a valid email address'] }],
      [{ email: 'two words@x.y', password: PASSWORD }, { email: ['is not a valid email address'] }],
      [
        { email: `${'a'.repeat(150)}@example.com`, password: PASSWORD },
        { email: ['must be at most 160 characters'] },
      ],
      [{ email: uniqueEmail(), password: 'short' }, { password: ['must be at least 8 characters'] }],
      [{ email: uniqueEmail(), password: 'p'.repeat(257) }, { password: ['must be at most 256 characters'] }],
      [
        { email: 'bad', password: '1234567' },
        { email: ['is not a valid email address'], password: ['must be at least 8 characters'] },
      ],
      [
        { email: uniqueEmail(), password: PASSWORD, name: 'n'.repeat(256) },
        { name: ['must be at most 255 characters'] },
      ],
      [{ email: uniqueEmail(), password: PASSWORD, name: 7 }, { name: ['must be a string'] }],
      [
        { email: uniqueEmail(), password: PASSWORD, organization_name: '   ' },
        { organization_name: ["can't be blank"] },
      ],
      [
        { email: uniqueEmail(), password: PASSWORD, organization_name: { a: 1 } },
        { organization_name: ['must be a string'] },
      ],
      [{ email: uniqueEmail(), password: PASSWORD, token_name: false }, { token_name: ['must be a string'] }],
    ];
    for (const [body, errors] of cases) {
      const res = await request(server, 'POST', SIGNUP, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.deepEqual(res.body, { errors });
    }
  });

  test('passwords are not trimmed and an 8-character password of spaces is accepted', async () => {
    const email = uniqueEmail();
    assert.equal((await request(server, 'POST', SIGNUP, { email, password: '        ' })).status, 201);
    assert.equal((await request(server, 'POST', LOGIN, { email, password: '       ' })).status, 401);
    assert.equal((await request(server, 'POST', LOGIN, { email, password: '        ' })).status, 201);
  });

  test('a taken organization slug is 422 and leaves nothing behind', async () => {
    await signupWithOrganization(server, 'Acme Widgets');
    const users = await count(server, 'users');
    const orgs = await count(server, 'organizations');
    const email = uniqueEmail();
    const res = await request(server, 'POST', SIGNUP, {
      email,
      password: PASSWORD,
      organization_name: 'ACME  widgets!',
    });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body, { errors: { organization_name: ['has already been taken'] } });
    assert.equal(await count(server, 'users'), users);
    assert.equal(await count(server, 'organizations'), orgs);
    // The email is still free.
    assert.equal((await request(server, 'POST', SIGNUP, { email, password: PASSWORD })).status, 201);
  });

  test('a taken email and a taken slug are reported together', async () => {
    const agent = await signupWithOrganization(server, 'Both Taken');
    const res = await request(server, 'POST', SIGNUP, {
      email: agent.email,
      password: PASSWORD,
      organization_name: 'both taken',
    });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body, {
      errors: { email: ['has already been taken'], organization_name: ['has already been taken'] },
    });
  });
});

describe('bootstrap signup with registration disabled', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SERVICE_REGISTRATION_ENABLED: 'false' });
  });
  after(() => server.stop());

  test('signup is 403 with the feature message, even for a bad body', async () => {
    for (const body of [{ email: uniqueEmail(), password: PASSWORD }, {}]) {
      const res = await request(server, 'POST', SIGNUP, body);
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { errors: { detail: 'Registration is disabled for this deployment' } });
    }
    assert.equal(await count(server, 'users'), 0);
  });

  test('login still answers (401 for unknown users)', async () => {
    const res = await request(server, 'POST', LOGIN, { email: uniqueEmail(), password: PASSWORD });
    assert.equal(res.status, 401);
  });
});

describe('bootstrap login', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('201 with the signup shape; every call mints a new token; old tokens keep working', async () => {
    const agent = await signupWithOrganization(server, 'Login Org');
    const first = await request(server, 'POST', LOGIN, {
      email: agent.email.toUpperCase(),
      password: PASSWORD,
    });
    assert.equal(first.status, 201);
    const data = first.body.data;
    assert.deepEqual(Object.keys(data).sort(), ['membership', 'organization', 'token', 'user']);
    assert.equal(data.user.email, agent.email);
    assert.equal(data.organization.id, agent.organizationId);
    assert.equal(data.membership.role, 'owner');
    assert.equal(data.token.name, 'CLI token');
    assert.match(data.token.value, USER_TOKEN);
    const second = await request(server, 'POST', LOGIN, {
      email: agent.email,
      password: PASSWORD,
      token_name: 'ci',
    });
    assert.equal(second.body.data.token.name, 'ci');
    assert.notEqual(second.body.data.token.value, data.token.value);
    for (const token of [agent.userToken, data.token.value, second.body.data.token.value]) {
      assert.equal((await request(server, 'GET', ME, undefined, { token })).status, 200);
    }
  });

  test('wrong password and unknown email are the same 401', async () => {
    const agent = await signupWithOrganization(server);
    for (const body of [
      { email: agent.email, password: 'wrong password' },
      { email: uniqueEmail(), password: PASSWORD },
    ]) {
      const res = await request(server, 'POST', LOGIN, body);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { errors: { detail: 'Invalid email or password' } });
    }
  });

  test('missing credentials are 400; a bad token_name is 422', async () => {
    const missing = await request(server, 'POST', LOGIN, { email: uniqueEmail() });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, { errors: { detail: 'password is required' } });
    const bad = await request(server, 'POST', LOGIN, {
      email: uniqueEmail(),
      password: PASSWORD,
      token_name: 'x'.repeat(300),
    });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, { errors: { token_name: ['must be at most 255 characters'] } });
  });

  test('repeated failures for one email are refused with 429 and Retry-After until the block expires', async () => {
    // The throttle reads deps.now: a frozen clock keeps this test independent of machine speed.
    const realNow = server.deps.now;
    let clock = realNow();
    server.deps.now = () => clock;
    try {
      const agent = await signupWithOrganization(server);
      for (let i = 0; i < 5; i++) {
        const res = await request(server, 'POST', LOGIN, { email: agent.email, password: `wrong ${i}` });
        assert.equal(res.status, 401, `attempt ${i + 1}`);
      }
      // Even the right password is refused while blocked, whatever the email's case.
      const blocked = await request(server, 'POST', LOGIN, {
        email: agent.email.toUpperCase(),
        password: PASSWORD,
      });
      assert.equal(blocked.status, 429);
      assert.deepEqual(blocked.body, { errors: { detail: 'Too many failed login attempts, retry later' } });
      assert.equal(blocked.headers.get('retry-after'), '1');
      const other = await signupWithOrganization(server);
      assert.equal(
        (await request(server, 'POST', LOGIN, { email: other.email, password: PASSWORD })).status,
        201,
      );
      clock += 1_000;
      assert.equal(
        (await request(server, 'POST', LOGIN, { email: agent.email, password: PASSWORD })).status,
        201,
      );
    } finally {
      server.deps.now = realNow;
    }
  });
});

describe('bootstrap me and organizations', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  async function loneUser(name?: string): Promise<{ token: string; email: string }> {
    const email = uniqueEmail();
    const res = await request(server, 'POST', SIGNUP, {
      email,
      password: PASSWORD,
      ...(name ? { name } : {}),
    });
    return { token: res.body.data.token.value, email };
  }

  test('me without an organization, then POST /organizations, then me with it', async () => {
    const { token, email } = await loneUser('Grace');
    const before = await request(server, 'GET', ME, undefined, { token });
    assert.equal(before.status, 200);
    assert.deepEqual(before.body.data, {
      user: { id: before.body.data.user.id, email, name: 'Grace' },
      organization: null,
      membership: null,
    });
    const created = await request(server, 'POST', ORGS, { name: ' Hopper Labs ' }, { token });
    assert.equal(created.status, 201);
    const { organization, membership } = created.body.data;
    assert.deepEqual(organization, { id: organization.id, name: 'Hopper Labs', slug: 'hopper-labs' });
    assert.deepEqual(membership, { id: membership.id, role: 'owner', organization_id: organization.id });
    const after = await request(server, 'GET', ME, undefined, { token });
    assert.deepEqual(after.body.data.organization, organization);
    assert.deepEqual(after.body.data.membership, membership);
  });

  test('a second organization is 409', async () => {
    const agent = await signupWithOrganization(server);
    const res = await request(server, 'POST', ORGS, { name: 'Another' }, { token: agent.userToken });
    assert.equal(res.status, 409);
    assert.deepEqual(res.body, { errors: { detail: 'User already belongs to an organization' } });
  });

  test('name rules are 422; a taken slug is 422 on name', async () => {
    await signupWithOrganization(server, 'Taken Name');
    const { token } = await loneUser();
    const cases: [unknown, Record<string, string[]>][] = [
      [{}, { name: ['is required'] }],
      [{ name: null }, { name: ['is required'] }],
      [{ name: '' }, { name: ["can't be blank"] }],
      [{ name: 12 }, { name: ['must be a string'] }],
      [{ name: 'x'.repeat(256) }, { name: ['must be at most 255 characters'] }],
      [{ name: 'taken-name' }, { name: ['has already been taken'] }],
    ];
    for (const [body, errors] of cases) {
      const res = await request(server, 'POST', ORGS, body, { token });
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.deepEqual(res.body, { errors });
    }
    assert.equal((await request(server, 'GET', ME, undefined, { token })).body.data.organization, null);
  });

  test('a non-object body is 400', async () => {
    const { token } = await loneUser();
    const res = await request(server, 'POST', ORGS, ['name'], { token });
    assert.equal(res.status, 400);
    assert.deepEqual(res.body, { errors: { detail: 'Request body must be a JSON object' } });
  });

  test('auth: no token, junk token, unknown token are 401; a source token is 403', async () => {
    const unknown = `svc_uat_${'A'.repeat(43)}`;
    for (const opts of [
      {},
      { token: 'junk' },
      { token: unknown },
      { headers: { authorization: 'Basic abc' } },
    ]) {
      for (const [method, path] of [
        ['GET', ME],
        ['POST', ORGS],
      ] as const) {
        const res = await request(server, method, path, method === 'POST' ? { name: 'x' } : undefined, opts);
        assert.equal(res.status, 401, `${method} ${path} ${JSON.stringify(opts)}`);
        assert.deepEqual(res.body, { errors: { detail: 'Bad token' } });
      }
    }
    const agent = await signupWithOrganization(server);
    const project = await request(
      server,
      'POST',
      '/api/v1/bootstrap/projects',
      { name: 'P' },
      { token: agent.userToken },
    );
    const minted = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: project.body.data.source.id },
      { token: agent.userToken },
    );
    const res = await request(server, 'GET', ME, undefined, { token: minted.body.data.token.value });
    assert.equal(res.status, 403);
    assert.deepEqual(res.body, { errors: { detail: 'Forbidden' } });
  });
});
