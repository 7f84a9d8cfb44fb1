// A start replays the write log's records into one window and folds it (embedded/metric-writer.ts
// recover). For a wide key, whose points keep bringing new leaf names into one bucket, merging
// (model/window/rows.ts Shapes) and folding (model/bucket-shape.ts) used to cost work growing with
// the square of the row's width (issue 27: a replay of about 128,000 leaves took far longer than a
// minute). The work is counted (paths read, copied or looked up: Shapes.steps and
// ShapeRegistry.steps), not timed: ten times the leaves must cost about ten times the work.
// Timings: bench/replay-wide.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePoint } from '../../src/domain/metrics/ingest/points';
import { ShapeRegistry, applyToBucket, parseBucket, renderBucket } from '../../src/model/bucket-shape';
import { encodePoints } from '../../src/model/point-wire';
import { PlanCache } from '../../src/model/plan';
import { IngestWindow } from '../../src/model/window/window';

const settings = {
  id: 'src',
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: ['1m', '1h', '1d', '1w', '1mo', '1y'],
};
const AT = '2026-01-24T10:00:00Z';

/** One point per record, `fresh` new leaf names each (and `n`), all in one bucket. */
function records(leaves: number, fresh: number) {
  return Array.from({ length: Math.ceil(leaves / fresh) }, (_, i) => {
    const values: Record<string, number> = { n: 1 };
    for (let j = 0; j < fresh; j++) values[`grp_${i}.leaf_${j}`] = j + 1;
    return encodePoints([parsePoint({ key: 'wide', at: AT, values })]);
  });
}

/**
 * Replays the records as a start does, in `windows` windows (a fold after each: the second fold
 * grows the stored bucket), and returns the work counted and the 1h bucket's text.
 */
function replay(leaves: number, fresh: number, windows: number): { steps: number; text: string } {
  const list = records(leaves, fresh);
  const plans = new PlanCache();
  const registry = new ShapeRegistry();
  const stored = new Map<string, string>();
  let steps = 0;
  const per = Math.ceil(list.length / windows);
  for (let from = 0; from < list.length; from += per) {
    const window = new IngestWindow();
    for (const wire of list.slice(from, from + per)) window.add(plans.get(settings), wire);
    window.spreadAll();
    for (let r = 0; r < window.rows.count; r++) {
      const delta = window.rows.delta(r);
      const name = `${window.seriesSlot[window.rows.series[r]!]}`;
      const bucket = applyToBucket(
        parseBucket(stored.get(name), registry),
        delta,
        registry.of(delta.paths),
        registry,
      );
      stored.set(name, renderBucket(bucket));
    }
    steps += window.shapes.steps;
  }
  return { steps: steps + registry.steps, text: stored.get('1')! };
}

for (const [fresh, windows] of [
  [10, 1],
  [10, 2],
  [100, 1],
] as const) {
  test(`a wide key replays in work linear in its leaves (${fresh} new leaves per record, ${windows} fold${windows > 1 ? 's' : ''})`, () => {
    const small = replay(1_000, fresh, windows);
    const large = replay(10_000, fresh, windows);
    const stored = JSON.parse(large.text) as { n: number } & Record<string, Record<string, number>>;
    assert.equal(stored.n, 10_000 / fresh, 'every record counted once');
    assert.equal(Object.keys(stored).length, 1 + 10_000 / fresh);
    assert.equal(stored[`grp_${10_000 / fresh - 1}`]![`leaf_${fresh - 1}`], fresh);
    const ratio = large.steps / small.steps;
    // linear: 10; the square of the width: about 100
    assert.ok(
      ratio < 15,
      `10x the leaves cost ${ratio.toFixed(1)}x the work (${small.steps} -> ${large.steps})`,
    );
  });
}
