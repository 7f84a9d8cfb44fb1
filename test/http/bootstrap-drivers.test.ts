// Database sources of the network drivers (SPEC 8): their fields or a url, validated as 422s naming
// the field; secrets encrypted at rest (service.db is read directly) and never answered; plaintext
// secrets of older versions encrypted on start; setup against a real server, and setup failures as
// 422 messages free of credentials and hosts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/lib/log';
import { startServer } from '../../src/server';
import {
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
  controlRows,
} from '../helpers/server';
import { DATABASES, setupPath, configOf, statusOf } from '../helpers/databases';
import { SERVERS, skipReason } from '../drivers/network';
import { scratchLocation } from '../drivers/http-sources';

const SECRET = 'S3cr3t-pa55word!';

/** Every byte the service keeps about its sources (the database and its WAL; in cluster mode the rows). */
async function storedBytes(server: TestServer): Promise<string> {
  if (server.store) return JSON.stringify(await controlRows(server, 'SELECT * FROM sources'));
  server.deps.db.pragma('wal_checkpoint(TRUNCATE)');
  return readdirSync(server.dataDir)
    .filter((f) => f.startsWith('service.db'))
    .map((f) => readFileSync(path.join(server.dataDir, f)).toString('latin1'))
    .join('');
}

describe('database sources of the network drivers', () => {
  let server: TestServer;
  let agent: Agent;
  before(async () => {
    server = await startTestServer();
    agent = await signupWithOrganization(server);
  });
  after(() => server.stop());
  const create = (body: Record<string, unknown>) =>
    request(server, 'POST', DATABASES, body, { token: agent.userToken });
  const setup = (id: string) => request(server, 'POST', setupPath(id), undefined, { token: agent.userToken });

  test('fields stored with the password encrypted, default ports, never answered', async () => {
    const pg = await create({
      display_name: 'PG',
      driver: 'postgres',
      host: 'db.internal',
      port: 5433,
      database_name: 'metrics',
      username: 'svc',
      password: SECRET,
      ssl: true,
    });
    assert.equal(pg.status, 201, pg.text);
    assert.deepEqual(Object.keys(pg.body.data.source).sort(), [
      'beginning_of_week',
      'default_granularity',
      'default_timeframe',
      'display_name',
      'driver',
      'granularities',
      'id',
      'setup_status',
      'time_zone',
      'type',
    ]);
    const config = await configOf(server, pg.body.data.source.id);
    assert.match(config.password, /^enc:v1:/);
    assert.deepEqual(
      { ...config, password: 'x' },
      {
        host: 'db.internal',
        port: 5433,
        database_name: 'metrics',
        username: 'svc',
        password: 'x',
        ssl: true,
        identifier_mode: 'full',
      },
    );
    const mysql = await create({
      display_name: 'My',
      driver: 'mysql',
      host: 'h',
      database_name: 'd',
      username: 'u',
    });
    assert.deepEqual(await configOf(server, mysql.body.data.source.id), {
      host: 'h',
      port: 3306,
      database_name: 'd',
      username: 'u',
      identifier_mode: 'full',
    });
    const redis = await create({
      display_name: 'R',
      driver: 'redis',
      host: 'cache',
      prefix: 'app',
      database: '3',
      password: SECRET,
    });
    const rc = await configOf(server, redis.body.data.source.id);
    assert.deepEqual(
      { ...rc, password: 'x' },
      { host: 'cache', port: 6379, prefix: 'app', database: 3, password: 'x', identifier_mode: 'full' },
    );
    const mongo = await create({
      display_name: 'M',
      driver: 'mongo',
      host: 'mongo',
      database_name: 'stats',
      username: 'u',
      password: SECRET,
      auth_source: 'admin',
    });
    assert.equal((await configOf(server, mongo.body.data.source.id)).auth_source, 'admin');
    const listed = await request(server, 'GET', '/api/v1/bootstrap/sources', undefined, {
      token: agent.userToken,
    });
    for (const text of [pg.text, redis.text, mongo.text, listed.text]) {
      assert.ok(!text.includes(SECRET) && !text.includes('db.internal') && !text.includes('enc:v1'));
    }
    assert.ok(!(await storedBytes(server)).includes(SECRET), 'no plaintext password stored');
  });

  test('the url form: stored encrypted, checked by scheme, not combined with the fields', async () => {
    const url = `postgres://svc:${SECRET}@db.internal:5432/metrics`;
    const ok = await create({ display_name: 'U', driver: 'postgres', url });
    assert.equal(ok.status, 201, ok.text);
    assert.match((await configOf(server, ok.body.data.source.id)).url, /^enc:v1:/);
    assert.ok(!ok.text.includes(SECRET));
    const mongo = await create({ display_name: 'U', driver: 'mongo', url: 'mongodb://h:27017/stats' });
    assert.equal(mongo.status, 201, mongo.text);
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{ driver: 'postgres', url: 'mysql://h/d' }, { url: ['must start with postgres:// or postgresql://'] }],
      [{ driver: 'postgres', url: 'postgres://h' }, { url: ['must name the database (…/database_name)'] }],
      [{ driver: 'redis', url: 'not a url' }, { url: ['must be a connection URL'] }],
      [{ driver: 'redis', url: 42 }, { url: ['must be a string'] }],
      [
        { driver: 'mysql', url: 'mysql://h/d', host: 'h', password: 'p' },
        { host: ['cannot be combined with url'], password: ['cannot be combined with url'] },
      ],
      [
        { driver: 'mongo', url: 'mongodb://h:27017' },
        { database_name: ['is required (or name the database in url)'] },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await create({ display_name: 'x', ...body });
      assert.deepEqual([res.status, res.body], [422, { errors }], JSON.stringify(body));
    }
  });

  test('field rules are 422, all fields at once', async () => {
    const port = 'must be an integer from 1 to 65535';
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{}, { display_name: ['is required'], driver: ['is required'] }],
      [
        { display_name: 'x', driver: 'oracle' },
        { driver: ['must be one of: sqlite, postgres, mysql, redis, mongo'] },
      ],
      [
        { display_name: 'x', driver: 'postgres' },
        { host: ['is required'], database_name: ['is required'], username: ['is required'] },
      ],
      [{ display_name: 'x', driver: 'redis', host: 'h', port: 0 }, { port: [port] }],
      [{ display_name: 'x', driver: 'redis', host: 'h', port: 'abc' }, { port: [port] }],
      [{ display_name: 'x', driver: 'redis', host: ['h'] }, { host: ['must be a string'] }],
      [{ display_name: 'x', driver: 'redis', host: 'h', prefix: '' }, { prefix: ["can't be blank"] }],
      [
        { display_name: 'x', driver: 'redis', host: 'h', database: 16 },
        { database: ['must be an integer from 0 to 15'] },
      ],
      [
        { display_name: 'x', driver: 'redis', host: 'h', identifier_mode: 'partial' },
        { identifier_mode: ['must be full for redis (its only layout)'] },
      ],
      [
        { display_name: 'x', driver: 'mysql', host: 'h', database_name: 'd', username: 'u', password: 42 },
        { password: ['must be a string'] },
      ],
      [
        { display_name: 'x', driver: 'mysql', host: 'h', database_name: 'd', username: 'u', ssl: 'yes' },
        { ssl: ['must be a boolean'] },
      ],
      [
        { display_name: 'x', driver: 'mongo', host: 'h', database_name: 'd', username: {} },
        { username: ['must be a string'] },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await create(body);
      assert.deepEqual([res.status, res.body], [422, { errors }], JSON.stringify(body));
    }
  });

  test('setup of a server that cannot be reached: 422 without credentials or host', async () => {
    for (const driver of ['postgres', 'mysql', 'redis', 'mongo']) {
      const res = await create({
        display_name: 'x',
        driver,
        host: '127.0.0.1',
        port: 1,
        database_name: 'd',
        username: 'svc',
        password: SECRET,
      });
      assert.equal(res.status, 201, res.text);
      const failed = await setup(res.body.data.source.id);
      assert.equal(failed.status, 422, failed.text);
      assert.match(failed.body.errors.setup[0], new RegExp(`^${driver}: `));
      assert.ok(
        !failed.text.includes(SECRET) && !failed.text.includes('127.0.0.1') && !failed.text.includes('svc'),
        failed.text,
      );
      assert.equal(await statusOf(server, res.body.data.source.id), 'failed');
    }
  });

  test(
    'setup against the real postgres: ready, and again (idempotent)',
    { skip: skipReason('postgres') },
    async () => {
      const place = await scratchLocation('postgres');
      try {
        const res = await create({
          display_name: 'x',
          driver: 'postgres',
          host: SERVERS.postgres.host,
          port: SERVERS.postgres.port,
          database_name: place.at.database,
          username: 'postgres',
          password: SECRET,
        });
        const ok = await setup(res.body.data.source.id);
        assert.deepEqual(
          [ok.status, ok.body.data.setup],
          [200, { status: 'ready', message: 'trifle_stats ready (identifier mode full)' }],
        );
        assert.equal((await setup(res.body.data.source.id)).status, 200);
      } finally {
        await place.remove();
      }
    },
  );
});

describe('secrets at rest', () => {
  test('a key file is created 0600 on first start; plaintext passwords of older versions are encrypted on start', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-secrets-'));
    const start = () =>
      startServer(loadConfig({ env: { SERVICE_DATA_DIR: dataDir, SERVICE_PORT: '0' }, cwd: dataDir }), {
        log: createLogger('silent'),
      });
    try {
      let server = await start();
      assert.equal(statSync(path.join(dataDir, 'secret.key')).mode & 0o777, 0o600);
      const agent = await signupWithOrganization(server);
      const res = await request(
        server,
        'POST',
        DATABASES,
        { display_name: 'x', driver: 'mysql', host: 'h', database_name: 'd', username: 'u' },
        { token: agent.userToken },
      );
      const id = res.body.data.source.id;
      // as an older version stored it
      server.deps.db.prepare('UPDATE sources SET config = ? WHERE id = ?').run(
        JSON.stringify({
          host: 'h',
          port: 3306,
          database_name: 'd',
          username: 'u',
          password: SECRET,
          identifier_mode: 'full',
        }),
        id,
      );
      await server.close();
      server = await start();
      const config = JSON.parse(
        (server.deps.db.prepare('SELECT config FROM sources WHERE id = ?').get(id) as { config: string })
          .config,
      );
      assert.match(config.password, /^enc:v1:/);
      assert.equal(server.deps.secrets.decrypt(config.password), SECRET);
      await server.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('secrets.key: a configured key is used; a malformed one stops start-up naming the key', () => {
    assert.throws(
      () => loadConfig({ env: { SERVICE_SECRET_KEY: 'short' }, cwd: os.tmpdir() }),
      /secrets\.key/,
    );
    const key = 'a'.repeat(64);
    assert.equal(loadConfig({ env: { SERVICE_SECRET_KEY: key }, cwd: os.tmpdir() }).secrets.key, key);
  });
});
