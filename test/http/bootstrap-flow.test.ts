// End to end: the recommended agent flow, organization isolation, and a deployment switched to
// projects disabled over data created while they were enabled (SPEC sections 4 and 7).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type Agent,
  type TestServer,
  controlRow,
  embeddedOnly,
} from '../helpers/server';
import { databaseFixture, DATABASES, setupPath } from '../helpers/databases';

const PROJECTS = '/api/v1/bootstrap/projects';
const SOURCES = '/api/v1/bootstrap/sources';
const TOKENS = '/api/v1/bootstrap/source-tokens';

describe('the recommended agent flow', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('signup -> me -> organizations -> databases (sqlite) -> setup -> source-tokens -> token in use', async () => {
    const email = uniqueEmail('agent');
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', {
      email,
      password: 'agent password 1',
    });
    assert.equal(signup.status, 201);
    const token = signup.body.data.token.value;
    const me = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { token });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.organization, null);
    const org = await request(
      server,
      'POST',
      '/api/v1/bootstrap/organizations',
      { name: 'Agent Co' },
      { token },
    );
    assert.equal(org.status, 201);
    const db = await request(
      server,
      'POST',
      DATABASES,
      { display_name: 'Agent store', ...(await databaseFixture(server, 'agent', { setup: true })) },
      { token },
    );
    assert.equal(db.status, 201);
    const id = db.body.data.source.id;
    const setup = await request(server, 'POST', setupPath(id), undefined, { token });
    assert.equal(setup.status, 200);
    assert.equal(setup.body.data.source.setup_status, 'ready');
    const minted = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'database', source_id: id },
      { token },
    );
    assert.equal(minted.status, 201);
    const sourceToken = minted.body.data.token.value;
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, {
      token: sourceToken,
      sourceId: id,
    });
    assert.equal(dashboards.status, 200);
    const sources = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, { token });
    assert.deepEqual(
      sources.body.data.databases.map((d: { id: string; setup_status: string }) => [d.id, d.setup_status]),
      [[id, 'ready']],
    );
  });

  test('signup with organization_name -> project -> source-tokens', async () => {
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', {
      email: uniqueEmail('agent'),
      password: 'agent password 1',
      organization_name: 'Project Agent',
    });
    const token = signup.body.data.token.value;
    assert.equal(signup.body.data.membership.role, 'owner');
    const project = await request(server, 'POST', '/api/v1/bootstrap/projects', { name: 'Web' }, { token });
    assert.equal(project.status, 201);
    const minted = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: project.body.data.source.id, write: false },
      { token },
    );
    assert.equal(minted.status, 201);
    assert.equal(minted.body.data.token.write, false);
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, {
      token: minted.body.data.token.value,
    });
    assert.equal(dashboards.status, 200);
  });
});

describe('organization isolation', () => {
  let server: TestServer;
  let a: Agent;
  let b: Agent;
  let aDatabase: string;
  let aProject: string;
  before(async () => {
    server = await startTestServer();
    a = await signupWithOrganization(server, 'Alpha');
    b = await signupWithOrganization(server, 'Beta');
    aProject = (await request(server, 'POST', PROJECTS, { name: 'A project' }, { token: a.userToken })).body
      .data.source.id;
    const db = await request(
      server,
      'POST',
      DATABASES,
      { display_name: 'A db', ...(await databaseFixture(server, 'alpha')) },
      { token: a.userToken },
    );
    aDatabase = db.body.data.source.id;
    await request(server, 'POST', PROJECTS, { name: 'B project' }, { token: b.userToken });
  });
  after(() => server.stop());

  test("listing shows only the organization's own sources", async () => {
    const listA = (await request(server, 'GET', SOURCES, undefined, { token: a.userToken })).body.data;
    const listB = (await request(server, 'GET', SOURCES, undefined, { token: b.userToken })).body.data;
    assert.deepEqual(
      listA.projects.map((s: { display_name: string }) => s.display_name),
      ['A project'],
    );
    assert.deepEqual(
      listA.databases.map((s: { id: string }) => s.id),
      [aDatabase],
    );
    assert.deepEqual(
      listB.projects.map((s: { display_name: string }) => s.display_name),
      ['B project'],
    );
    assert.deepEqual(listB.databases, []);
  });

  test("another organization's database cannot be set up (404) and gets no token (404)", async () => {
    const setup = await request(server, 'POST', `${DATABASES}/${aDatabase}/setup`, undefined, {
      token: b.userToken,
    });
    assert.equal(setup.status, 404);
    assert.deepEqual(setup.body, { errors: { detail: 'Not found' } });
    for (const body of [
      { source_type: 'database', source_id: aDatabase },
      { source_type: 'project', source_id: aProject },
    ]) {
      const res = await request(server, 'POST', TOKENS, body, { token: b.userToken });
      assert.equal(res.status, 404);
    }
    const status = (await controlRow<{ setup_status: string }>(
      server,
      'SELECT setup_status FROM sources WHERE id = ?',
      aDatabase,
    ))!;
    assert.equal(status.setup_status, 'pending');
  });

  test(
    "another organization's sqlite file cannot be claimed by file_path",
    embeddedOnly('SQLite database sources are refused in cluster mode'),
    async () => {
      // Paths start in the organization's own folder: B's ./alpha.sqlite is another file, and A's cannot be named.
      const root = server.deps.config.sources.sqliteRoot;
      for (const filePath of [
        path.join(root, a.organizationId, 'alpha.sqlite'),
        `../${a.organizationId}/alpha.sqlite`,
      ]) {
        const res = await request(
          server,
          'POST',
          DATABASES,
          { display_name: 'steal', driver: 'sqlite', file_path: filePath },
          { token: b.userToken },
        );
        assert.equal(res.status, 422, filePath);
        assert.equal(res.body.errors.file_path.length, 1, filePath);
      }
      const mine = await request(
        server,
        'POST',
        DATABASES,
        { display_name: 'mine', driver: 'sqlite', file_path: './alpha.sqlite' },
        { token: b.userToken },
      );
      assert.equal(mine.status, 201);
      const own = await request(
        server,
        'POST',
        DATABASES,
        { display_name: 'again', driver: 'sqlite', file_path: 'alpha.sqlite' },
        { token: a.userToken },
      );
      assert.equal(own.status, 201);
    },
  );
});

describe('projects disabled (SPEC section 7)', () => {
  let dataDir: string;
  let server: TestServer;
  let agent: Agent;
  let projectId: string;
  let databaseId: string;

  // the same data directory each time (in cluster mode: the same database)
  const boot = (projectsEnabled: boolean) =>
    startTestServer({ SERVICE_DATA_DIR: dataDir, SERVICE_PROJECTS_ENABLED: String(projectsEnabled) });

  before(async () => {
    // Sources created while projects were enabled, then the same data served with them disabled.
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-test-'));
    const first = await boot(true);
    agent = await signupWithOrganization(first);
    projectId = (await request(first, 'POST', PROJECTS, { name: 'Old' }, { token: agent.userToken })).body
      .data.source.id;
    const db = await request(
      first,
      'POST',
      DATABASES,
      { display_name: 'D', ...(await databaseFixture(first, 'd')) },
      { token: agent.userToken },
    );
    databaseId = db.body.data.source.id;
    await first.close();
    server = await boot(false);
  });
  after(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('POST /projects is 403 with the feature message, before any body check', async () => {
    for (const body of [{ name: 'P' }, ['junk']]) {
      const res = await request(server, 'POST', PROJECTS, body, { token: agent.userToken });
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { errors: { detail: 'Projects are disabled for this deployment' } });
    }
  });

  test('GET /sources lists no projects, databases still', async () => {
    const res = await request(server, 'GET', SOURCES, undefined, { token: agent.userToken });
    assert.deepEqual(res.body.data.projects, []);
    assert.deepEqual(
      res.body.data.databases.map((s: { id: string }) => s.id),
      [databaseId],
    );
  });

  test('source tokens: project is 422 on source_type, database works', async () => {
    const res = await request(
      server,
      'POST',
      TOKENS,
      { source_type: 'project', source_id: projectId },
      { token: agent.userToken },
    );
    assert.equal(res.status, 422);
    assert.deepEqual(res.body, { errors: { source_type: ['projects are disabled for this deployment'] } });
    const ok = await request(
      server,
      'POST',
      TOKENS,
      { source_type: 'database', source_id: databaseId },
      { token: agent.userToken },
    );
    assert.equal(ok.status, 201);
  });

  test('the recommended agent flow still works with a database source', async () => {
    const other = await signupWithOrganization(server);
    const db = await request(
      server,
      'POST',
      DATABASES,
      { display_name: 'Flow', ...(await databaseFixture(server, 'flow', { setup: true })) },
      { token: other.userToken },
    );
    assert.equal(db.status, 201);
    const setup = await request(server, 'POST', `${DATABASES}/${db.body.data.source.id}/setup`, undefined, {
      token: other.userToken,
    });
    assert.equal(setup.status, 200);
    const token = await request(
      server,
      'POST',
      TOKENS,
      { source_type: 'database', source_id: db.body.data.source.id },
      { token: other.userToken },
    );
    assert.equal(token.status, 201);
  });
});
