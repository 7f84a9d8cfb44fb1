// The fast write path (the metric writer's groups and rows, group commits, the write log, folds in
// short transactions, the embedded store's bucket rows and per-key counts, and reads that add what
// is not folded yet) against a plain reference: for each point in order, for each granularity, add
// or set each leaf of its bucket; count it in the system key. Random points from fast-check, cut
// at random into requests, with folds of random size and reads at random moments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createEmbeddedStore } from '../../src/drivers/embedded/store';
import { parsePoint, type ValidPoint } from '../../src/domain/metrics/ingest/points';
import { SYSTEM_KEY, planFor } from '../../src/domain/metrics/merge';
import { createWriteQueue } from '../../src/domain/metrics/write-queue';
import { inProcessWriter } from '../../src/drivers/embedded/writer-client';
import type { MetricStore } from '../../src/drivers/types';
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

interface RawPoint {
  key: string;
  minute: number;
  assert: boolean;
  untracked: boolean;
  values: number[];
}

const rawPoint = fc.record({
  key: fc.constantFrom('a', 'b', 'c.d', 'e'),
  minute: fc.integer({ min: 0, max: 300 }),
  assert: fc.integer({ min: 0, max: 9 }).map((n) => n < 2),
  untracked: fc.boolean(),
  values: fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 3 }),
});

function toPoint(r: RawPoint): ValidPoint {
  const values: Record<string, number> = {};
  r.values.forEach((v, i) => (values[PATHS[i]!] = v));
  return parsePoint({
    key: r.key,
    at: new Date(T0 + r.minute * 60_000 + 7_000).toISOString(),
    operation: r.assert ? 'assert' : 'track',
    untracked: r.untracked,
    values,
  });
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

test('the write path stores what the reference computes, for any cut into requests, folds and reads', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(rawPoint, { minLength: 1, maxLength: 120 }),
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
          const points = raws.map(toPoint);
          let at = 0;
          for (let r = 0; at < points.length; r++) {
            const request = points.slice(at, (at += cuts[r % cuts.length]!));
            const acked = queue.enqueue(store, request.length, { settings: source, points: request });
            const step = steps[r % steps.length]!;
            if (step === 'none') continue;
            await acked;
            const folded = step.startsWith('fold') ? writer.settle() : Promise.resolve();
            if (step.endsWith('read'))
              await assertStored(store, points.slice(0, at), `after request ${r} (${step})`);
            await folded;
          }
          await queue.flush();
          await assertStored(store, points, 'at the end');
        } finally {
          await queue.close();
          await writer.close();
          await fixture.dispose();
        }
      },
    ),
    { numRuns: 40 },
  );
});
