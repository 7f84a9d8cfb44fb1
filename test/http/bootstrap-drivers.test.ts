// Database sources of the drivers other than sqlite: fields, defaults, credentials never answered,
// setup not yet supported.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, signupWithOrganization, startTestServer, type Agent, type TestServer } from '../helpers/server';
import { DATABASES, setupPath, configOf, statusOf } from '../helpers/databases';

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
    assert.equal(statusOf(server, pg.body.data.source.id), 'failed');
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
