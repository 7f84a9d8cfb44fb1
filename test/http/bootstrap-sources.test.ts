// Bootstrap projects, source listing and source tokens.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  request,
  signupWithOrganization,
  startTestServer,
  uniqueEmail,
  type Agent,
  type TestServer,
  controlRow,
} from '../helpers/server';
import { databaseFixture } from '../helpers/databases';

const PROJECTS = '/api/v1/bootstrap/projects';
const DATABASES = '/api/v1/bootstrap/databases';
const SOURCES = '/api/v1/bootstrap/sources';
const TOKENS = '/api/v1/bootstrap/source-tokens';
const SOURCE_TOKEN = /^svc_sat_[A-Za-z0-9_-]{43}$/;

async function noOrgToken(server: { url: string }): Promise<string> {
  const res = await request(server, 'POST', '/api/v1/bootstrap/signup', {
    email: uniqueEmail(),
    password: 'correct horse battery',
  });
  return res.body.data.token.value;
}

describe('bootstrap projects', () => {
  let server: TestServer;
  let agent: Agent;
  before(async () => {
    server = await startTestServer();
    agent = await signupWithOrganization(server);
  });
  after(() => server.stop());
  const create = (body: unknown, token = agent.userToken) =>
    request(server, 'POST', PROJECTS, body, { token });

  test('defaults: UTC, Monday, 1m..1y, 24h, first granularity, keep forever', async () => {
    const res = await create({ name: 'Shop' });
    assert.equal(res.status, 201);
    const source = res.body.data.source;
    assert.deepEqual(res.body.data, {
      source: {
        id: source.id,
        type: 'project',
        display_name: 'Shop',
        time_zone: 'UTC',
        beginning_of_week: 1,
        granularities: ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'],
        default_timeframe: '24h',
        default_granularity: '1m',
        expire_after: null,
        retention: {},
      },
    });
  });

  test('every setting given (zone spelled in lower case, granularities as a comma string)', async () => {
    const cluster = 'A1B2C3D4-0000-4000-8000-0000000000AA';
    const res = await create({
      name: 'Berlin',
      time_zone: 'europe/berlin',
      beginning_of_week: 7,
      granularities: ' 15m, 1h ,1d',
      default_granularity: '1h',
      default_timeframe: '7d',
      expire_after: 86_400,
      project_cluster_id: cluster,
    });
    assert.equal(res.status, 201);
    const s = res.body.data.source;
    assert.equal(s.time_zone, 'Europe/Berlin');
    assert.equal(s.beginning_of_week, 7);
    assert.deepEqual(s.granularities, ['15m', '1h', '1d']);
    assert.equal(s.default_granularity, '1h');
    assert.equal(s.default_timeframe, '7d');
    assert.equal(s.expire_after, 86_400);
    const row = (await controlRow(server, 'SELECT project_cluster_id FROM sources WHERE id = ?', s.id))!;
    assert.equal(row.project_cluster_id, cluster.toLowerCase());
  });

  test('granularities as a list; default_granularity defaults to the first', async () => {
    const res = await create({ name: 'List', granularities: ['1d', '1w'], expire_after: null });
    assert.deepEqual(res.body.data.source.granularities, ['1d', '1w']);
    assert.equal(res.body.data.source.default_granularity, '1d');
  });

  test('every broken field is a 422 naming it', async () => {
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{}, { name: ['is required'] }],
      [{ name: '' }, { name: ["can't be blank"] }],
      [{ name: ['a'] }, { name: ['must be a string'] }],
      [{ name: 'x'.repeat(256) }, { name: ['must be at most 255 characters'] }],
      [{ name: 'p', time_zone: 'Mars/Phobos' }, { time_zone: ['is not a valid IANA time zone'] }],
      [{ name: 'p', time_zone: '+01:00' }, { time_zone: ['is not a valid IANA time zone'] }],
      [{ name: 'p', time_zone: 60 }, { time_zone: ['must be a string'] }],
      [
        { name: 'p', beginning_of_week: 0 },
        { beginning_of_week: ['must be an integer from 1 (Monday) to 7 (Sunday)'] },
      ],
      [
        { name: 'p', beginning_of_week: 8 },
        { beginning_of_week: ['must be an integer from 1 (Monday) to 7 (Sunday)'] },
      ],
      [
        { name: 'p', beginning_of_week: 1.5 },
        { beginning_of_week: ['must be an integer from 1 (Monday) to 7 (Sunday)'] },
      ],
      [
        { name: 'p', beginning_of_week: 'monday' },
        { beginning_of_week: ['must be an integer from 1 (Monday) to 7 (Sunday)'] },
      ],
      [{ name: 'p', granularities: ['1x'] }, { granularities: ['contains an invalid granularity: "1x"'] }],
      [{ name: 'p', granularities: '0m,1h' }, { granularities: ['contains an invalid granularity: "0m"'] }],
      [{ name: 'p', granularities: ['1h', '1h'] }, { granularities: ['contains 1h more than once'] }],
      [{ name: 'p', granularities: [] }, { granularities: ["can't be blank"] }],
      [{ name: 'p', granularities: [1] }, { granularities: ['must contain only strings'] }],
      [
        { name: 'p', granularities: 5 },
        { granularities: ['must be a list of granularities or a comma-separated string'] },
      ],
      [
        { name: 'p', granularities: Array.from({ length: 51 }, (_, i) => `${i + 1}m`) },
        { granularities: ['must hold at most 50 granularities'] },
      ],
      [
        { name: 'p', granularities: ['1h', '1d'], default_granularity: '1m' },
        { default_granularity: ['must be one of the granularities'] },
      ],
      [
        { name: 'p', default_granularity: 'hourly' },
        { default_granularity: ['is not a valid granularity (like 1m, 1h, 1d)'] },
      ],
      [
        { name: 'p', default_timeframe: 'forever' },
        { default_timeframe: ['is not a valid timeframe (like 24h, 7d)'] },
      ],
      [
        { name: 'p', default_timeframe: '0d' },
        { default_timeframe: ['is not a valid timeframe (like 24h, 7d)'] },
      ],
      [{ name: 'p', expire_after: 0 }, { expire_after: ['must be a positive integer (seconds) or null'] }],
      [{ name: 'p', expire_after: -5 }, { expire_after: ['must be a positive integer (seconds) or null'] }],
      [
        { name: 'p', expire_after: 'soon' },
        { expire_after: ['must be a positive integer (seconds) or null'] },
      ],
      [{ name: 'p', project_cluster_id: 'cluster-1' }, { project_cluster_id: ['must be a UUID'] }],
      [
        { time_zone: 'Nowhere', beginning_of_week: 9, default_timeframe: 3 },
        {
          name: ['is required'],
          time_zone: ['is not a valid IANA time zone'],
          beginning_of_week: ['must be an integer from 1 (Monday) to 7 (Sunday)'],
          default_timeframe: ['must be a string'],
        },
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await create(body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.deepEqual(res.body, { errors }, JSON.stringify(body));
    }
  });

  test('a user without an organization gets 409; a non-object body 400', async () => {
    const token = await noOrgToken(server);
    const res = await create({ name: 'P' }, token);
    assert.equal(res.status, 409);
    assert.match(res.body.errors.detail, /no organization/);
    assert.equal((await create([{ name: 'P' }])).status, 400);
  });
});

describe('bootstrap sources listing and source tokens', () => {
  let server: TestServer;
  let agent: Agent;
  let projectId: string;
  let databaseId: string;
  before(async () => {
    server = await startTestServer();
    agent = await signupWithOrganization(server);
    projectId = (await request(server, 'POST', PROJECTS, { name: 'P' }, { token: agent.userToken })).body.data
      .source.id;
    const db = await request(
      server,
      'POST',
      DATABASES,
      { display_name: 'D', ...(await databaseFixture(server, 'd')) },
      { token: agent.userToken },
    );
    databaseId = db.body.data.source.id;
  });
  after(() => server.stop());
  const mint = (body: unknown, token = agent.userToken) => request(server, 'POST', TOKENS, body, { token });

  test('GET /sources lists the organization projects and databases; [] without an organization', async () => {
    const res = await request(server, 'GET', SOURCES, undefined, { token: agent.userToken });
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.data.projects.map((s: { id: string }) => s.id),
      [projectId],
    );
    assert.deepEqual(
      res.body.data.databases.map((s: { id: string }) => s.id),
      [databaseId],
    );
    assert.equal(res.body.data.databases[0].setup_status, 'pending');
    const lone = await request(server, 'GET', SOURCES, undefined, { token: await noOrgToken(server) });
    assert.deepEqual(lone.body, { data: { projects: [], databases: [] } });
  });

  test('a token for a project: defaults, shape, stored as hash + last 5', async () => {
    const res = await mint({ source_type: 'project', source_id: projectId });
    assert.equal(res.status, 201);
    const { token, source } = res.body.data;
    assert.deepEqual(Object.keys(token).sort(), [
      'id',
      'name',
      'read',
      'source_id',
      'source_type',
      'value',
      'write',
    ]);
    assert.equal(token.name, 'CLI source token');
    assert.equal(token.read, true);
    assert.equal(token.write, true);
    assert.equal(token.source_type, 'project');
    assert.equal(token.source_id, projectId);
    assert.match(token.value, SOURCE_TOKEN);
    assert.equal(source.id, projectId);
    assert.equal(source.type, 'project');
    const row = (await controlRow(server, 'SELECT * FROM source_tokens WHERE id = ?', token.id))!;
    assert.equal(row.token_hash, createHash('sha256').update(token.value).digest('hex'));
    assert.equal(row.last5, token.value.slice(-5));
    assert.ok(!Object.values(row).includes(token.value));
  });

  test('a read-only token for a database, id in upper case, custom name; both false is allowed', async () => {
    const res = await mint({
      source_type: 'database',
      source_id: databaseId.toUpperCase(),
      name: ' reader ',
      write: false,
    });
    assert.equal(res.status, 201);
    assert.equal(res.body.data.token.name, 'reader');
    assert.equal(res.body.data.token.read, true);
    assert.equal(res.body.data.token.write, false);
    assert.equal(res.body.data.token.source_id, databaseId);
    assert.equal(res.body.data.source.setup_status, 'pending');
    const none = await mint({ source_type: 'database', source_id: databaseId, read: false, write: false });
    assert.equal(none.status, 201);
    assert.equal(none.body.data.token.read, false);
  });

  test('a source token is known to the service: dashboards accept it, bootstrap refuses it with 403', async () => {
    const value = (await mint({ source_type: 'database', source_id: databaseId })).body.data.token.value;
    const dashboards = await request(server, 'GET', '/api/v1/dashboards', undefined, { token: value });
    assert.equal(dashboards.status, 200);
    const boot = await request(server, 'GET', SOURCES, undefined, { token: value });
    assert.equal(boot.status, 403);
  });

  test('field rules are 422', async () => {
    const cases: [Record<string, unknown>, Record<string, string[]>][] = [
      [{}, { source_type: ['is required'], source_id: ['is required'] }],
      [
        { source_type: 'table', source_id: projectId },
        { source_type: ['must be one of: database, project'] },
      ],
      [{ source_type: null, source_id: projectId }, { source_type: ['is required'] }],
      [{ source_type: 'project', source_id: 'abc' }, { source_id: ['must be a UUID'] }],
      [{ source_type: 'project', source_id: 42 }, { source_id: ['must be a UUID'] }],
      [
        { source_type: 'project', source_id: projectId, read: 'yes' },
        { read: ['must be a JSON boolean (true or false)'] },
      ],
      [
        { source_type: 'project', source_id: projectId, write: 1 },
        { write: ['must be a JSON boolean (true or false)'] },
      ],
      [
        { source_type: 'project', source_id: projectId, read: null },
        { read: ['must be a JSON boolean (true or false)'] },
      ],
      [{ source_type: 'project', source_id: projectId, name: '' }, { name: ["can't be blank"] }],
    ];
    for (const [body, errors] of cases) {
      const res = await mint(body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.deepEqual(res.body, { errors });
    }
  });

  test('unknown source, wrong source_type, or a user without organization: 404', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const body of [
      { source_type: 'project', source_id: unknown },
      { source_type: 'database', source_id: projectId },
      { source_type: 'project', source_id: databaseId },
    ]) {
      const res = await mint(body);
      assert.equal(res.status, 404, JSON.stringify(body));
      assert.deepEqual(res.body, { errors: { detail: 'Not found' } });
    }
    const lone = await mint({ source_type: 'project', source_id: projectId }, await noOrgToken(server));
    assert.equal(lone.status, 404);
  });
});
