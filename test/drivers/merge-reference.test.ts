// The fast write path (the metric writer's groups and rows, group commits, the write log, folds in
// short transactions, the embedded store's bucket rows and per-key counts, and reads that add what
// is not folded yet) against a plain reference: for each point in order, for each granularity, add
// or set each leaf of its bucket; count it in the system key. Random points from fast-check, cut
// at random into requests, with folds of random size and reads at random moments. Some of them are
// pairs (a track and an assert in one wire point, as the line protocol writes, model/wire.ts), whose
// leaves overlap other points' leaves: the reference takes a pair as its two points.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createEmbeddedStore } from '../../src/drivers/embedded/store';
import { parsePoint, type ValidPoint } from '../../src/domain/metrics/ingest/points';
import { SYSTEM_KEY, planFor } from '../../src/domain/metrics/merge';
import { createWriteQueue } from '../../src/domain/metrics/write-queue';
import { inProcessWriter } from '../../src/drivers/embedded/writer-client';
import type { MetricStore } from '../../src/drivers/types';
import {
  KEY_UNIT,
  LIST_UNIT,
  UNTRACKED_FLAG,
  encodePoints,
  type WirePoints,
} from '../../src/model/point-wire';
import { PathSplitter, nestLeaves } from '../../src/model/leaves';
import { embeddedFactory } from './helpers';

const source = {
  id: 's1',
  timeZone: 'Europe/Bratislava',
  beginningOfWeek: 1,
  granularities: ['1m', '15m', '1h', '1d', '1w', '1mo'],
};
const plan = planFor(source);
const T0 = Date.UTC(2025, 2, 30, 0, 40); // spans the spring DST change in the zone
const PATHS = ['n', 'amount.net', 'amount.tax'];

/** A pair's leaves: tracked, then asserted (each list in PATHS' order, as a point's paths are). */
const PAIR_SPLITS: Array<[string[], string[]]> = [
  [['n', 'amount.net'], ['amount.tax']],
  [['n'], ['amount.net', 'amount.tax']],
  [['amount.net', 'amount.tax'], ['n']],
  [['amount.tax'], ['n']],
];

interface RawPoint {
  key: string;
  minute: number;
  assert: boolean;
  untracked: boolean;
  values: number[];
  /** >= 0: a pair of PAIR_SPLITS[pair] (then `assert` is ignored) */
  pair: number;
}

const rawPointOver = (keys: string[], minutes: number) =>
  fc.record({
    key: fc.constantFrom(...keys),
    minute: fc.integer({ min: 0, max: minutes }),
    assert: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
    untracked: fc.boolean(),
    values: fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 3, maxLength: 3 }),
    pair: fc.integer({ min: -PAIR_SPLITS.length, max: PAIR_SPLITS.length - 1 }).map((n) => Math.max(-1, n)),
  });
const rawPoint = rawPointOver(['a', 'b', 'c.d', 'e'], 300);
/** few keys and buckets: points of one key meet in a bucket, pairs of other splits between them */
const densePoint = rawPointOver(['a', 'b'], 2);

function point(
  r: RawPoint,
  paths: readonly string[],
  values: readonly number[],
  assert: boolean,
): ValidPoint {
  const leaves: Record<string, number> = {};
  paths.forEach((path, i) => (leaves[path] = values[i]!));
  return parsePoint({
    key: r.key,
    at: new Date(T0 + r.minute * 60_000 + 7_000).toISOString(),
    operation: assert ? 'assert' : 'track',
    untracked: r.untracked,
    values: leaves,
  });
}

/** The points a raw point stands for: a pair is its track, then its assert. */
function toPoints(r: RawPoint): ValidPoint[] {
  if (r.pair < 0) return [point(r, PATHS.slice(0, 1 + (Math.abs(r.values[0]!) % 3)), r.values, r.assert)];
  const [tracked, asserted] = PAIR_SPLITS[r.pair]!;
  return [point(r, tracked, r.values, false), point(r, asserted, r.values.slice(tracked.length), true)];
}

/** A request as the wire the write path takes: plain points as encodePoints spells them, pairs as one point each. */
function toWire(raws: readonly RawPoint[]): WirePoints {
  const plain = encodePoints(raws.flatMap((r) => (r.pair < 0 ? toPoints(r) : [])));
  const keys = plain.keys.slice();
  const pathLists = plain.pathLists.slice();
  const assertFrom = pathLists.map((l) => l.length);
  const meta: number[] = [];
  const values: number[] = [];
  let p = 0;
  let v = 0;
  for (const r of raws) {
    if (r.pair < 0) {
      const packed = plain.meta[2 * p + 1]!;
      const k = Math.floor(packed / KEY_UNIT);
      const list = Math.floor((packed - k * KEY_UNIT) / LIST_UNIT);
      meta.push(plain.meta[2 * p]!, packed);
      for (let j = 0; j < plain.pathLists[list]!.length; j++) values.push(plain.values[v++]!);
      p++;
      continue;
    }
    const [tracked, asserted] = PAIR_SPLITS[r.pair]!;
    let k = keys.indexOf(r.key);
    if (k < 0) k = keys.push(r.key) - 1;
    const paths = [...tracked, ...asserted];
    let list = pathLists.findIndex((l, i) => assertFrom[i] === tracked.length && l.join() === paths.join());
    if (list < 0) {
      list = pathLists.push(paths) - 1;
      assertFrom.push(tracked.length);
    }
    const [first] = toPoints(r);
    meta.push(first!.atMs, k * KEY_UNIT + list * LIST_UNIT + (r.untracked ? UNTRACKED_FLAG : 0));
    values.push(...r.values.slice(0, paths.length));
  }
  return { keys, pathLists, meta: Float64Array.from(meta), values: Float64Array.from(values), assertFrom };
}

/** key -> granularity -> bucket -> path -> value, the obvious way. */
function reference(
  points: readonly ValidPoint[],
): Map<string, Map<string, Map<number, Map<string, number>>>> {
  const out = new Map<string, Map<string, Map<number, Map<string, number>>>>();
  const leaf = (key: string, g: string, bucket: number) => {
    const byG = out.get(key) ?? out.set(key, new Map()).get(key)!;
    const byBucket = byG.get(g) ?? byG.set(g, new Map()).get(g)!;
    return byBucket.get(bucket) ?? byBucket.set(bucket, new Map()).get(bucket)!;
  };
  for (const p of points) {
    for (const g of plan.granularities) {
      const bucket = g.bucketer(p.atMs);
      const values = leaf(p.key, g.text, bucket);
      p.paths.forEach((path, i) =>
        values.set(path, p.assert ? p.values[i]! : (values.get(path) ?? 0) + p.values[i]!),
      );
      const system = leaf(SYSTEM_KEY, g.text, bucket);
      system.set('count', (system.get('count') ?? 0) + 1);
      const counted = `keys.${p.untracked ? '__untracked__' : p.key}`;
      system.set(counted, (system.get(counted) ?? 0) + 1);
    }
  }
  return out;
}

/** Every series of the reference reads back from the store as the reference computes it. */
async function assertStored(store: MetricStore, points: readonly ValidPoint[], when: string): Promise<void> {
  const splitter = new PathSplitter();
  for (const [key, byG] of reference(points)) {
    for (const [granularity, byBucket] of byG) {
      const starts = [...byBucket.keys()].sort((a, b) => a - b);
      const stored = await store.read({ sourceId: source.id, key, granularity }, starts);
      const expected = starts.map((b) => nestLeaves(byBucket.get(b)!, splitter));
      assert.deepEqual(
        stored.map((t) => JSON.parse(t)),
        expected,
        `${key} ${granularity} ${when}`,
      );
    }
  }
}

type Step = 'none' | 'read' | 'fold' | 'fold+read';

test('the write path stores what the reference computes, for any cut into requests, folds and reads', () =>
  property(rawPoint));

test('the same with points of few keys and buckets', () => property(densePoint));

async function property(raw: fc.Arbitrary<RawPoint>): Promise<void> {
  await fc.assert(
    fc.asyncProperty(
      fc.array(raw, { minLength: 1, maxLength: 120 }),
      fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 30 }),
      fc.array(fc.constantFrom<Step>('none', 'none', 'read', 'fold', 'fold+read'), {
        minLength: 1,
        maxLength: 30,
      }),
      fc.integer({ min: 1, max: 40_000 }),
      async (raws, cuts, steps, foldAtBytes) => {
        const fixture = embeddedFactory.create();
        // chunkMs 0: every fold commits in transactions of a few rows, reads fall between them
        const writer = inProcessWriter({ db: fixture.db!, foldAfterMs: 60_000, foldAtBytes, chunkMs: 0 });
        const store = createEmbeddedStore(fixture.db!, writer);
        const queue = createWriteQueue({ maxPendingPoints: 1_000_000 });
        try {
          const points = raws.flatMap(toPoints);
          let at = 0;
          let done = 0; // points of the raw points sent
          for (let r = 0; at < raws.length; r++) {
            const request = raws.slice(at, (at += cuts[r % cuts.length]!));
            const count = request.reduce((n, raw) => n + (raw.pair < 0 ? 1 : 2), 0);
            done += count;
            // requests holding pairs go as wires (as the line protocol's), the others as points
            const acked = request.some((raw) => raw.pair >= 0)
              ? queue.enqueue(store, count, { settings: source, wire: toWire(request) })
              : queue.enqueue(store, count, { settings: source, points: request.flatMap(toPoints) });
            const step = steps[r % steps.length]!;
            if (step === 'none') continue;
            await acked;
            const folded = step.startsWith('fold') ? writer.settle() : Promise.resolve();
            if (step.endsWith('read'))
              await assertStored(store, points.slice(0, done), `after request ${r} (${step})`);
            await folded;
          }
          await queue.flush();
          await assertStored(store, points, 'at the end').catch((err: unknown) => {
            if (process.env.MR_SEED) console.error(err);
            throw err;
          });
        } finally {
          await queue.close();
          await writer.close();
          await fixture.dispose();
        }
      },
    ),
    {
      numRuns: 40,
      ...(process.env.MR_SEED
        ? { seed: Number(process.env.MR_SEED), path: process.env.MR_PATH, endOnFailure: true, verbose: 2 }
        : {}),
    },
  );
}
