// The metric writer in this thread (embedded/metric-writer.ts): a fold cut off after some of its
// transactions is finished by the next writer without counting a point twice; appends wait while a
// fold runs and the gathering window is full; a source whose settings change is folded under the
// old ones first; a folded window's columns serve the next.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePoint } from '../../src/domain/metrics/ingest/points';
import { MetricWriter } from '../../src/drivers/embedded/metric-writer';
import { encodePoints } from '../../src/model/point-wire';
import { PlanCache } from '../../src/model/plan';
import { IngestWindow } from '../../src/model/window/window';
import { columnSize } from '../../src/model/window/rows';
import { createEmbeddedStore } from '../../src/drivers/embedded/store';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';

const settings = { id: 'p1', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m', '1h', '1d'] };
const T0 = Date.UTC(2026, 2, 1, 10);
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** `n` tracks of 1 on `keys` distinct keys, a minute apart. */
function wire(n: number, keys: number, atMs = T0) {
  const points = Array.from({ length: n }, (_, i) =>
    parsePoint({
      key: `k${i % keys}`,
      at: new Date(atMs + (i % 60) * 60_000).toISOString(),
      values: { n: 1 },
    }),
  );
  return encodePoints(points);
}

describe('metric writer', () => {
  let dir: string;
  let db: Db;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'writer-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
  });
  afterEach(() => {
    if (db.open) db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The 1d bucket of every key and the system key's count, read as the service reads them. */
  async function totals(writer: { pending: MetricWriter['pending'] }, keys: number): Promise<number[]> {
    const store = createEmbeddedStore(db, {
      append: () => Promise.reject(new Error('read only')),
      pending: async (...args) => writer.pending(...args),
      settle: async () => undefined,
      apply: () => Promise.reject(new Error('read only')),
      close: async () => undefined,
    });
    const day = Date.UTC(2026, 2, 1);
    const read = async (key: string) =>
      JSON.parse((await store.read({ sourceId: 'p1', key, granularity: '1d' }, [day]))[0]!);
    const out: number[] = [];
    for (let k = 0; k < keys; k++) out.push((await read(`k${k}`)).n ?? 0);
    out.push((await read('__system__key__')).count ?? 0);
    return out;
  }

  test('a fold cut off between its transactions is finished after a restart, each point once', async () => {
    const first = new MetricWriter({ db, foldAfterMs: 600_000, chunkMs: 0 });
    await first.append([{ settings, wire: wire(600, 40) }]);
    void first.settle(); // the fold begins: a transaction of a few rows per event-loop turn
    for (let i = 0; i < 12; i++) await turn();
    const state = db.prepare('SELECT folded_up_to, folding_up_to FROM metric_fold_state').get() as Record<
      string,
      number | null
    >;
    assert.equal(state.folded_up_to, 0, 'the fold has not finished');
    assert.equal(state.folding_up_to, 1, 'but some of its transactions committed');
    const written = db.prepare('SELECT count(*) FROM metric_buckets').pluck().get() as number;
    assert.ok(written > 0, 'rows of the unfinished fold are in the table');
    db.close(); // the process dies: the first writer's next transaction cannot begin

    db = openDatabase(path.join(dir, 'service.db'));
    const second = new MetricWriter({ db }); // replays the log: finishes the cut fold under its number
    assert.deepEqual(await totals(second, 40), [...Array(40).fill(15), 600]);
    await second.close();
  });

  test('pair points are logged and replayed after a restart with their assert parts, each counted as two points', async () => {
    const first = new MetricWriter({ db, foldAfterMs: 600_000, chunkMs: 0 });
    // k0: n tracked and `last` set at 10:00 and 10:01 (the later wins), as the line protocol writes them
    const pairs = {
      keys: ['k0'],
      pathLists: [['n', 'last']],
      assertFrom: [1],
      meta: Float64Array.from([T0, 0, T0 + 60_000, 0]),
      values: Float64Array.from([1, 5, 1, 7]),
    };
    await first.append([{ settings, wire: pairs }]);
    db.close(); // nothing folded: the next writer has only the log

    db = openDatabase(path.join(dir, 'service.db'));
    const second = new MetricWriter({ db });
    assert.deepEqual(await totals(second, 1), [2, 4]);
    const store = createEmbeddedStore(db, {
      append: () => Promise.reject(new Error('read only')),
      pending: async (...args) => second.pending(...args),
      settle: async () => undefined,
      apply: () => Promise.reject(new Error('read only')),
      close: async () => undefined,
    });
    const [day] = await store.read({ sourceId: 'p1', key: 'k0', granularity: '1d' }, [Date.UTC(2026, 2, 1)]);
    assert.deepEqual(JSON.parse(day!), { n: 2, last: 7 });
    await second.close();
  });

  test('appends wait while a fold runs and the gathering window is full', async () => {
    const writer = new MetricWriter({ db, foldAfterMs: 600_000, chunkMs: 0, maxWindowBytes: 1 });
    await writer.append([{ settings, wire: wire(300, 30) }]);
    const folded = writer.settle();
    await turn();
    await writer.append([{ settings, wire: wire(10, 30) }]); // the window was empty: taken
    let acked = false;
    const next = writer.append([{ settings, wire: wire(10, 30) }]).then(() => (acked = true));
    await turn();
    assert.equal(acked, false, 'over the bound while folding: the append waits');
    await folded;
    await next;
    assert.equal(acked, true);
    assert.deepEqual((await totals(writer, 30)).slice(-1), [320]);
    await writer.close();
  });

  test('points of a source whose settings change are folded under the settings they came with', async () => {
    const writer = new MetricWriter({ db, foldAfterMs: 600_000 });
    await writer.append([{ settings, wire: wire(5, 1) }]);
    await writer.append([{ settings: { ...settings, timeZone: 'America/New_York' }, wire: wire(3, 1) }]);
    await writer.settle();
    // 10:00Z is 05:00 in New York: the same UTC day, but the day starts at 05:00Z there
    const day = (ms: number) =>
      db
        .prepare(
          "SELECT b.data FROM metric_buckets b JOIN metric_series s ON s.id = b.series_id WHERE s.key = 'k0' AND s.granularity = '1d' AND b.bucket = ?",
        )
        .pluck()
        .get(ms / 1000);
    assert.equal(day(Date.UTC(2026, 2, 1)), '{"n":5}');
    assert.equal(day(Date.UTC(2026, 2, 1, 5)), '{"n":3}');
    await writer.close();
  });

  test('windows after the first reuse the columns of the one folded before, and sum the same', async () => {
    const writer = new MetricWriter({ db, foldAfterMs: 600_000 });
    for (let round = 1; round <= 4; round++) {
      await writer.append([{ settings, wire: wire(120, 12) }]);
      await writer.settle();
      assert.deepEqual(await totals(writer, 12), [...Array(12).fill(10 * round), 120 * round]);
    }
    await writer.close();
  });

  test("windows whose rows outgrow a fresh window's columns let them go between folds and sum the same", async () => {
    const writer = new MetricWriter({ db, foldAfterMs: 600_000 });
    for (let round = 1; round <= 3; round++) {
      await writer.append([{ settings, wire: wire(6000, 500) }]); // 1,500 1m rows, 500 1h and 500 1d ones
      await writer.settle();
      assert.deepEqual(await totals(writer, 500), [...Array(500).fill(12 * round), 6000 * round]);
    }
    await writer.close();
  });
});

describe('ingest window row columns', () => {
  const plan = new PlanCache().get(settings);
  const fresh = columnSize(0);
  /** 300 keys x 10 minutes: 3,000 1m rows (and 300 1h and 300 1d ones) */
  const distinct = () =>
    encodePoints(
      Array.from({ length: 3000 }, (_, i) =>
        parsePoint({
          key: `k${i % 300}`,
          at: new Date(T0 + Math.floor(i / 300) * 60_000).toISOString(),
          values: { n: 1 },
        }),
      ),
    );

  test('a window lets its row columns go once emptied, and takes room for as many as asked', () => {
    const window = new IngestWindow();
    window.add(plan, distinct());
    window.spreadAll();
    assert.equal(window.rows.count, 3600);
    assert.ok(window.rows.capacity > fresh);
    window.releaseRows(); // rows held: kept
    assert.equal(window.rows.count, 3600);
    window.reset();
    window.releaseRows();
    assert.equal(window.rows.capacity, fresh);
    window.reserveRows(5000);
    assert.equal(window.rows.capacity, columnSize(5000));
    window.add(plan, distinct());
    window.spreadAll();
    assert.equal(
      window.rows.capacity,
      columnSize(5000),
      'the reserved columns took the rows without growing',
    );
    window.reserveRows(50_000); // rows held: the columns stay as they are
    assert.equal(window.rows.capacity, columnSize(5000));
  });
});
