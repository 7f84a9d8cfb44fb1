// Database sources: JSON and multipart creation, sqlite path rules, uploads, setup of the Trifle
// layout, the other drivers' fields, and the recommended agent flow end to end.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { request, signupWithOrganization, startTestServer, uniqueEmail, type Agent, type TestServer } from '../helpers/server';

const DATABASES = '/api/v1/bootstrap/databases';
const setupPath = (id: string) => `${DATABASES}/${id}/setup`;

function sqliteBytes(build?: (db: Database.Database) => void): Buffer {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-upload-'));
  const file = path.join(dir, 'src.sqlite');
  const db = new Database(file);
  db.exec('CREATE TABLE something (x)');
  build?.(db);
  db.close();
  const bytes = readFileSync(file);
  rmSync(dir, { recursive: true, force: true });
  return bytes;
}

async function upload(
  server: { url: string },
  token: string,
  fields: Record<string, string | string[]>,
  file?: { name: string; bytes: Uint8Array; field?: string },
) {
  const form = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) form.append(key, v);
  }
  if (file) form.append(file.field ?? 'sqlite_file', new Blob([file.bytes]), file.name);
  const res = await fetch(`${server.url}${DATABASES}`, { method: 'POST', body: form, headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

function columnsOf(file: string, table: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM pragma_table_info('${table}') ORDER BY cid`).all() as { name: string }[]).map((c) => c.name);
  } finally {
    db.close();
  }
}

const configOf = (server: TestServer, id: string) =>
  JSON.parse((server.deps.db.prepare('SELECT config FROM sources WHERE id = ?').get(id) as { config: string }).config);
const statusOf = (server: TestServer, id: string) =>
  (server.deps.db.prepare('SELECT setup_status FROM sources WHERE id = ?').get(id) as { setup_status: string }).setup_status;

describe('sqlite database sources by file_path', () => {
  let server: TestServer;
  let agent: Agent;
  let root: string;
  let outside: string;
  before(async () => {
    server = await startTestServer();
    agent = await signupWithOrganization(server);
    root = server.deps.config.sources.sqliteRoot;
    outside = mkdtempSync(path.join(os.tmpdir(), 'svc-outside-'));
  });
  after(async () => {
    await server.stop();
    rmSync(outside, { recursive: true, force: true });
  });
  const create = (body: Record<string, unknown>, token = agent.userToken) =>
    request(server, 'POST', DATABASES, { display_name: 'Stats', driver: 'sqlite', ...body }, { token });

  test('201 with the database shape; the absolute path and mode are stored, never shown', async () => {
    const res = await create({ file_path: 'app/stats.sqlite', time_zone: 'Asia/Tokyo', granularities: ['1h', '1d'] });
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
    assert.deepEqual(configOf(server, source.id), { identifier_mode: 'full', file_path: path.join(root, 'app', 'stats.sqlite') });
    assert.ok(!res.text.includes(root));
  });

  test('an absolute path inside the root and a symlink that stays inside are accepted', async () => {
    const abs = await create({ file_path: path.join(root, 'abs.sqlite') });
    assert.equal(abs.status, 201);
    mkdirSync(path.join(root, 'real-dir'));
    symlinkSync(path.join(root, 'real-dir'), path.join(root, 'inner-link'));
    const linked = await create({ file_path: 'inner-link/x.db' });
    assert.equal(linked.status, 201);
    assert.equal(configOf(server, linked.body.data.source.id).file_path, path.join(root, 'real-dir', 'x.db'));
  });

  test('paths outside the root are 422 on file_path', async () => {
    symlinkSync(outside, path.join(root, 'escape'));
    symlinkSync(path.join(outside, 'missing', 'target.sqlite'), path.join(root, 'dangling.sqlite'));
    writeFileSync(path.join(outside, 'real.sqlite'), '');
    symlinkSync(path.join(outside, 'real.sqlite'), path.join(root, 'file-link.sqlite'));
    mkdirSync(path.join(root, 'a-dir.sqlite'));
    const outsideMsg = 'must resolve inside the SQLite root of the server (sources.sqlite_root)';
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
      ['.uploads/staged.sqlite', outsideMsg],
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
    assert.deepEqual(json.body, { errors: { sqlite_file: ['must be uploaded as a file (multipart/form-data)'] } });
  });

  test('setup creates the file and the full layout; it is idempotent and keeps rows', async () => {
    const created = await create({ file_path: 'deep/er/stats.sqlite' });
    const id = created.body.data.source.id;
    const first = await request(server, 'POST', setupPath(id), undefined, { token: agent.userToken });
    assert.equal(first.status, 200);
    assert.deepEqual(first.body.data.setup, { status: 'ready', message: 'trifle_stats ready (identifier mode full)' });
    assert.equal(first.body.data.source.setup_status, 'ready');
    assert.equal(first.body.data.source.id, id);
    const file = path.join(root, 'deep', 'er', 'stats.sqlite');
    assert.deepEqual(columnsOf(file, 'trifle_stats'), ['key', 'data']);
    const db = new Database(file);
    db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run('k::1h::2026', '{"a":1}');
    assert.throws(() => db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run('k::1h::2026', '{}'), /UNIQUE/);
    db.close();
    const again = await request(server, 'POST', setupPath(id.toUpperCase()), {}, { token: agent.userToken });
    assert.equal(again.status, 200);
    const check = new Database(file, { readonly: true });
    assert.equal((check.prepare('SELECT count(*) AS n FROM trifle_stats').get() as { n: number }).n, 1);
    check.close();
    assert.equal(statusOf(server, id), 'ready');
  });

  test('identifier modes partial and separated create their layouts; a bad mode is 422', async () => {
    const partial = await create({ file_path: 'partial.sqlite', identifier_mode: 'partial' });
    assert.equal(configOf(server, partial.body.data.source.id).identifier_mode, 'partial');
    await request(server, 'POST', setupPath(partial.body.data.source.id), undefined, { token: agent.userToken });
    assert.deepEqual(columnsOf(path.join(root, 'partial.sqlite'), 'trifle_stats'), ['key', 'at', 'data']);
    const separated = await create({ file_path: 'separated.sqlite', identifier_mode: 'separated' });
    const res = await request(server, 'POST', setupPath(separated.body.data.source.id), undefined, { token: agent.userToken });
    assert.equal(res.body.data.setup.message, 'trifle_stats ready (identifier mode separated)');
    assert.deepEqual(columnsOf(path.join(root, 'separated.sqlite'), 'trifle_stats'), ['key', 'granularity', 'at', 'data']);
    assert.deepEqual(columnsOf(path.join(root, 'separated.sqlite'), 'trifle_stats_ping'), ['key', 'at', 'data']);
    const bad = await create({ file_path: 'bad.sqlite', identifier_mode: 'joined' });
    assert.equal(bad.status, 422);
    assert.deepEqual(bad.body, { errors: { identifier_mode: ['must be one of: full, partial, separated'] } });
  });

  test('setup failures are 422 with the driver message and mark the source failed', async () => {
    writeFileSync(path.join(root, 'notes.sqlite'), 'this is not a database, just some text that is long enough');
    const notDb = await create({ file_path: 'notes.sqlite' });
    const res = await request(server, 'POST', setupPath(notDb.body.data.source.id), undefined, { token: agent.userToken });
    assert.equal(res.status, 422);
    assert.deepEqual(res.body, { errors: { setup: ['file is not a database'] } });
    assert.equal(statusOf(server, notDb.body.data.source.id), 'failed');
    // A table of another identifier mode is not silently reused.
    const partial = await create({ file_path: 'mode-mismatch.sqlite', identifier_mode: 'partial' });
    await request(server, 'POST', setupPath(partial.body.data.source.id), undefined, { token: agent.userToken });
    const full = await create({ file_path: 'mode-mismatch.sqlite' });
    const mismatch = await request(server, 'POST', setupPath(full.body.data.source.id), undefined, { token: agent.userToken });
    assert.equal(mismatch.status, 422);
    assert.match(mismatch.body.errors.setup[0], /already exists with columns \(key, at, data\), not the full identifier layout/);
    const listed = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, { token: agent.userToken });
    const entry = listed.body.data.databases.find((d: { id: string }) => d.id === full.body.data.source.id);
    assert.equal(entry.setup_status, 'failed');
  });

  test('setup checks the path again: a folder swapped for a symlink out of the root fails', async () => {
    const created = await create({ file_path: 'swap/stats.sqlite' });
    symlinkSync(outside, path.join(root, 'swap'));
    const res = await request(server, 'POST', setupPath(created.body.data.source.id), undefined, { token: agent.userToken });
    assert.equal(res.status, 422);
    assert.match(res.body.errors.setup[0], /^file_path must resolve inside/);
    assert.ok(!existsSync(path.join(outside, 'stats.sqlite')));
  });

  test('setup: unknown, malformed, project and foreign ids are 404; junk body 400; no token 401', async () => {
    const project = await request(server, 'POST', '/api/v1/bootstrap/projects', { name: 'P' }, { token: agent.userToken });
    const other = await signupWithOrganization(server);
    const foreign = await request(server, 'POST', DATABASES, { display_name: 'F', driver: 'sqlite', file_path: 'foreign.sqlite' }, { token: other.userToken });
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', project.body.data.source.id, foreign.body.data.source.id]) {
      const res = await request(server, 'POST', setupPath(id), undefined, { token: agent.userToken });
      assert.equal(res.status, 404, id);
      assert.deepEqual(res.body, { errors: { detail: 'Not found' } });
    }
    const db = await create({ file_path: 'junk-body.sqlite' });
    const junk = await request(server, 'POST', setupPath(db.body.data.source.id), [1], { token: agent.userToken });
    assert.equal(junk.status, 400);
    assert.equal((await request(server, 'POST', setupPath(db.body.data.source.id))).status, 401);
    assert.equal(statusOf(server, db.body.data.source.id), 'pending');
  });

  test('a user without an organization gets 409', async () => {
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', { email: uniqueEmail(), password: 'correct horse battery' });
    const res = await create({ file_path: 'x.sqlite' }, signup.body.data.token.value);
    assert.equal(res.status, 409);
  });
});

describe('sqlite root holding the service database', () => {
  let server: TestServer;
  before(async () => {
    // A relative root is taken from the working directory, which is the data dir in tests.
    server = await startTestServer({ SERVICE_SQLITE_ROOT: '.' });
  });
  after(() => server.stop());

  test("the service's own database files are refused", async () => {
    const agent = await signupWithOrganization(server);
    for (const filePath of ['service.db', 'service.db-wal', './service.db-shm', path.join(server.dataDir, 'service.db')]) {
      const res = await request(server, 'POST', DATABASES, { display_name: 'x', driver: 'sqlite', file_path: filePath }, { token: agent.userToken });
      assert.equal(res.status, 422, filePath);
      assert.deepEqual(res.body, { errors: { file_path: ["must not be the service's own database"] } });
    }
    const ok = await request(server, 'POST', DATABASES, { display_name: 'x', driver: 'sqlite', file_path: 'mine.sqlite' }, { token: agent.userToken });
    assert.equal(ok.status, 201);
  });
});

describe('sqlite uploads (multipart/form-data)', () => {
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

  test('a SQLite upload is moved to <root>/<id>.<ext>, unchanged, and the staging folder is left empty', async () => {
    const bytes = sqliteBytes();
    const res = await upload(server, agent.userToken, { display_name: 'Uploaded', driver: 'sqlite', granularities: ['1h', '1d'], beginning_of_week: '3' }, { name: 'Stats.SQLITE3', bytes });
    assert.equal(res.status, 201, res.text);
    const source = res.body.data.source;
    assert.deepEqual(source.granularities, ['1h', '1d']);
    assert.equal(source.beginning_of_week, 3);
    const file = path.join(root, `${source.id}.sqlite3`);
    assert.deepEqual(readFileSync(file), bytes);
    assert.equal(configOf(server, source.id).file_path, file);
    assert.deepEqual(staged(), []);
    const setup = await request(server, 'POST', setupPath(source.id), undefined, { token: agent.userToken });
    assert.equal(setup.status, 200);
    assert.deepEqual(columnsOf(file, 'something'), ['x']);
    assert.deepEqual(columnsOf(file, 'trifle_stats'), ['key', 'data']);
  });

  test('bad name, bad content, empty file: 422 on sqlite_file, nothing kept', async () => {
    const before = readdirSync(root).sort();
    const cases: [string, Uint8Array, string][] = [
      ['stats.txt', sqliteBytes(), 'must be a file ending in .sqlite, .sqlite3, .db'],
      ['noext', sqliteBytes(), 'must be a file ending in .sqlite, .sqlite3, .db'],
      ['stats.db', Buffer.from('SQLite format 2\u0000 and more bytes here'), 'is not a SQLite database file'],
      ['stats.db', Buffer.from('SQLite'), 'is not a SQLite database file'],
      ['stats.sqlite', new Uint8Array(0), 'is empty'],
    ];
    for (const [name, bytes, message] of cases) {
      const res = await upload(server, agent.userToken, { display_name: 'Bad', driver: 'sqlite' }, { name, bytes });
      assert.equal(res.status, 422, name);
      assert.deepEqual(res.body, { errors: { sqlite_file: [message] } }, name);
    }
    assert.deepEqual(readdirSync(root).sort(), before);
    assert.deepEqual(staged(), []);
  });

  test('an upload over the limit is 413 and leaves no staged file', async () => {
    const res = await upload(server, agent.userToken, { display_name: 'Big', driver: 'sqlite' }, { name: 'big.sqlite', bytes: Buffer.alloc(70_000, 1) });
    assert.equal(res.status, 413);
    assert.match(res.body.errors.detail, /65536/);
    // The multipart reader removes its partial file right after answering, not before.
    for (let i = 0; i < 500 && staged().length > 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(staged(), []);
  });

  test('failures before the move delete the staged upload (409, 422 fields, upload + file_path)', async () => {
    const bytes = sqliteBytes();
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', { email: uniqueEmail(), password: 'correct horse battery' });
    const lone = await upload(server, signup.body.data.token.value, { display_name: 'x', driver: 'sqlite' }, { name: 'a.sqlite', bytes });
    assert.equal(lone.status, 409);
    const fields = await upload(server, agent.userToken, { driver: 'sqlite', time_zone: 'Nowhere/Land' }, { name: 'a.sqlite', bytes });
    assert.equal(fields.status, 422);
    assert.deepEqual(fields.body, { errors: { display_name: ['is required'], time_zone: ['is not a valid IANA time zone'] } });
    const both = await upload(server, agent.userToken, { display_name: 'x', driver: 'sqlite', file_path: 'p.sqlite' }, { name: 'a.sqlite', bytes });
    assert.equal(both.status, 422);
    assert.deepEqual(both.body, { errors: { sqlite_file: ['cannot be combined with file_path'] } });
    const wrongField = await upload(server, agent.userToken, { display_name: 'x', driver: 'sqlite' }, { name: 'a.sqlite', bytes, field: 'file' });
    assert.equal(wrongField.status, 422);
    assert.deepEqual(wrongField.body, { errors: { file_path: ['is required (or upload sqlite_file)'] } });
    const textField = await upload(server, agent.userToken, { display_name: 'x', driver: 'sqlite', sqlite_file: 'not a file' });
    assert.equal(textField.status, 422);
    assert.deepEqual(staged(), []);
  });

  test('multipart with file_path only, and for another driver (the file is ignored and removed)', async () => {
    const byPath = await upload(server, agent.userToken, { display_name: 'p', driver: 'sqlite', file_path: 'form.sqlite' });
    assert.equal(byPath.status, 201);
    const redis = await upload(server, agent.userToken, { display_name: 'r', driver: 'redis', host: 'localhost', port: '6380' }, { name: 'a.sqlite', bytes: sqliteBytes() });
    assert.equal(redis.status, 201);
    assert.deepEqual(configOf(server, redis.body.data.source.id), { host: 'localhost', port: 6380, prefix: 'trfl', identifier_mode: 'full' });
    assert.deepEqual(staged(), []);
  });
});

describe('database sources of other drivers', () => {
  let server: TestServer;
  let agent: Agent;
  before(async () => {
    server = await startTestServer();
    agent = await signupWithOrganization(server);
  });
  after(() => server.stop());
  const create = (body: Record<string, unknown>) => request(server, 'POST', DATABASES, body, { token: agent.userToken });

  test('postgres and mysql: fields stored (credentials never answered), default ports, setup 422 not supported', async () => {
    const secret = 'S3cr3t-pa55word!';
    const pg = await create({ display_name: 'PG', driver: 'postgres', host: 'db.internal', port: 5433, database_name: 'metrics', username: 'svc', password: secret });
    assert.equal(pg.status, 201);
    assert.deepEqual(Object.keys(pg.body.data.source).sort(), [
      'beginning_of_week', 'default_granularity', 'default_timeframe', 'display_name', 'driver', 'granularities', 'id', 'setup_status', 'time_zone', 'type',
    ]);
    assert.equal(pg.body.data.source.driver, 'postgres');
    assert.deepEqual(configOf(server, pg.body.data.source.id), {
      host: 'db.internal', port: 5433, database_name: 'metrics', username: 'svc', password: secret, identifier_mode: 'full',
    });
    const mysql = await create({ display_name: 'My', driver: 'mysql', host: 'h', database_name: 'd', username: 'u' });
    assert.equal(mysql.status, 201);
    assert.deepEqual(configOf(server, mysql.body.data.source.id), { host: 'h', port: 3306, database_name: 'd', username: 'u', identifier_mode: 'full' });
    const setup = await request(server, 'POST', setupPath(pg.body.data.source.id), undefined, { token: agent.userToken });
    assert.equal(setup.status, 422);
    assert.deepEqual(setup.body, { errors: { setup: ['driver postgres is not yet supported'] } });
    assert.equal(statusOf(server, pg.body.data.source.id), 'pending');
    const listed = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, { token: agent.userToken });
    const token = await request(server, 'POST', '/api/v1/bootstrap/source-tokens', { source_type: 'database', source_id: pg.body.data.source.id }, { token: agent.userToken });
    for (const text of [pg.text, listed.text, token.text, setup.text]) {
      assert.ok(!text.includes(secret));
      assert.ok(!text.includes('db.internal'));
    }
  });

  test('redis and mongo: optional prefix and credentials', async () => {
    const redis = await create({ display_name: 'R', driver: 'redis', host: 'cache', prefix: 'app' });
    assert.deepEqual(configOf(server, redis.body.data.source.id), { host: 'cache', port: 6379, prefix: 'app', identifier_mode: 'full' });
    const mongo = await create({ display_name: 'M', driver: 'mongo', host: 'mongo', database_name: 'stats' });
    assert.deepEqual(configOf(server, mongo.body.data.source.id), { host: 'mongo', port: 27017, database_name: 'stats', identifier_mode: 'full' });
    const withCreds = await create({ display_name: 'M2', driver: 'mongo', host: 'mongo', database_name: 'stats', username: 'u', password: 'p' });
    assert.equal(configOf(server, withCreds.body.data.source.id).password, 'p');
    const setup = await request(server, 'POST', setupPath(mongo.body.data.source.id), undefined, { token: agent.userToken });
    assert.deepEqual(setup.body, { errors: { setup: ['driver mongo is not yet supported'] } });
  });

  test('field rules are 422, all fields at once', async () => {
    const port = 'must be an integer from 1 to 65535';
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{}, { display_name: ['is required'], driver: ['is required'] }],
      [{ display_name: 'x', driver: 'oracle' }, { driver: ['must be one of: sqlite, postgres, mysql, redis, mongo'] }],
      [{ display_name: 'x', driver: 'POSTGRES' }, { driver: ['must be one of: sqlite, postgres, mysql, redis, mongo'] }],
      [{ display_name: 'x', driver: 'postgres' }, { host: ['is required'], database_name: ['is required'], username: ['is required'] }],
      [{ display_name: 'x', driver: 'redis', host: 'h', port: 0 }, { port: [port] }],
      [{ display_name: 'x', driver: 'redis', host: 'h', port: 65536 }, { port: [port] }],
      [{ display_name: 'x', driver: 'redis', host: 'h', port: 'abc' }, { port: [port] }],
      [{ display_name: 'x', driver: 'redis', host: 'h', port: 80.5 }, { port: [port] }],
      [{ display_name: 'x', driver: 'redis', host: ['h'] }, { host: ['must be a string'] }],
      [{ display_name: 'x', driver: 'redis', host: 'h', prefix: '' }, { prefix: ["can't be blank"] }],
      [{ display_name: 'x', driver: 'mysql', host: 'h', database_name: 'd', username: 'u', password: 42 }, { password: ['must be a string'] }],
      [{ display_name: 'x', driver: 'mongo', host: 'h', database_name: 'd', username: {} }, { username: ['must be a string'] }],
      [
        { display_name: '', driver: 'postgres', host: 'h', port: -1, database_name: 'd', username: 'u', time_zone: 'X', granularities: 'bad' },
        {
          display_name: ["can't be blank"],
          time_zone: ['is not a valid IANA time zone'],
          granularities: ['contains an invalid granularity: "bad"'],
          port: [port],
        },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await create(body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.deepEqual(res.body, { errors }, JSON.stringify(body));
    }
  });
});

describe('the recommended agent flow', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('signup -> me -> organizations -> databases (sqlite) -> setup -> source-tokens -> token in use', async () => {
    const email = uniqueEmail('agent');
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', { email, password: 'agent password 1' });
    assert.equal(signup.status, 201);
    const token = signup.body.data.token.value;
    const me = await request(server, 'GET', '/api/v1/bootstrap/me', undefined, { token });
    assert.equal(me.status, 200);
    assert.equal(me.body.data.organization, null);
    const org = await request(server, 'POST', '/api/v1/bootstrap/organizations', { name: 'Agent Co' }, { token });
    assert.equal(org.status, 201);
    const db = await request(server, 'POST', DATABASES, { display_name: 'Agent store', driver: 'sqlite', file_path: 'agent.sqlite' }, { token });
    assert.equal(db.status, 201);
    const id = db.body.data.source.id;
    const setup = await request(server, 'POST', setupPath(id), undefined, { token });
    assert.equal(setup.status, 200);
    assert.equal(setup.body.data.source.setup_status, 'ready');
    const minted = await request(server, 'POST', '/api/v1/bootstrap/source-tokens', { source_type: 'database', source_id: id }, { token });
    assert.equal(minted.status, 201);
    const sourceToken = minted.body.data.token.value;
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, { token: sourceToken, sourceId: id });
    assert.equal(dashboards.status, 200);
    const sources = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, { token });
    assert.deepEqual(sources.body.data.databases.map((d: { id: string; setup_status: string }) => [d.id, d.setup_status]), [[id, 'ready']]);
  });

  test('signup with organization_name -> project -> source-tokens', async () => {
    const signup = await request(server, 'POST', '/api/v1/bootstrap/signup', { email: uniqueEmail('agent'), password: 'agent password 1', organization_name: 'Project Agent' });
    const token = signup.body.data.token.value;
    assert.equal(signup.body.data.membership.role, 'owner');
    const project = await request(server, 'POST', '/api/v1/bootstrap/projects', { name: 'Web' }, { token });
    assert.equal(project.status, 201);
    const minted = await request(server, 'POST', '/api/v1/bootstrap/source-tokens', { source_type: 'project', source_id: project.body.data.source.id, write: false }, { token });
    assert.equal(minted.status, 201);
    assert.equal(minted.body.data.token.write, false);
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, { token: minted.body.data.token.value });
    assert.equal(dashboards.status, 200);
  });
});
