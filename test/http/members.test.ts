// Organization members (docs/members.md): invitations that expire, roles, removal, and every write
// route of the API checked against every role. The route list is read from src/http/router.ts, so a
// write route added later without a place in ROUTE_ROLES fails this test until it is classified.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  type ProjectAgent,
  type TestServer,
  createProjectWithToken,
  request,
  startTestServer,
  uniqueEmail,
} from '../helpers/server';

type Role = 'owner' | 'admin' | 'editor' | 'viewer';
const RANK: Record<Role, number> = { owner: 4, admin: 3, editor: 2, viewer: 1 };

/**
 * The least role each write route needs. `self` routes are a user's own (sessions, joining an
 * organization) or use source tokens, which roles do not govern.
 */
const ROUTE_ROLES: Record<string, Role | 'self'> = {
  'POST /bootstrap/signup': 'self',
  'POST /bootstrap/login': 'self',
  'POST /bootstrap/organizations': 'self',
  'POST /bootstrap/databases': 'admin',
  'POST /bootstrap/databases/:id/setup': 'admin',
  'POST /bootstrap/projects': 'admin',
  'PUT /bootstrap/projects/:id': 'admin',
  'PATCH /bootstrap/projects/:id': 'admin',
  'POST /bootstrap/source-tokens': 'admin',
  'DELETE /bootstrap/projects/:id': 'admin',
  'PATCH /bootstrap/databases/:id': 'admin',
  'DELETE /bootstrap/databases/:id': 'admin',
  'DELETE /bootstrap/source-tokens/:id': 'admin',
  'POST /session': 'self',
  'DELETE /session': 'self',
  'DELETE /session/sessions/:id': 'self',
  'POST /dashboards/:id/shares': 'editor',
  'DELETE /dashboards/:id/shares/:shareId': 'editor',
  'PATCH /organization/members/:id': 'admin',
  'DELETE /organization/members/:id': 'admin',
  'POST /organization/invitations': 'admin',
  'DELETE /organization/invitations/:id': 'admin',
  'POST /invitations/preview': 'self',
  'POST /invitations/accept': 'self',
  'POST /metrics': 'self',
  'POST /metrics/batch': 'self',
  'POST /metrics/query': 'self',
  'POST /transponders': 'self',
  'PUT /transponders/:id': 'self',
  'PATCH /transponders/:id': 'self',
  'DELETE /transponders/:id': 'self',
  'POST /dashboards': 'editor',
  'PUT /dashboards/:id': 'editor',
  'PATCH /dashboards/:id': 'editor',
  'DELETE /dashboards/:id': 'editor',
  'POST /dashboard-groups': 'editor',
  'PUT /dashboard-groups/:id': 'editor',
  'PATCH /dashboard-groups/:id': 'editor',
  'DELETE /dashboard-groups/:id': 'editor',
  'POST /sources/:sourceId/transponders': 'admin',
  'PUT /sources/:sourceId/transponders/:id': 'admin',
  'DELETE /sources/:sourceId/transponders/:id': 'admin',
  'POST /monitors': 'editor',
  'PUT /monitors/:id': 'editor',
  'PATCH /monitors/:id': 'editor',
  'DELETE /monitors/:id': 'editor',
  'POST /monitors/preview': 'self',
  'POST /monitors/:id/mute': 'editor',
  'DELETE /monitors/:id/mute': 'editor',
  'POST /channels': 'editor',
  'PUT /channels/:id': 'editor',
  'PATCH /channels/:id': 'editor',
  'DELETE /channels/:id': 'editor',
  'POST /channels/:id/test': 'editor',
};

/** Every write route the router declares, as "METHOD /path". */
function writeRoutes(): string[] {
  const text = readFileSync(new URL('../../src/http/router.ts', import.meta.url), 'utf8');
  const routes = new Set<string>();
  for (const m of text.matchAll(/\br\.(post|put|patch|delete)\(\s*'([^']+)'/g)) {
    routes.add(`${m[1]!.toUpperCase()} ${m[2]}`);
  }
  return [...routes];
}

const ANY_ID = '00000000-0000-4000-8000-000000000000';

describe('organization members and roles', () => {
  let now = Date.parse('2026-11-27T10:00:00Z');
  let server: TestServer;
  let owner: ProjectAgent;
  const tokens: Partial<Record<Role, string>> = {};
  const memberships: Partial<Record<Role, string>> = {};

  const api = (method: string, path: string, token: string | undefined, body?: unknown) =>
    request(server, method, `/api/v1${path}`, body, token ? { token } : {});

  async function newUser(): Promise<string> {
    const res = await api('POST', '/bootstrap/signup', undefined, {
      email: uniqueEmail('member'),
      password: 'correct horse battery',
    });
    assert.equal(res.status, 201, res.text);
    return res.body.data.token.value;
  }

  async function invite(as: string, role: string, body: Record<string, unknown> = {}) {
    return api('POST', '/organization/invitations', as, { role, ...body });
  }

  before(async () => {
    server = await startTestServer({}, { now: () => now });
    owner = await createProjectWithToken(server);
    tokens.owner = owner.userToken;
    for (const role of ['admin', 'editor', 'viewer'] as const) {
      const inv = await invite(owner.userToken, role);
      assert.equal(inv.status, 201, inv.text);
      assert.match(inv.body.data.path, /^\/invite#svc_inv_/);
      const user = await newUser();
      const preview = await api('POST', '/invitations/preview', undefined, { token: inv.body.data.token });
      assert.equal(preview.status, 200, preview.text);
      assert.equal(preview.body.data.role, role);
      assert.equal(preview.body.data.organization.id, owner.organizationId);
      const accepted = await api('POST', '/invitations/accept', user, { token: inv.body.data.token });
      assert.equal(accepted.status, 201, accepted.text);
      tokens[role] = user;
      memberships[role] = accepted.body.data.membership.id;
    }
  });
  after(() => server?.stop());

  test('GET /bootstrap/me and the members list show each role', async () => {
    for (const role of ['owner', 'admin', 'editor', 'viewer'] as const) {
      const me = await api('GET', '/bootstrap/me', tokens[role]);
      assert.equal(me.status, 200);
      assert.equal(me.body.data.membership.role, role);
      assert.equal(me.body.data.organization.id, owner.organizationId);
    }
    const list = await api('GET', '/organization/members', tokens.viewer);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.data.map((m: { role: string }) => m.role).sort(), [
      'admin',
      'editor',
      'owner',
      'viewer',
    ]);
    assert.equal(list.body.data.filter((m: { you: boolean }) => m.you).length, 1);
  });

  test('an invitation link works once, expires, and can be revoked', async () => {
    const inv = await invite(owner.userToken, 'viewer', { expires_in: 3600 });
    const token = inv.body.data.token;
    const pending = await api('GET', '/organization/invitations', tokens.admin);
    assert.ok(pending.body.data.some((i: { id: string }) => i.id === inv.body.data.id));
    assert.equal(JSON.stringify(pending.body).includes(token), false, 'the token is shown once');

    now += 3_601_000;
    const late = await api('POST', '/invitations/accept', await newUser(), { token });
    assert.equal(late.status, 404);

    const again = await invite(owner.userToken, 'viewer');
    const first = await newUser();
    assert.equal(
      (await api('POST', '/invitations/accept', first, { token: again.body.data.token })).status,
      201,
    );
    const second = await api('POST', '/invitations/accept', await newUser(), {
      token: again.body.data.token,
    });
    assert.equal(second.status, 404, 'a link is used once');
    const member = await api('POST', '/invitations/accept', tokens.editor, { token: again.body.data.token });
    assert.equal(member.status, 404);

    const revoked = await invite(owner.userToken, 'editor');
    assert.equal(
      (await api('DELETE', `/organization/invitations/${revoked.body.data.id}`, tokens.admin)).status,
      204,
    );
    const after = await api('POST', '/invitations/accept', await newUser(), {
      token: revoked.body.data.token,
    });
    assert.equal(after.status, 404);

    const bad = await invite(owner.userToken, 'owner');
    assert.equal(bad.status, 422);
    assert.ok(bad.body.errors.role);
    const tooLong = await invite(owner.userToken, 'viewer', { expires_in: 365 * 86_400 });
    assert.equal(tooLong.status, 422);
    assert.ok(tooLong.body.errors.expires_in);
  });

  test('an organization keeps at most 100 pending invitations; the 101st is a 422, and a token body is bounded', async () => {
    const other = await createProjectWithToken(server);
    for (let i = 0; i < 100; i++) {
      const res = await invite(other.userToken, 'viewer');
      assert.equal(res.status, 201, res.text);
    }
    const over = await invite(other.userToken, 'viewer');
    assert.equal(over.status, 422);
    assert.match(JSON.stringify(over.body.errors), /at most 100 pending invitations/);
    const huge = await api('POST', '/invitations/preview', undefined, { token: 'x'.repeat(5_000) });
    assert.equal(huge.status, 422);
    const junk = await api('POST', '/invitations/accept', tokens.viewer, {
      token: 'svc_inv_' + '!'.repeat(43),
    });
    assert.equal(junk.status, 404);
  });

  test('who may invite and change whom', async () => {
    assert.equal((await invite(tokens.admin!, 'admin')).status, 403, 'only the owner makes admins');
    assert.equal((await invite(tokens.admin!, 'editor')).status, 201);
    assert.equal((await invite(tokens.editor!, 'viewer')).status, 403);
    assert.equal((await invite(tokens.viewer!, 'viewer')).status, 403);
    const ownerRow = (await api('GET', '/organization/members', tokens.owner)).body.data.find(
      (m: { role: string }) => m.role === 'owner',
    );
    assert.equal((await api('DELETE', `/organization/members/${ownerRow.id}`, tokens.admin)).status, 403);
    assert.equal(
      (await api('PATCH', `/organization/members/${memberships.admin}`, tokens.admin, { role: 'viewer' }))
        .status,
      403,
      'nobody changes their own role',
    );
    const promoted = await api('PATCH', `/organization/members/${memberships.viewer}`, tokens.admin, {
      role: 'admin',
    });
    assert.equal(promoted.status, 403, 'an admin cannot make an admin');
    const bad = await api('PATCH', `/organization/members/${memberships.viewer}`, tokens.owner, {
      role: 'boss',
    });
    assert.equal(bad.status, 422);
  });

  test('another organization cannot see or change these members', async () => {
    const stranger = await createProjectWithToken(server);
    const list = await api('GET', '/organization/members', stranger.userToken);
    assert.equal(list.body.data.length, 1);
    const res = await api('DELETE', `/organization/members/${memberships.viewer}`, stranger.userToken);
    assert.equal(res.status, 404);
    const inv = await api('GET', '/organization/invitations', stranger.userToken);
    assert.equal(inv.body.data.length, 0);
  });

  test('every write route refuses a role below the one it needs, and only those', async () => {
    const declared = writeRoutes();
    const unclassified = declared.filter((r) => ROUTE_ROLES[r] === undefined);
    assert.deepEqual(unclassified, [], 'write routes without a role in ROUTE_ROLES');
    let checked = 0;
    for (const route of declared) {
      const needed = ROUTE_ROLES[route]!;
      if (needed === 'self') continue;
      const [method, path] = route.split(' ') as [string, string];
      const url = path.replace(/:[A-Za-z]+/g, ANY_ID);
      for (const role of ['viewer', 'editor', 'admin'] as const) {
        const res = await api(method, url, tokens[role], {});
        if (RANK[role] < RANK[needed]) {
          assert.equal(res.status, 403, `${role} on ${route}: ${res.status} ${res.text}`);
          assert.match(res.body.errors.detail, /role/);
        } else {
          assert.notEqual(res.status, 403, `${role} on ${route}: ${res.text}`);
          assert.ok(res.status < 500, `${role} on ${route}: ${res.status} ${res.text}`);
        }
        checked++;
      }
    }
    assert.ok(checked >= 60, `checked ${checked} route × role pairs`);
  });

  test('a viewer reads dashboards but cannot change them; a removed member loses access at once', async () => {
    const created = await api('POST', '/dashboards', tokens.editor, {
      name: 'Ops',
      key: 'web',
      source: { type: 'project', id: owner.sourceId },
    });
    assert.equal(created.status, 201, created.text);
    const id = created.body.data.id;
    assert.equal((await api('GET', `/dashboards/${id}`, tokens.viewer)).status, 200);
    assert.equal((await api('PUT', `/dashboards/${id}`, tokens.viewer, { name: 'Mine' })).status, 403);
    assert.equal((await api('DELETE', `/dashboards/${id}`, tokens.viewer)).status, 403);
    assert.equal((await api('GET', `/dashboards/${id}`, tokens.viewer)).body.data.name, 'Ops');

    assert.equal(
      (await api('DELETE', `/organization/members/${memberships.viewer}`, tokens.admin)).status,
      204,
    );
    const gone = await api('GET', `/dashboards/${id}`, tokens.viewer);
    assert.notEqual(gone.status, 200);
    const me = await api('GET', '/bootstrap/me', tokens.viewer);
    assert.equal(me.body.data.organization, null);
  });
});
