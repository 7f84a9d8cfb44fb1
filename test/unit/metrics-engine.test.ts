// The metrics engine end to end below HTTP: validation, group commit, reads, on a temp service db.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../../src/errors';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { projectSource } from '../helpers/source';
import { createMetricsEngine, type MetricsEngine } from '../../src/domain/metrics/engine';

const source = projectSource;

const status = (code: number, detail?: RegExp) => (err: unknown) => {
  assert.ok(err instanceof AppError, String(err));
  assert.equal(err.status, code, err.message);
  if (detail) assert.match(err.message, detail);
  return true;
};

describe('metrics engine', () => {
  let dir: string;
  let db: Db;
  let engine: MetricsEngine;
  const project = source();
  const start = (limits: { writeQueueMaxPoints?: number } = {}, projectsEnabled = true) =>
    createMetricsEngine({
      db,
      config: {
        limits: {
          maxBodyBytes: 1 << 20,
          sqliteUploadMaxBytes: 1 << 20,
          writeQueueMaxPoints: limits.writeQueueMaxPoints ?? 100_000,
        },
        features: { projectsEnabled, registrationEnabled: true },
      },
    });

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'engine-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
    engine = start();
  });
  afterEach(async () => {
    await engine.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const range = { from: '2025-03-04T10:00:00Z', to: '2025-03-04T12:00:00Z', granularity: '1h' };

  test('a point reads back in its bucket, and in the system key', async () => {
    await engine.ingest(project, {
      key: 'orders',
      at: '2025-03-04T11:15:00Z',
      values: { count: 1, amount: { net: 9.5 } },
    });
    const series = await engine.series(project, { ...range, key: 'orders' });
    assert.deepEqual(series.at, ['2025-03-04T10:00:00Z', '2025-03-04T11:00:00Z', '2025-03-04T12:00:00Z']);
    assert.deepEqual(
      series.values.map((v) => JSON.parse(v)),
      [{}, { count: 1, amount: { net: 9.5 } }, {}],
    );
    const system = await engine.series(project, range);
    assert.deepEqual(JSON.parse(system.values[1]!), { count: 1, keys: { orders: 1 } });
  });

  test('a point before 1970 reads back in its bucket (a stored row of a negative epoch second)', async () => {
    await engine.ingest(project, { key: 'landing', at: '1969-07-20T20:17:40Z', values: { steps: 1 } });
    await engine.flush();
    const old = {
      key: 'landing',
      from: '1969-07-20T19:00:00Z',
      to: '1969-07-20T21:00:00Z',
      granularity: '1h',
    };
    const series = await engine.series(project, old);
    assert.deepEqual(series.at, ['1969-07-20T19:00:00Z', '1969-07-20T20:00:00Z', '1969-07-20T21:00:00Z']);
    assert.deepEqual(series.values, ['{}', '{"steps":1}', '{}']);
  });

  test('bucket times carry the source zone offset', async () => {
    const berlin = source({ id: 'b3f1c7a2-0000-4000-8000-000000000002', timeZone: 'Europe/Berlin' });
    await engine.ingest(berlin, { key: 'k', at: '2025-03-04T23:30:00Z', values: { n: 1 } });
    const day = await engine.series(berlin, {
      key: 'k',
      from: '2025-03-05T00:00:00+01:00',
      to: '2025-03-05T00:00:00+01:00',
      granularity: '1d',
    });
    assert.deepEqual(day.at, ['2025-03-05T00:00:00+01:00']);
    assert.deepEqual(JSON.parse(day.values[0]!), { n: 1 });
  });

  test('a source whose zone or week start changes reads the same range with new buckets and labels', async () => {
    const read = (patch: Partial<ReturnType<typeof source>>) =>
      engine.series(source(patch), {
        key: 'k',
        from: '2025-03-03T00:00:00Z',
        to: '2025-03-10T00:00:00Z',
        granularity: '1w',
      });
    const monday = await read({});
    assert.deepEqual(monday.at, ['2025-03-03T00:00:00Z', '2025-03-10T00:00:00Z']);
    assert.deepEqual((await read({ timeZone: 'Asia/Tokyo' })).at, [
      '2025-03-03T00:00:00+09:00',
      '2025-03-10T00:00:00+09:00',
    ]);
    assert.deepEqual((await read({ beginningOfWeek: 7 })).at, [
      '2025-03-02T00:00:00Z',
      '2025-03-09T00:00:00Z',
    ]);
    assert.deepEqual((await read({})).at, monday.at);
  });

  test('200 concurrent tracks count exactly 200 in every granularity and in the system key', async () => {
    const at = '2025-03-04T11:15:00Z';
    await Promise.all(
      Array.from({ length: 200 }, () => engine.ingest(project, { key: 'hits', at, values: { count: 1 } })),
    );
    for (const granularity of project.granularities) {
      const read = async (key?: string) =>
        JSON.parse(
          (await engine.series(project, { key, from: at, to: at, granularity })).values[0]!,
        ) as Record<string, unknown>;
      assert.deepEqual(await read('hits'), { count: 200 }, granularity);
      assert.deepEqual(await read(), { count: 200, keys: { hits: 200 } }, granularity);
    }
  });

  test('a batch is all or nothing', async () => {
    const good = { key: 'b', at: '2025-03-04T10:00:00Z', values: { n: 1 } };
    await assert.rejects(
      engine.ingestBatch(project, { points: [good, { ...good, values: { n: 'x' } }] }),
      status(422),
    );
    assert.equal(
      await engine.ingestBatch(project, {
        points: [good, good, { ...good, operation: 'assert', values: { m: 4 } }],
      }),
      3,
    );
    assert.deepEqual(JSON.parse((await engine.series(project, { ...range, key: 'b' })).values[0]!), {
      n: 2,
      m: 4,
    });
  });

  test('GET parameters: 400 naming what is wrong', async () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...range, key: '  ' }, /key must not be blank/],
      [{ ...range, key: ['a', 'b'] }, /key must be given once/],
      [{ ...range, from: undefined }, /from is required/],
      [{ ...range, to: '2025-03-04' }, /to must be/],
      [{ ...range, granularity: undefined }, /granularity is required/],
      [{ ...range, granularity: 'hourly' }, /granularity "hourly" is invalid/],
      [{ ...range, granularity: '60m' }, /not allowed for this source/],
      [{ ...range, from: range.to, to: range.from }, /from must not be after to/],
      [
        { from: '2000-01-01T00:00:00Z', to: '2025-01-01T00:00:00Z', granularity: '1m' },
        /more than 100000 buckets/,
      ],
    ];
    for (const [query, detail] of bad)
      await assert.rejects(() => engine.series(project, query), status(400, detail));
  });

  test('the query path needs a key and reads the stored texts', async () => {
    await assert.rejects(() => engine.seriesData(project, range), status(400, /key is required/));
    await engine.ingest(project, { key: 'q', at: '2025-03-04T10:30:00Z', values: { a: { b: 2 } } });
    const { params, series } = await engine.seriesData(project, { ...range, key: 'q' });
    assert.equal(params.granularity.text, '1h');
    assert.deepEqual(series.values, ['{"a":{"b":2}}', '{}', '{}']);
  });

  test('projects disabled: ingestion is 403, reads keep working', async () => {
    await engine.ingest(project, { key: 'k', at: '2025-03-04T10:00:00Z', values: { n: 1 } });
    await engine.close();
    engine = start({}, false);
    const point = { key: 'k', at: '2025-03-04T10:00:00Z', values: { n: 1 } };
    await assert.rejects(engine.ingest(project, point), status(403, /projects are disabled/));
    await assert.rejects(engine.ingestBatch(project, { points: [point] }), status(403));
    assert.deepEqual(JSON.parse((await engine.series(project, { ...range, key: 'k' })).values[0]!), { n: 1 });
  });

  test('a full write queue answers 503 and keeps what it holds', async () => {
    await engine.close();
    engine = start({ writeQueueMaxPoints: 3 });
    const point = { key: 'k', at: '2025-03-04T10:00:00Z', values: { n: 1 } };
    const first = engine.ingestBatch(project, { points: [point, point, point] });
    await assert.rejects(engine.ingest(project, point), status(503, /Write queue is full/));
    await first;
    await engine.ingest(project, point);
    assert.deepEqual(JSON.parse((await engine.series(project, { ...range, key: 'k' })).values[0]!), { n: 4 });
  });

  test('a writer thread behind its bound slows appends down instead of failing them', async () => {
    await engine.close();
    engine = createMetricsEngine({
      db,
      config: {
        limits: { maxBodyBytes: 1 << 20, sqliteUploadMaxBytes: 1 << 20, writeQueueMaxPoints: 100_000 },
        features: { projectsEnabled: true, registrationEnabled: true },
      },
      writer: { maxUnmergedPoints: 1 }, // every commit after the first waits for the one before to merge
    });
    const points = Array.from({ length: 100 }, (_, i) => ({
      key: `k${i % 7}`,
      at: '2025-03-04T10:00:00Z',
      values: { n: 1 },
    }));
    const writes: Array<Promise<number>> = [];
    for (let round = 0; round < 30; round++) {
      writes.push(engine.ingestBatch(project, { points }));
      await new Promise(setImmediate); // a commit of its own for each round
    }
    assert.deepEqual(
      await Promise.all(writes),
      writes.map(() => 100),
    );
    const system = JSON.parse((await engine.series(project, range)).values[0]!) as { count: number };
    assert.equal(system.count, 3000);
  });

  test('close commits what is pending', async () => {
    const pending = engine.ingest(project, { key: 'late', at: '2025-03-04T10:00:00Z', values: { n: 1 } });
    await engine.close();
    await pending;
    engine = start();
    assert.deepEqual(JSON.parse((await engine.series(project, { ...range, key: 'late' })).values[0]!), {
      n: 1,
    });
  });

  test('sqlite database sources: setup, write and read through the Trifle layout', async () => {
    const file = path.join(dir, 'sources', 'app.sqlite');
    const database = source({
      type: 'database',
      driver: 'sqlite',
      config: { file_path: file, identifier_mode: 'separated' },
    });
    assert.equal((await engine.setup(database)).status, 'ready');
    await engine.ingest(database, { key: 'signups', at: '2025-03-04T11:59:59Z', values: { n: 2 } });
    assert.deepEqual(JSON.parse((await engine.series(database, { ...range, key: 'signups' })).values[1]!), {
      n: 2,
    });
    assert.deepEqual(JSON.parse((await engine.series(database, range)).values[1]!), {
      count: 1,
      keys: { signups: 1 },
    });
  });

  test('a database source whose server cannot be reached: 503, reads and writes', async () => {
    const config = { host: '127.0.0.1', port: 1, database_name: 'd', username: 'u', identifier_mode: 'full' };
    const postgres = source({ type: 'database', driver: 'postgres', config });
    await assert.rejects(() => engine.series(postgres, range), status(503, /unavailable/));
    await assert.rejects(
      engine.ingest(postgres, { key: 'k', at: range.from, values: { n: 1 } }),
      status(503),
    );
  });
});
