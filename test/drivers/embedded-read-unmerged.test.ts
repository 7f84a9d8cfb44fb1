// A read of the embedded store merges itself the appends the metric writer had not merged when it
// answered (embedded/store.ts). Between that answer and the read's snapshot the writer may merge
// those appends and fold them, in part or whole: the snapshot's fold state says which rows hold
// them. Here the writer runs in this thread and the read is handed the writer's answer from before
// an append, while the fold of that append commits transaction by transaction: every read must
// equal the series once all is folded (no point lost, none counted twice), for tracks and asserts
// in their order, every granularity and the system key.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createEmbeddedStore, type EmbeddedWriter } from '../../src/drivers/embedded/store';
import { MetricWriter } from '../../src/drivers/embedded/metric-writer';
import { KEY_UNIT, type WirePoints, encodePoints } from '../../src/model/point-wire';
import type { ValidPoint } from '../../src/model/point';
import type { PendingSeries } from '../../src/model/row-delta';
import type { LoggedPoints } from '../../src/model/wire';
import type { MetricStore, SeriesRef } from '../../src/drivers/types';

const SYSTEM_KEY = '__system__key__';
const T0 = Date.UTC(2026, 1, 2);
const M = 60_000;
const settings = { id: 'src', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m', '1h', '1d'] };

let dir: string;
let db: Db;
let writer: MetricWriter;
let store: MetricStore;
/** what the store's next read is told by the writer (null: ask the writer itself) */
let told: PendingSeries | null = null;

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'read-unmerged-'));
  db = openDatabase(path.join(dir, 'service.db'));
  migrate(db);
  // one piece of fold work per transaction, folds only when asked
  writer = new MetricWriter({ db, chunkMs: 0, foldAfterMs: 600_000 });
  const port: EmbeddedWriter = {
    append: (entries) => writer.append(entries),
    pending: async (...args) => told ?? writer.pending(...args),
    settle: () => writer.settle(),
    apply: (writes) => writer.applyWriteSet(writes),
    close: () => writer.close(),
  };
  store = createEmbeddedStore(db, port);
});
after(async () => {
  await writer.close();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const point = (
  key: string,
  minute: number,
  values: Record<string, number>,
  extra: Partial<ValidPoint> = {},
) =>
  ({
    key,
    atMs: T0 + minute * M,
    paths: Object.keys(values),
    values: Object.values(values),
    assert: false,
    untracked: false,
    ...extra,
  }) as ValidPoint;
const entriesOf = (points: ValidPoint[]): LoggedPoints[] => [{ settings, wire: encodePoints(points) }];

/** The series read: two keys and the system key, at each granularity, over two hours. */
const SERIES: Array<[SeriesRef, number[]]> = [];
for (const [granularity, step, n] of [
  ['1m', M, 120],
  ['1h', 60 * M, 2],
  ['1d', 1440 * M, 1],
] as const) {
  const starts = Array.from({ length: n }, (_, i) => T0 + i * step);
  for (const key of ['a', 'b', SYSTEM_KEY]) SERIES.push([{ sourceId: 'src', key, granularity }, starts]);
}
const readAll = () => Promise.all(SERIES.map(([ref, starts]) => store.read(ref, starts).then(parse)));
const parse = (texts: string[]) => texts.map((t) => JSON.parse(t) as Record<string, unknown>);

test('a read handed appends the writer then merges and folds holds each point exactly once', async () => {
  // Stored first: tracks of a and b over two hours, and an assert on a's `level`.
  const stored: ValidPoint[] = [];
  for (let m = 0; m < 120; m++) {
    stored.push(point('a', m, { n: 1, v: m }));
    if (m % 3 === 0) stored.push(point('b', m, { n: 2 }, { untracked: m % 2 === 0 }));
  }
  stored.push(point('a', 5, { level: 50 }, { assert: true }));
  await writer.append(entriesOf(stored));
  await writer.settle();

  // The writer's answer to a read, taken now: the windows hold nothing of what follows.
  const answers = new Map<string, PendingSeries>();
  for (const [ref, starts] of SERIES)
    answers.set(
      `${ref.key} ${ref.granularity}`,
      writer.pending(ref.sourceId, ref.key, ref.granularity, starts),
    );

  // Then an append (acknowledged): tracks over the stored rows, track-then-assert and
  // assert-then-track on `level`, untracked points, a new leaf.
  const later: ValidPoint[] = [];
  for (let m = 0; m < 120; m += 2) later.push(point('a', m, { n: 1, w: 3 }));
  for (let m = 1; m < 120; m += 7) later.push(point('b', m, { n: 5 }, { untracked: m % 3 === 0 }));
  later.push(point('a', 5, { level: 7 })); // 50 + 7
  later.push(point('a', 9, { level: 4 })); // a track
  later.push(point('a', 9, { level: 100 }, { assert: true })); // ... replaced
  later.push(point('a', 9, { level: 1 })); // ... and added to: 101
  later.push(point('a', 70, { level: 3 }, { assert: true }));
  // and pair points, as the line protocol writes them (a track and an assert in one): on a at
  // minute 11, {x.sum, x.count} tracked and x.last set twice (the later wins), and on b at 12
  const pairs: WirePoints = {
    keys: ['a', 'b'],
    pathLists: [['x.sum', 'x.count', 'x.last']],
    assertFrom: [2],
    meta: Float64Array.from([T0 + 11 * M, 0, T0 + 11 * M + 1_000, 0, T0 + 12 * M, KEY_UNIT]),
    values: Float64Array.from([2, 1, 2, 6, 1, 6, 8, 1, 8]),
  };
  const laterEntries = [...entriesOf(later), { settings, wire: pairs }];
  await writer.append(laterEntries);
  const merged = writer.pending('src', 'a', '1m', [T0]).mergedUpTo!;

  /** A read told the answer from before the append, with the append as not merged yet. */
  const readTold = async () => {
    const out: Array<Record<string, unknown>[]> = [];
    for (const [ref, starts] of SERIES) {
      const answer = answers.get(`${ref.key} ${ref.granularity}`)!;
      told = { ...answer, parts: [...answer.parts], unmerged: [{ upTo: merged, entries: laterEntries }] };
      try {
        out.push(parse(await store.read(ref, starts)));
      } finally {
        told = null;
      }
    }
    return out;
  };

  // Reads before the fold, between each of its transactions, and after it.
  const seen = [await readTold()];
  let folded = false;
  const settling = writer.settle().then(() => (folded = true));
  let between = 0;
  while (!folded) {
    await new Promise((resolve) => setImmediate(resolve));
    const state = db.prepare('SELECT folding_up_to FROM metric_fold_state').get() as {
      folding_up_to: number | null;
    };
    if (state.folding_up_to !== null) between++;
    seen.push(await readTold());
  }
  await settling;
  seen.push(await readTold());
  assert.ok(between > 3, `reads in the middle of the fold: ${between}`);

  const final = await readAll();
  for (const reads of seen) {
    reads.forEach((values, i) => {
      const [ref] = SERIES[i]!;
      assert.deepEqual(values, final[i], `${ref.key} at ${ref.granularity}`);
    });
  }
  // and the final values are those of every point once
  const a1m = final[0]!;
  assert.equal(a1m[5]!.level, 57);
  assert.equal(a1m[9]!.level, 101);
  assert.equal(a1m[70]!.level, 3);
  assert.deepEqual(a1m[11]!.x, { sum: 8, count: 2, last: 6 });
  assert.deepEqual(final[1]![12]!.x, { sum: 8, count: 1, last: 8 });
  const a1d = final[6]!;
  assert.equal(a1d[0]!.n, 120 + 60);
  const system1d = final[8]![0] as { count: number; keys: Record<string, unknown> };
  assert.equal(system1d.count, stored.length + later.length + 2 * 3); // a pair counts as two points
});
