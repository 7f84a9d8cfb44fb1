// The embedded store's multi-key read (readMany: one writer request, one read transaction) answers
// what N single reads answer, with the same read-your-writes (docs/storage.md "Reads"): while the
// metric writer folds transaction by transaction and points keep being appended, and when the read
// is handed the writer's answer from before an append that it must merge itself while that
// append's fold commits (as embedded-read-unmerged.test.ts does for single reads).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createEmbeddedStore, type EmbeddedWriter } from '../../src/drivers/embedded/store';
import { MetricWriter } from '../../src/drivers/embedded/metric-writer';
import { encodePoints } from '../../src/model/point-wire';
import type { ValidPoint } from '../../src/model/point';
import type { PendingSeries } from '../../src/model/row-delta';
import type { LoggedPoints } from '../../src/model/wire';
import type { MetricStore } from '../../src/drivers/types';

const SYSTEM_KEY = '__system__key__';
const T0 = Date.UTC(2026, 1, 2);
const M = 60_000;
const settings = { id: 'src', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m', '1h', '1d'] };
const KEYS = ['a', 'b', 'c', SYSTEM_KEY, 'never-written'];

let dir: string;
let db: Db;
let writer: MetricWriter;
let store: MetricStore;
/** the writer's answers the next reads are told, by key (null: ask the writer itself) */
let told: Map<string, PendingSeries> | null = null;
let manyRequests = 0;

const copy = (p: PendingSeries): PendingSeries => ({ ...p, parts: [...p.parts] });

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'read-many-'));
  db = openDatabase(path.join(dir, 'service.db'));
  migrate(db);
  // one piece of fold work per transaction, folds only when asked
  writer = new MetricWriter({ db, chunkMs: 0, foldAfterMs: 600_000 });
  const port: EmbeddedWriter = {
    append: (entries) => writer.append(entries),
    pending: async (sourceId, key, granularity, starts) =>
      told ? copy(told.get(key)!) : writer.pending(sourceId, key, granularity, starts),
    pendingMany: async (sourceId, keys, granularity, starts) => {
      manyRequests += 1;
      return told
        ? keys.map((key) => copy(told!.get(key)!))
        : writer.pendingMany(sourceId, keys, granularity, starts);
    },
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

const RANGES: Array<[string, number[]]> = [
  ['1m', Array.from({ length: 120 }, (_, i) => T0 + i * M)],
  ['1h', [T0, T0 + 60 * M]],
  ['1d', [T0]],
];

/** readMany of KEYS at every granularity, and the same by single reads, parsed. */
async function both(): Promise<{ many: unknown[]; single: unknown[] }> {
  const many: unknown[] = [];
  const single: unknown[] = [];
  for (const [granularity, starts] of RANGES) {
    const texts = await store.readMany!({ sourceId: 'src', keys: KEYS, granularity }, starts);
    many.push(texts.map((t) => t.map((x) => JSON.parse(x))));
    const one = await Promise.all(
      KEYS.map((key) => store.read({ sourceId: 'src', key, granularity }, starts)),
    );
    single.push(one.map((t) => t.map((x) => JSON.parse(x))));
  }
  return { many, single };
}

test('readMany equals N single reads while points are appended and folds commit', async () => {
  const before = manyRequests;
  let rounds = 0;
  let folding = 0;
  for (let batch = 0; batch < 6; batch++) {
    const points: ValidPoint[] = [];
    for (let m = batch; m < 120; m += 3) {
      points.push(point('a', m, { n: 1, v: m + batch }));
      if (m % 2 === 0) points.push(point('b', m, { n: 2 }, { untracked: m % 4 === 0 }));
      if (batch === 3 && m === 9) points.push(point('c', m, { level: 40 + batch }, { assert: true }));
    }
    await writer.append(entriesOf(points)); // acknowledged: every read from now on sees it
    const settling = batch % 2 === 0 ? writer.settle() : null; // every other batch is folded meanwhile
    let done = settling === null;
    void settling?.then(() => (done = true));
    do {
      const state = db.prepare('SELECT folding_up_to FROM metric_fold_state').get() as {
        folding_up_to: number | null;
      };
      if (state.folding_up_to !== null) folding += 1;
      const { many, single } = await both();
      assert.deepEqual(many, single, `batch ${batch}, read ${rounds}`);
      // read-your-writes: the batch's last point of a is there
      const a1m = (many[0] as Array<Array<Record<string, number>>>)[0]!;
      assert.equal(
        a1m[batch]!.n,
        Math.floor(batch / 3) + 1,
        `batch ${batch}: a at minute ${batch} holds every append`,
      );
      rounds += 1;
      await new Promise((resolve) => setImmediate(resolve));
    } while (!done);
    await settling;
  }
  assert.ok(folding > 3, `reads in the middle of folds: ${folding}`);
  assert.equal(manyRequests - before, rounds * RANGES.length, 'one writer request per multi-key read');
});

test('readMany handed appends the writer then merges and folds: as single reads, each point once', async () => {
  await writer.settle();
  const answers = new Map<string, Map<string, PendingSeries>>();
  for (const [granularity, starts] of RANGES)
    answers.set(
      granularity,
      new Map(KEYS.map((key) => [key, writer.pending('src', key, granularity, starts)])),
    );
  const later: ValidPoint[] = [];
  for (let m = 0; m < 120; m += 2) later.push(point('a', m, { n: 1, w: 3 }));
  later.push(point('c', 9, { level: 7 })); // a track on the asserted 43
  later.push(point('c', 70, { level: 3 }, { assert: true }));
  await writer.append(entriesOf(later));
  const merged = writer.pending('src', 'a', '1m', [T0]).mergedUpTo!;
  const unmerged = [{ upTo: merged, entries: entriesOf(later) }];

  /** readMany and single reads, each told the answers from before the append. */
  const readTold = async () => {
    const many: unknown[] = [];
    const single: unknown[] = [];
    for (const [granularity, starts] of RANGES) {
      told = new Map(
        [...answers.get(granularity)!].map(([key, a]) => [key, { ...a, parts: [...a.parts], unmerged }]),
      );
      try {
        const texts = await store.readMany!({ sourceId: 'src', keys: KEYS, granularity }, starts);
        many.push(texts.map((t) => t.map((x) => JSON.parse(x))));
        const one = await Promise.all(
          KEYS.map((key) => store.read({ sourceId: 'src', key, granularity }, starts)),
        );
        single.push(one.map((t) => t.map((x) => JSON.parse(x))));
      } finally {
        told = null;
      }
    }
    return { many, single };
  };

  const seen = [await readTold()];
  let folded = false;
  const settling = writer.settle().then(() => (folded = true));
  while (!folded) {
    await new Promise((resolve) => setImmediate(resolve));
    seen.push(await readTold());
  }
  await settling;
  seen.push(await readTold());
  const final = await both();
  assert.deepEqual(final.many, final.single);
  for (const [i, { many, single }] of seen.entries()) {
    assert.deepEqual(many, single, `read ${i}: readMany as single reads`);
    assert.deepEqual(many, final.many, `read ${i}: as the folded series`);
  }
  const c1m = (final.many[0] as Array<Array<Record<string, number>>>)[2]!;
  assert.equal(c1m[9]!.level, 43 + 7);
  assert.equal(c1m[70]!.level, 3);
  assert.ok(seen.length > 3, `reads during the fold: ${seen.length}`);
});
