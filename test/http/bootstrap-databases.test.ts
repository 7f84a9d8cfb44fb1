// Database sources by file_path: the sqlite path rules, setup of the Trifle layout per identifier
// mode, setup failures and ids, and a root that holds the service database.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type Agent,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';
import { DATABASES, setupPath, upload, columnsOf, configOf, statusOf } from '../helpers/databases';

describe(
  'sqlite database sources by file_path',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: TestServer;
    let agent: Agent;
    let root: string;
    let outside: string;
    before(async () => {
      server = await startTestServer();
      agent = await signupWithOrganization(server);
      // Paths start in the organization's own folder of the sqlite root.
      root = path.join(server.deps.config.sources.sqliteRoot, agent.organizationId);
      mkdirSync(root, { recursive: true });
      outside = mkdtempSync(path.join(os.tmpdir(), 'svc-outside-'));
    });
    after(async () => {
      await server.stop();
      rmSync(outside, { recursive: true, force: true });
    });
    const create = (body: Record<string, unknown>, token = agent.userToken) =>
      request(server, 'POST', DATABASES, { display_name: 'Stats', driver: 'sqlite', ...body }, { token });

    test('201 with the database shape; the absolute path and mode are stored, never shown', async () => {
      const res = await create({
        file_path: 'app/stats.sqlite',
        time_zone: 'Asia/Tokyo',
        granularities: ['1h', '1d'],
      });
      assert.equal(res.status, 201);
      const source = res.body.data.source;
      assert.deepEqual(res.body.data, {
        source: {
          id: source.id,
          type: 'database',
          display_name: 'Stats',
          driver: 'sqlite',
          time_zone: 'Asia/Tokyo',
          beginning_of_week: 1,
          granularities: ['1h', '1d'],
          default_timeframe: '24h',
          default_granularity: '1h',
          setup_status: 'pending',
        },
      });
      assert.deepEqual(await configOf(server, source.id), {
        identifier_mode: 'full',
        file_path: path.join(root, 'app', 'stats.sqlite'),
      });
      assert.ok(!res.text.includes(root));
    });

    test('an absolute path inside the root and a symlink that stays inside are accepted', async () => {
      const abs = await create({ file_path: path.join(root, 'abs.sqlite') });
      assert.equal(abs.status, 201);
      mkdirSync(path.join(root, 'real-dir'));
      symlinkSync(path.join(root, 'real-dir'), path.join(root, 'inner-link'));
      const linked = await create({ file_path: 'inner-link/x.db' });
      assert.equal(linked.status, 201);
      assert.equal(
        (await configOf(server, linked.body.data.source.id)).file_path,
        path.join(root, 'real-dir', 'x.db'),
      );
    });

    test('paths outside the root are 422 on file_path', async () => {
      symlinkSync(outside, path.join(root, 'escape'));
      symlinkSync(path.join(outside, 'missing', 'target.sqlite'), path.join(root, 'dangling.sqlite'));
      writeFileSync(path.join(outside, 'real.sqlite'), '');
      symlinkSync(path.join(outside, 'real.sqlite'), path.join(root, 'file-link.sqlite'));
      mkdirSync(path.join(root, 'a-dir.sqlite'));
      const outsideMsg =
        "must resolve inside the organization's folder of the SQLite root (sources.sqlite_root)";
      const cases: [unknown, string][] = [
        ['../up.sqlite', "must not contain '..'"],
        ['a/../b.sqlite', "must not contain '..'"],
        [`${root}/../x.sqlite`, "must not contain '..'"],
        ['..\\win.sqlite', "must not contain '..'"],
        [path.join(outside, 'x.sqlite'), outsideMsg],
        ['/etc/passwd', outsideMsg],
        ['escape/x.sqlite', outsideMsg],
        ['dangling.sqlite', outsideMsg],
        ['file-link.sqlite', outsideMsg],
        ['.', outsideMsg],
        [root, outsideMsg],
        [path.join(server.deps.config.sources.sqliteRoot, '.uploads', 'staged.sqlite'), outsideMsg],
        [path.join(server.deps.config.sources.sqliteRoot, 'beside.sqlite'), outsideMsg],
        ['a-dir.sqlite', 'is not a regular file'],
        ['nul\u0000.sqlite', 'is not a valid path'],
        ['x'.repeat(1025), 'must be at most 1024 characters'],
        ['   ', "can't be blank"],
        [17, 'must be a string'],
      ];
      for (const [filePath, message] of cases) {
        const res = await create({ file_path: filePath });
        assert.equal(res.status, 422, String(filePath));
        assert.deepEqual(res.body, { errors: { file_path: [message] } }, String(filePath));
      }
      assert.deepEqual(readdirSync(outside).sort(), ['real.sqlite']);
    });

    test('file_path or an upload is required; sqlite_file as JSON is refused', async () => {
      const none = await create({});
      assert.equal(none.status, 422);
      assert.deepEqual(none.body, { errors: { file_path: ['is required (or upload sqlite_file)'] } });
      const json = await create({ file_path: 'j.sqlite', sqlite_file: 'U1FMaXRl' });
      assert.equal(json.status, 422);
      assert.deepEqual(json.body, {
        errors: { sqlite_file: ['must be uploaded as a file (multipart/form-data)'] },
      });
    });

    test('setup creates the file and the full layout; it is idempotent and keeps rows', async () => {
      const created = await create({ file_path: 'deep/er/stats.sqlite' });
      const id = created.body.data.source.id;
      const first = await request(server, 'POST', setupPath(id), undefined, { token: agent.userToken });
      assert.equal(first.status, 200);
      assert.deepEqual(first.body.data.setup, {
        status: 'ready',
        message: 'trifle_stats ready (identifier mode full)',
      });
      assert.equal(first.body.data.source.setup_status, 'ready');
      assert.equal(first.body.data.source.id, id);
      const file = path.join(root, 'deep', 'er', 'stats.sqlite');
      assert.deepEqual(columnsOf(file, 'trifle_stats'), ['key', 'data']);
      const db = new Database(file);
      db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run('k::1h::2026', '{"a":1}');
      assert.throws(
        () => db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run('k::1h::2026', '{}'),
        /UNIQUE/,
      );
      db.close();
      const again = await request(
        server,
        'POST',
        setupPath(id.toUpperCase()),
        {},
        { token: agent.userToken },
      );
      assert.equal(again.status, 200);
      const check = new Database(file, { readonly: true });
      assert.equal((check.prepare('SELECT count(*) AS n FROM trifle_stats').get() as { n: number }).n, 1);
      check.close();
      assert.equal(await statusOf(server, id), 'ready');
    });

    test('identifier modes partial and separated create their layouts; a bad mode is 422', async () => {
      const partial = await create({ file_path: 'partial.sqlite', identifier_mode: 'partial' });
      assert.equal((await configOf(server, partial.body.data.source.id)).identifier_mode, 'partial');
      await request(server, 'POST', setupPath(partial.body.data.source.id), undefined, {
        token: agent.userToken,
      });
      assert.deepEqual(columnsOf(path.join(root, 'partial.sqlite'), 'trifle_stats'), ['key', 'at', 'data']);
      const separated = await create({ file_path: 'separated.sqlite', identifier_mode: 'separated' });
      const res = await request(server, 'POST', setupPath(separated.body.data.source.id), undefined, {
        token: agent.userToken,
      });
      assert.equal(res.body.data.setup.message, 'trifle_stats ready (identifier mode separated)');
      assert.deepEqual(columnsOf(path.join(root, 'separated.sqlite'), 'trifle_stats'), [
        'key',
        'granularity',
        'at',
        'data',
      ]);
      assert.deepEqual(columnsOf(path.join(root, 'separated.sqlite'), 'trifle_stats_ping'), [
        'key',
        'at',
        'data',
      ]);
      const bad = await create({ file_path: 'bad.sqlite', identifier_mode: 'joined' });
      assert.equal(bad.status, 422);
      assert.deepEqual(bad.body, {
        errors: { identifier_mode: ['must be one of: full, partial, separated'] },
      });
    });

    test('setup failures are 422 with the driver message and mark the source failed', async () => {
      writeFileSync(
        path.join(root, 'notes.sqlite'),
        'this is not a database, just some text that is long enough',
      );
      const notDb = await create({ file_path: 'notes.sqlite' });
      const res = await request(server, 'POST', setupPath(notDb.body.data.source.id), undefined, {
        token: agent.userToken,
      });
      assert.equal(res.status, 422);
      assert.deepEqual(res.body, { errors: { setup: ['file is not a database'] } });
      assert.equal(await statusOf(server, notDb.body.data.source.id), 'failed');
      // A table of another identifier mode is not silently reused.
      const partial = await create({ file_path: 'mode-mismatch.sqlite', identifier_mode: 'partial' });
      await request(server, 'POST', setupPath(partial.body.data.source.id), undefined, {
        token: agent.userToken,
      });
      const full = await create({ file_path: 'mode-mismatch.sqlite' });
      const mismatch = await request(server, 'POST', setupPath(full.body.data.source.id), undefined, {
        token: agent.userToken,
      });
      assert.equal(mismatch.status, 422);
      assert.match(
        mismatch.body.errors.setup[0],
        /has columns \(key, at, data\), not the full identifier layout/,
      );
      const listed = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, {
        token: agent.userToken,
      });
      const entry = listed.body.data.databases.find((d: { id: string }) => d.id === full.body.data.source.id);
      assert.equal(entry.setup_status, 'failed');
    });

    test('setup checks the path again: a folder swapped for a symlink out of the root fails', async () => {
      const created = await create({ file_path: 'swap/stats.sqlite' });
      symlinkSync(outside, path.join(root, 'swap'));
      const res = await request(server, 'POST', setupPath(created.body.data.source.id), undefined, {
        token: agent.userToken,
      });
      assert.equal(res.status, 422);
      assert.match(res.body.errors.setup[0], /^file_path must resolve inside/);
      assert.ok(!existsSync(path.join(outside, 'stats.sqlite')));
    });

    test('setup: unknown, malformed, project and foreign ids are 404; junk body 400; no token 401', async () => {
      const project = await request(
        server,
        'POST',
        '/api/v1/bootstrap/projects',
        { name: 'P' },
        { token: agent.userToken },
      );
      const other = await signupWithOrganization(server);
      const foreign = await request(
        server,
        'POST',
        DATABASES,
        { display_name: 'F', driver: 'sqlite', file_path: 'foreign.sqlite' },
        { token: other.userToken },
      );
      for (const id of [
        '00000000-0000-4000-8000-000000000000',
        'not-a-uuid',
        project.body.data.source.id,
        foreign.body.data.source.id,
      ]) {
        const res = await request(server, 'POST', setupPath(id), undefined, { token: agent.userToken });
        assert.equal(res.status, 404, id);
        assert.deepEqual(res.body, { errors: { detail: 'Not found' } });
      }
      const db = await create({ file_path: 'junk-body.sqlite' });
      const junk = await request(server, 'POST', setupPath(db.body.data.source.id), [1], {
        token: agent.userToken,
      });
      assert.equal(junk.status, 400);
      assert.equal((await request(server, 'POST', setupPath(db.body.data.source.id))).status, 401);
      assert.equal(await statusOf(server, db.body.data.source.id), 'pending');
    });

    test('a user without an organization gets 409', async () => {
      const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', {
        email: uniqueEmail(),
        password: 'correct horse battery',
      });
      const res = await create({ file_path: 'x.sqlite' }, signup.body.data.token.value);
      assert.equal(res.status, 409);
    });
  },
);

describe(
  'sqlite root holding the service database',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: TestServer;
    before(async () => {
      // A relative root is taken from the working directory, which is the data dir in tests.
      server = await startTestServer({ SERVICE_SQLITE_ROOT: '.' });
    });
    after(() => server.stop());

    test("the service's own database files are refused", async () => {
      const agent = await signupWithOrganization(server);
      // The organization's folder is <data dir>/<organization id>: the service's files are outside it.
      for (const filePath of [
        path.join(server.dataDir, 'service.db'),
        path.join(server.dataDir, 'service.db-wal'),
        'service.db-shm',
        '../service.db',
      ]) {
        const res = await request(
          server,
          'POST',
          DATABASES,
          { display_name: 'x', driver: 'sqlite', file_path: filePath },
          { token: agent.userToken },
        );
        assert.equal(res.status, 422, filePath);
        assert.equal(res.body.errors.file_path.length, 1, filePath);
      }
      const ok = await request(
        server,
        'POST',
        DATABASES,
        { display_name: 'x', driver: 'sqlite', file_path: 'mine.sqlite' },
        { token: agent.userToken },
      );
      assert.equal(ok.status, 201);
    });
  },
);
