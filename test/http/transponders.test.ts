// Transponders and the source endpoint (SPEC 15), through the real server: the source's settings,
// the CRUD of /api/v1/transponders with its rules, and derived values on every read of a metric key
// (GET /metrics, the query, share links, a database source), never on the system key.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { readHour, sqliteSource, track } from '../helpers/sqlite-sources';
import { databaseFixture } from '../helpers/databases';

const AT = '2026-01-24T10:30:00Z';
const RANGE = 'from=2026-01-24T10:00:00Z&to=2026-01-24T11:00:00Z&granularity=1h';

describe('transponders', () => {
  let server: TestServer;
  let p: ProjectAgent;
  let other: ProjectAgent;
  const as = (agent: ProjectAgent, token = agent.sourceToken) => ({ token, sourceId: agent.sourceId });
  const call = (method: string, path: string, body?: unknown, agent = p) =>
    request(server, method, path, body, as(agent));
  const create = (body: unknown, agent = p) => call('POST', '/api/v1/transponders', body, agent);
  const mint = async (agent: ProjectAgent, flags: Record<string, boolean>) => {
    const t = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: agent.sourceId, ...flags },
      { token: agent.userToken },
    );
    assert.equal(t.status, 201, t.text);
    return t.body.data.token.value as string;
  };
  const series = async (key: string | null, agent = p) => {
    const res = await call(
      'GET',
      `/api/v1/metrics?${RANGE}${key === null ? '' : `&key=${encodeURIComponent(key)}`}`,
      undefined,
      agent,
    );
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  const removeAll = async (agent = p) => {
    for (const t of (await call('GET', '/api/v1/transponders', undefined, agent)).body.data) {
      assert.equal((await call('DELETE', `/api/v1/transponders/${t.id}`, undefined, agent)).status, 200);
    }
  };

  before(async () => {
    server = await startTestServer();
    p = await createProjectWithToken(server, { granularities: ['1h', '1d'], time_zone: 'Europe/Bratislava' });
    other = await createProjectWithToken(server);
    const points = [
      {
        key: 'api',
        at: AT,
        values: { requests: { count: 8, errors: 2 }, duration: { sum: 12 }, bytes: 3_145_728 },
      },
      { key: 'api::eu', at: AT, values: { requests: { count: 4, errors: 1 } } },
      { key: 'empty', at: AT, values: { requests: { count: 0, errors: 0 } } },
    ];
    const batch = await request(server, 'POST', '/api/v1/metrics/batch', { points }, as(p));
    assert.equal(batch.status, 201, batch.text);
  });
  after(() => server.stop());

  test('GET /source: the token’s source and its settings, for a token with either flag', async () => {
    const res = await call('GET', '/api/v1/source');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body.data).sort(), [
      'api_version',
      'available_granularities',
      'default_granularity',
      'default_timeframe',
      'display_name',
      'id',
      'server_version',
      'time_zone',
      'type',
    ]);
    assert.equal(res.body.data.api_version, 'v1');
    assert.equal(res.body.data.id, p.sourceId);
    assert.equal(res.body.data.type, 'project');
    assert.deepEqual(res.body.data.available_granularities, ['1h', '1d']);
    assert.equal(res.body.data.default_granularity, '1h');
    assert.equal(res.body.data.time_zone, 'Europe/Bratislava');
    assert.match(res.body.data.server_version, /^\d+\.\d+\.\d+/);

    const writeOnly = await mint(p, { read: false, write: true });
    assert.equal((await request(server, 'GET', '/api/v1/source', undefined, as(p, writeOnly))).status, 200);
    const neither = await mint(p, { read: false, write: false });
    assert.equal((await request(server, 'GET', '/api/v1/source', undefined, as(p, neither))).status, 403);
    const noHeader = await request(server, 'GET', '/api/v1/source', undefined, { token: p.sourceToken });
    assert.equal(noHeader.status, 400);
    assert.equal(noHeader.body.errors.detail, 'Missing X-Service-Source-Id header');
    const bad = await request(server, 'GET', '/api/v1/source', undefined, {
      token: p.sourceToken,
      sourceId: 'nope',
    });
    assert.equal(bad.body.errors.detail, 'Invalid X-Service-Source-Id header');
    assert.equal(
      (
        await request(server, 'GET', '/api/v1/source', undefined, {
          token: p.sourceToken,
          sourceId: other.sourceId,
        })
      ).status,
      403,
    );
    assert.equal(
      (
        await request(server, 'GET', '/api/v1/source', undefined, {
          token: p.userToken,
          sourceId: p.sourceId,
        })
      ).status,
      403,
    );
    assert.equal((await request(server, 'GET', '/api/v1/source')).status, 401);
  });

  test('create, list, show, update and delete; the body top level or under `transponder`', async () => {
    const first = await create({
      name: 'Error rate',
      key: 'api',
      paths: ['requests.errors', 'requests.count'],
      expression: 'a / b * 100',
      response: 'requests.error_rate',
    });
    assert.equal(first.status, 201, first.text);
    const t1 = first.body.data;
    assert.match(t1.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      { ...t1, id: undefined, inserted_at: undefined, updated_at: undefined },
      {
        id: undefined,
        name: 'Error rate',
        key: 'api',
        config: {
          paths: ['requests.errors', 'requests.count'],
          expression: 'a / b * 100',
          response: 'requests.error_rate',
        },
        enabled: true,
        order: 1,
        source_type: 'project',
        source_id: p.sourceId,
        inserted_at: undefined,
        updated_at: undefined,
      },
    );
    const second = await create({
      transponder: {
        name: 'MB',
        key: 'api',
        enabled: 'false',
        config: { paths: ['bytes'], expression: 'a / 1024 / 1024', response: 'megabytes' },
      },
    });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.body.data.order, 2, 'default order: last + 1');
    assert.equal(second.body.data.enabled, false);
    const third = await create({
      name: 'Z',
      key: 'api',
      order: '-5',
      paths: ['a'],
      expression: 'a',
      response: 'z',
    });
    assert.equal(third.body.data.order, -5, 'an integer string');

    const list = await call('GET', '/api/v1/transponders');
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.data.map((t: { name: string }) => t.name),
      ['Z', 'Error rate', 'MB'],
      'in order',
    );
    const shown = await call('GET', `/api/v1/transponders/${t1.id.toUpperCase()}`);
    assert.equal(shown.status, 200);
    assert.deepEqual(shown.body.data, t1);

    const updated = await call('PUT', `/api/v1/transponders/${second.body.data.id}`, {
      enabled: true,
      order: 7,
    });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.data.enabled, true);
    assert.equal(updated.body.data.order, 7);
    assert.equal(updated.body.data.config.expression, 'a / 1024 / 1024', 'fields left out keep their value');
    const renamed = await call('PUT', `/api/v1/transponders/${second.body.data.id}`, {
      transponder: { config: { response: 'size.mb' } },
    });
    assert.equal(renamed.body.data.config.response, 'size.mb');
    assert.deepEqual(renamed.body.data.config.paths, ['bytes']);

    const removed = await call('DELETE', `/api/v1/transponders/${third.body.data.id}`);
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body.data, third.body.data, 'delete returns the object');
    assert.equal((await call('GET', `/api/v1/transponders/${third.body.data.id}`)).status, 404);
    assert.equal((await call('DELETE', `/api/v1/transponders/${third.body.data.id}`)).status, 404);
    assert.equal((await call('GET', '/api/v1/transponders/not-a-uuid')).status, 404);
    await removeAll();
  });

  test('another source’s transponder is not found; reads need read, changes need write', async () => {
    const mine = (await create({ name: 'x', key: 'api', paths: ['a'], expression: 'a', response: 'b' })).body
      .data;
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { name: 'y' }],
      ['DELETE', undefined],
    ] as const) {
      const res = await call(method, `/api/v1/transponders/${mine.id}`, body, other);
      assert.equal(res.status, 404, `${method} from another source`);
    }
    assert.deepEqual((await call('GET', '/api/v1/transponders', undefined, other)).body.data, []);
    const readOnly = await mint(p, { read: true, write: false });
    const writeOnly = await mint(p, { read: false, write: true });
    const body = { name: 'y', key: 'api', paths: ['a'], expression: 'a', response: 'c' };
    assert.equal((await request(server, 'POST', '/api/v1/transponders', body, as(p, readOnly))).status, 403);
    assert.equal(
      (await request(server, 'PUT', `/api/v1/transponders/${mine.id}`, body, as(p, readOnly))).status,
      403,
    );
    assert.equal(
      (await request(server, 'DELETE', `/api/v1/transponders/${mine.id}`, undefined, as(p, readOnly))).status,
      403,
    );
    assert.equal(
      (await request(server, 'GET', '/api/v1/transponders', undefined, as(p, readOnly))).status,
      200,
    );
    assert.equal(
      (await request(server, 'GET', '/api/v1/transponders', undefined, as(p, writeOnly))).status,
      403,
    );
    assert.equal(
      (await request(server, 'GET', `/api/v1/transponders/${mine.id}`, undefined, as(p, writeOnly))).status,
      403,
    );
    const noHeader = await request(server, 'GET', '/api/v1/transponders', undefined, {
      token: p.sourceToken,
    });
    assert.equal(noHeader.status, 400);
    assert.equal(
      (
        await request(server, 'GET', '/api/v1/transponders', undefined, {
          token: p.userToken,
          sourceId: p.sourceId,
        })
      ).status,
      403,
    );
    await removeAll();
  });

  test('422 naming the field, the config’s rules under `config`', async () => {
    const ok = { name: 'n', key: 'api', paths: ['a'], expression: 'a', response: 'r' };
    const errorsOf = async (patch: Record<string, unknown>) => {
      const res = await create({ ...ok, ...patch });
      assert.equal(res.status, 422, `${JSON.stringify(patch)}: ${res.text}`);
      return res.body.errors as Record<string, string[]>;
    };
    assert.deepEqual(await errorsOf({ name: ' ' }), { name: ["can't be blank"] });
    assert.deepEqual(await errorsOf({ key: undefined }), { key: ["can't be blank"] });
    assert.deepEqual(await errorsOf({ name: 5, key: ['api'] }), {
      name: ['must be a string'],
      key: ['must be a string'],
    });
    assert.deepEqual(await errorsOf({ paths: ['a', 3], expression: 7, response: {} }), {
      config: ['paths[1] must be a string', 'expression must be a string', 'response must be a string'],
    });
    assert.deepEqual(await errorsOf({ paths: [] }), { config: ['paths must be a list of 1 to 26 paths'] });
    assert.deepEqual(await errorsOf({ paths: 'a' }), { config: ['paths must be a list of 1 to 26 paths'] });
    const many = Array.from({ length: 27 }, (_, i) => `p${i}`);
    assert.deepEqual(await errorsOf({ paths: many }), {
      config: ['paths must hold at most 26 paths (one per variable a..z)'],
    });
    assert.equal(
      (await create({ ...ok, paths: many.slice(0, 26), expression: 'sum(a, z)' })).status,
      201,
      '26 paths: a..z',
    );
    assert.deepEqual(await errorsOf({ paths: ['a.*'] }), {
      config: ['paths[0] must not contain wildcards (*)'],
    });
    assert.deepEqual(await errorsOf({ paths: ['a', ' '] }), { config: ["paths[1] can't be blank"] });
    assert.deepEqual(await errorsOf({ response: '' }), { config: ["response can't be blank"] });
    assert.deepEqual(await errorsOf({ response: 'x.*' }), {
      config: ['response must not contain wildcards (*)'],
    });
    assert.deepEqual(await errorsOf({ expression: 'a + b' }), {
      config: ["expression: Unknown variable b: only the paths' variables (a) can be used"],
    });
    assert.deepEqual(await errorsOf({ expression: 'pow(a)' }), {
      config: ['expression: Unknown function pow (use sum, mean, avg, min, max, sqrt)'],
    });
    assert.deepEqual(await errorsOf({ expression: '(a' }), {
      config: ['expression: Missing closing parenthesis'],
    });
    assert.deepEqual(await errorsOf({ expression: '' }), { config: ["expression can't be blank"] });
    assert.deepEqual(await errorsOf({ config: 'x' }), {
      config: ['must be an object with paths, expression and response'],
    });
    assert.deepEqual(await errorsOf({ enabled: 'yes' }), { enabled: ['must be true or false'] });
    assert.deepEqual(await errorsOf({ order: 1.5 }), { order: ['must be an integer'] });
    assert.deepEqual(await errorsOf({ order: 'first' }), { order: ['must be an integer'] });
    const nested = await errorsOf({ key: '^(a+)+$' });
    assert.match(nested.key![0]!, /catastrophic/);
    assert.match((await errorsOf({ key: '^(\\w|\\d)*x$' })).key![0]!, /catastrophic/);
    assert.match((await errorsOf({ key: '^(a)\\1$' })).key![0]!, /back-references/);
    assert.match((await errorsOf({ key: '^[a$' })).key![0]!, /not a valid regular expression/);
    assert.match((await errorsOf({ key: `^${'a'.repeat(300)}$` })).key![0]!, /at most 255/);
    assert.equal(
      (await create({ ...ok, key: '^api(::[a-z]+)?$' })).status,
      201,
      'a bounded pattern is accepted',
    );
    const both = await errorsOf({ name: '', paths: [] });
    assert.deepEqual(Object.keys(both).sort(), ['config', 'name']);
    const notObject = await request(server, 'POST', '/api/v1/transponders', undefined, {
      ...as(p),
      raw: '[1]',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notObject.status, 400);
    const existing = (await call('GET', '/api/v1/transponders')).body.data[0];
    const badUpdate = await call('PUT', `/api/v1/transponders/${existing.id}`, { expression: 'aa' });
    assert.equal(badUpdate.status, 422);
    await removeAll();
  });

  test('applied on reads of a metric key in order, never on the system key nor at write time', async () => {
    await create({
      name: 'Mean',
      key: 'api',
      paths: ['duration.sum', 'requests.count'],
      expression: 'a / b',
      response: 'duration.mean',
      order: 1,
    });
    await create({
      name: 'Rate',
      key: 'api',
      paths: ['requests.errors', 'requests.count'],
      expression: 'a / b * 100',
      response: 'requests.error_rate',
      order: 2,
    });
    await create({
      name: 'Rate x2',
      key: 'api',
      paths: ['requests.error_rate'],
      expression: 'a * 2',
      response: 'derived.twice.rate',
      order: 3,
    });
    await create({
      name: 'MB',
      key: 'api',
      paths: ['bytes'],
      expression: 'a / 1024 / 1024',
      response: 'megabytes',
      order: 4,
    });
    await create({
      name: 'Off',
      key: 'api',
      paths: ['bytes'],
      expression: 'a',
      response: 'off',
      enabled: false,
    });

    const read = await series('api');
    assert.deepEqual(read.data.values[0], {
      requests: { count: 8, errors: 2, error_rate: 25 },
      duration: { sum: 12, mean: 1.5 },
      bytes: 3_145_728,
      derived: { twice: { rate: 50 } },
      megabytes: 3,
    });
    assert.deepEqual(read.data.values[1], {}, 'an empty bucket stays empty');
    assert.equal(read.meta, undefined, 'no meta when nothing failed');
    assert.equal(read.data.at.length, 2);

    const system = await series(null);
    assert.ok(!JSON.stringify(system).includes('error_rate'), 'never on the system key');
    assert.ok(!JSON.stringify(await series('api::eu')).includes('error_rate'), 'exact key only');

    const zero = await series('empty');
    assert.deepEqual(
      zero.data.values[0],
      { requests: { count: 0, errors: 0 } },
      'a division by zero is no value',
    );

    const query = await call('POST', '/api/v1/metrics/query', {
      key: 'api',
      from: '2026-01-24T10:00:00Z',
      to: '2026-01-24T11:00:00Z',
      granularity: '1h',
      mode: 'aggregate',
      aggregator: 'max',
      value_path: 'requests.error_rate',
    });
    assert.equal(query.status, 200, query.text);
    assert.equal(query.body.data.value, 25);
    assert.ok(query.body.data.available_paths.includes('megabytes'));
    assert.equal(query.body.meta, undefined);

    await removeAll();
    const after = await series('api');
    assert.deepEqual(
      after.data.values[0],
      { requests: { count: 8, errors: 2 }, duration: { sum: 12 }, bytes: 3_145_728 },
      'nothing was stored',
    );
  });

  test('a key pattern applies to every key it matches', async () => {
    await create({
      name: 'Rate',
      key: '^api(::[a-z]+)?$',
      paths: ['requests.errors', 'requests.count'],
      expression: 'a / b',
      response: 'rate',
    });
    assert.equal((await series('api')).data.values[0].rate, 0.25);
    assert.equal((await series('api::eu')).data.values[0].rate, 0.25);
    assert.equal((await series('empty')).data.values[0].rate, undefined);
    await removeAll();
  });

  test('a failing transponder is skipped and reported in meta.transponder_errors; the read succeeds', async () => {
    const bad = (
      await create({
        name: 'Into a number',
        key: 'api',
        paths: ['bytes'],
        expression: 'a',
        response: 'bytes.kb',
        order: 1,
      })
    ).body.data;
    const map = (
      await create({
        name: 'Onto a map',
        key: 'api',
        paths: ['bytes'],
        expression: 'a',
        response: 'requests',
        order: 2,
      })
    ).body.data;
    await create({
      name: 'Good',
      key: 'api',
      paths: ['bytes'],
      expression: 'a / 1024',
      response: 'kb',
      order: 3,
    });
    const read = await series('api');
    assert.equal(read.data.values[0].kb, 3072, 'the others still apply');
    assert.deepEqual(
      read.data.values[0].requests,
      { count: 8, errors: 2 },
      'the failing one changed nothing',
    );
    assert.deepEqual(read.meta.transponder_errors, [
      { id: bad.id, name: 'Into a number', error: 'response path bytes.kb runs into the value at bytes' },
      { id: map.id, name: 'Onto a map', error: 'response path requests names a map of values' },
    ]);
    const query = await call('POST', '/api/v1/metrics/query', {
      key: 'api',
      from: '2026-01-24T10:00:00Z',
      to: '2026-01-24T11:00:00Z',
      granularity: '1h',
      mode: 'timeline',
      value_path: 'kb',
    });
    assert.equal(query.status, 200, query.text);
    assert.equal(query.body.data.result.kb[0].value, 3072);
    assert.equal(query.body.meta.transponder_errors.length, 2);
    assert.ok(Array.isArray(query.body.data.table.rows), 'the table is still in data');
    await removeAll();
  });

  test('share links read the derived values', async () => {
    await create({
      name: 'Rate',
      key: 'api',
      paths: ['requests.errors', 'requests.count'],
      expression: 'a / b',
      response: 'rate',
    });
    const made = await request(
      server,
      'POST',
      '/api/v1/dashboards',
      {
        name: 'API',
        key: 'api',
        source: { type: 'project', id: p.sourceId },
        payload: { grid: [] },
      },
      { token: p.userToken },
    );
    assert.equal(made.status, 201, made.text);
    const link = await request(server, 'POST', `/api/v1/dashboards/${made.body.data.id}/shares`, undefined, {
      token: p.userToken,
    });
    assert.equal(link.status, 201, link.text);
    const shared = await request(server, 'GET', `/api/v1/shared/${link.body.data.token}/metrics?${RANGE}`);
    assert.equal(shared.status, 200, shared.text);
    assert.equal(shared.body.data.values[0].rate, 0.25);
    const inInterface = await request(
      server,
      'GET',
      `/api/v1/sources/${p.sourceId}/metrics?${RANGE}&key=api`,
      undefined,
      { token: p.userToken },
    );
    assert.equal(inInterface.body.data.values[0].rate, 0.25, 'the interface’s reads (Explore, dashboards)');
    await removeAll();
  });

  test('a database source (sqlite file; PostgreSQL in cluster mode): its own transponders, applied to its reads; GET /source', async () => {
    const src = await sqliteSource(
      server,
      p,
      await databaseFixture(server, `tr${Date.now()}`, { setup: true }),
    );
    const db = { ...p, sourceId: src.id, sourceToken: src.token };
    assert.equal((await track(server, src, { sum: 30, count: 4 })).status, 201);
    const made = await create(
      { name: 'Mean', key: 'orders', paths: ['sum', 'count'], expression: 'a / b', response: 'mean' },
      db,
    );
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.data.source_type, 'database');
    assert.equal(made.body.data.source_id, src.id);
    const read = await readHour(server, src);
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.data.values[0], { sum: 30, count: 4, mean: 7.5 });
    assert.deepEqual((await call('GET', '/api/v1/transponders')).body.data, [], 'not the project’s');
    const info = await call('GET', '/api/v1/source', undefined, db);
    assert.equal(info.status, 200, info.text);
    assert.equal(info.body.data.type, 'database');
    assert.deepEqual(info.body.data.available_granularities, ['1h']);
  });
  test('the interface’s routes: a user of the organization manages its sources’ transponders', async () => {
    const base = `/api/v1/sources/${p.sourceId}/transponders`;
    const user = { token: p.userToken };
    const made = await request(
      server,
      'POST',
      base,
      { name: 'UI', key: 'ui-orders', paths: ['a'], expression: 'a * 2', response: 'twice' },
      user,
    );
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.data.source_id, p.sourceId);
    const id = made.body.data.id as string;
    const listed = await request(server, 'GET', base, undefined, user);
    assert.ok(listed.body.data.some((t: { id: string }) => t.id === id));
    const seen = await call('GET', `/api/v1/transponders/${id}`);
    assert.equal(seen.status, 200, 'the same transponder the source token sees');
    const changed = await request(server, 'PUT', `${base}/${id}`, { enabled: false, order: '9' }, user);
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual([changed.body.data.enabled, changed.body.data.order], [false, 9]);
    const bad = await request(server, 'PUT', `${base}/${id}`, { expression: 'a +' }, user);
    assert.equal(bad.status, 422);
    // another organization's user: its source is unknown, and so is this one's transponder
    const stranger = { token: other.userToken };
    assert.equal((await request(server, 'GET', base, undefined, stranger)).status, 404);
    const otherBase = `/api/v1/sources/${other.sourceId}/transponders`;
    assert.equal((await request(server, 'GET', `${otherBase}/${id}`, undefined, stranger)).status, 404);
    assert.equal(
      (await request(server, 'GET', base, undefined, as(p))).status,
      403,
      'not with a source token',
    );
    const removed = await request(server, 'DELETE', `${base}/${id}`, undefined, user);
    assert.equal(removed.status, 200);
    assert.equal(removed.body.data.id, id);
    assert.equal((await request(server, 'GET', `${base}/${id}`, undefined, user)).status, 404);
  });
});

describe('GET /source of a database that cannot be reached', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('503 with Retry-After, never 500', async () => {
    const agent = await createProjectWithToken(server);
    // Nothing listens on port 1 of the loopback address: the connection is refused at once.
    const made = await request(
      server,
      'POST',
      '/api/v1/bootstrap/databases',
      {
        display_name: 'Down',
        driver: 'postgres',
        host: '127.0.0.1',
        port: 1,
        database_name: 'metrics',
        username: 'postgres',
      },
      { token: agent.userToken },
    );
    assert.equal(made.status, 201, made.text);
    const id = made.body.data.source.id as string;
    const t = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'database', source_id: id },
      { token: agent.userToken },
    );
    assert.equal(t.status, 201, t.text);
    const res = await request(server, 'GET', '/api/v1/source', undefined, {
      token: t.body.data.token.value,
      sourceId: id,
    });
    assert.equal(res.status, 503, res.text);
    assert.ok(res.headers.get('retry-after'));
    assert.equal(typeof res.body.errors.detail, 'string');
  });
});
