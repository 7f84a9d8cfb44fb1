// sqlite database sources uploaded as multipart/form-data: checks, the move into the root, the
// size limit, and no staged file left behind.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type Agent,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';
import { setupPath, sqliteBytes, upload, columnsOf, configOf } from '../helpers/databases';

describe(
  'sqlite uploads (multipart/form-data)',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: TestServer;
    let agent: Agent;
    let root: string;
    const staged = () => readdirSync(path.join(root, '.uploads'));
    before(async () => {
      server = await startTestServer({ SERVICE_SQLITE_UPLOAD_MAX_BYTES: '65536' });
      agent = await signupWithOrganization(server);
      root = server.deps.config.sources.sqliteRoot;
    });
    after(() => server.stop());

    test('a SQLite upload is moved to <root>/<organization id>/<id>.<ext>, unchanged, and the staging folder is left empty', async () => {
      const bytes = sqliteBytes();
      const res = await upload(
        server,
        agent.userToken,
        { display_name: 'Uploaded', driver: 'sqlite', granularities: ['1h', '1d'], beginning_of_week: '3' },
        { name: 'Stats.SQLITE3', bytes },
      );
      assert.equal(res.status, 201, res.text);
      const source = res.body.data.source;
      assert.deepEqual(source.granularities, ['1h', '1d']);
      assert.equal(source.beginning_of_week, 3);
      const file = path.join(root, agent.organizationId, `${source.id}.sqlite3`);
      assert.deepEqual(readFileSync(file), bytes);
      assert.equal((await configOf(server, source.id)).file_path, file);
      assert.deepEqual(staged(), []);
      const setup = await request(server, 'POST', setupPath(source.id), undefined, {
        token: agent.userToken,
      });
      assert.equal(setup.status, 200);
      assert.deepEqual(columnsOf(file, 'something'), ['x']);
      assert.deepEqual(columnsOf(file, 'trifle_stats'), ['key', 'data']);
    });

    test('bad name, bad content, empty file: 422 on sqlite_file, nothing kept', async () => {
      const before = readdirSync(root).sort();
      const cases: [string, Uint8Array, string][] = [
        ['stats.txt', sqliteBytes(), 'must be a file ending in .sqlite, .sqlite3, .db'],
        ['noext', sqliteBytes(), 'must be a file ending in .sqlite, .sqlite3, .db'],
        [
          'stats.db',
          Buffer.from('SQLite format 2\u0000 and more bytes here'),
          'is not a SQLite database file',
        ],
        ['stats.db', Buffer.from('SQLite'), 'is not a SQLite database file'],
        ['stats.sqlite', new Uint8Array(0), 'is empty'],
      ];
      for (const [name, bytes, message] of cases) {
        const res = await upload(
          server,
          agent.userToken,
          { display_name: 'Bad', driver: 'sqlite' },
          { name, bytes },
        );
        assert.equal(res.status, 422, name);
        assert.deepEqual(res.body, { errors: { sqlite_file: [message] } }, name);
      }
      assert.deepEqual(readdirSync(root).sort(), before);
      assert.deepEqual(staged(), []);
    });

    test('an upload over the limit is 413 and leaves no staged file', async () => {
      const res = await upload(
        server,
        agent.userToken,
        { display_name: 'Big', driver: 'sqlite' },
        { name: 'big.sqlite', bytes: Buffer.alloc(70_000, 1) },
      );
      assert.equal(res.status, 413);
      assert.match(res.body.errors.detail, /65536/);
      // The multipart reader removes its partial file right after answering, not before.
      for (let i = 0; i < 500 && staged().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(staged(), []);
    });

    test('failures before the move delete the staged upload (409, 422 fields, upload + file_path)', async () => {
      const bytes = sqliteBytes();
      const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', {
        email: uniqueEmail(),
        password: 'correct horse battery',
      });
      const lone = await upload(
        server,
        signup.body.data.token.value,
        { display_name: 'x', driver: 'sqlite' },
        { name: 'a.sqlite', bytes },
      );
      assert.equal(lone.status, 409);
      const fields = await upload(
        server,
        agent.userToken,
        { driver: 'sqlite', time_zone: 'Nowhere/Land' },
        { name: 'a.sqlite', bytes },
      );
      assert.equal(fields.status, 422);
      assert.deepEqual(fields.body, {
        errors: { display_name: ['is required'], time_zone: ['is not a valid IANA time zone'] },
      });
      const both = await upload(
        server,
        agent.userToken,
        { display_name: 'x', driver: 'sqlite', file_path: 'p.sqlite' },
        { name: 'a.sqlite', bytes },
      );
      assert.equal(both.status, 422);
      assert.deepEqual(both.body, { errors: { sqlite_file: ['cannot be combined with file_path'] } });
      const wrongField = await upload(
        server,
        agent.userToken,
        { display_name: 'x', driver: 'sqlite' },
        { name: 'a.sqlite', bytes, field: 'file' },
      );
      assert.equal(wrongField.status, 422);
      assert.deepEqual(wrongField.body, { errors: { file_path: ['is required (or upload sqlite_file)'] } });
      const textField = await upload(server, agent.userToken, {
        display_name: 'x',
        driver: 'sqlite',
        sqlite_file: 'not a file',
      });
      assert.equal(textField.status, 422);
      assert.deepEqual(staged(), []);
    });

    test('multipart with file_path only, and for another driver (the file is ignored and removed)', async () => {
      const byPath = await upload(server, agent.userToken, {
        display_name: 'p',
        driver: 'sqlite',
        file_path: 'form.sqlite',
      });
      assert.equal(byPath.status, 201);
      const redis = await upload(
        server,
        agent.userToken,
        { display_name: 'r', driver: 'redis', host: 'localhost', port: '6380' },
        { name: 'a.sqlite', bytes: sqliteBytes() },
      );
      assert.equal(redis.status, 201);
      // the prefix defaults to one of the source's own (issue 20): two organizations never share keys
      assert.deepEqual(await configOf(server, redis.body.data.source.id), {
        host: 'localhost',
        port: 6380,
        prefix: `trfl_${redis.body.data.source.id}`,
        identifier_mode: 'full',
      });
      assert.deepEqual(staged(), []);
    });
  },
);
