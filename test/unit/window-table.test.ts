// The metric writer window's tables of numbers (model/window/table.ts SlotTable, and the finest
// buckets' ids of model/window/window.ts WindowSource) answer as a Map would, across growth and
// restarts; a window finds the keys of several sources by number as by text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { SlotTable } from '../../src/model/window/table';
import { IngestWindow, WindowSource } from '../../src/model/window/window';
import { planFor } from '../../src/domain/metrics/merge';
import { KeyNumbers, KeyTable } from '../../src/drivers/embedded/writer-protocol';
import type { WriteSet } from '../../src/model/write-set';
import { parseLineProtocol } from '../../src/intake/line-protocol';
import { mapLineWire } from '../../src/intake/line-wire';

test('a slot table answers as a Map: dense values (add), values set at places (place), growth, reset', () => {
  const op = fc.oneof(
    fc.tuple(fc.constant('add' as const), fc.integer({ min: 0, max: 40 })),
    fc.tuple(
      fc.constant('place' as const),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 1e6 }),
    ),
    fc.tuple(fc.constant('find' as const), fc.integer({ min: 0, max: 40 })),
    fc.tuple(fc.constant('reset' as const)),
  );
  // keys as the window makes them: large integers, and bucket starts (negative, before 1970)
  const keyOf = (i: number) => (i % 2 === 0 ? i * 2 ** 26 + 12_345 : -i * 60_000);
  fc.assert(
    fc.property(fc.array(op, { maxLength: 200 }), fc.constantFrom(1, 2, 4, 1024), (ops, capacity) => {
      const table = new SlotTable(capacity);
      const dense = new Map<number, number>();
      const placed = new Map<number, number>();
      for (const [name, i, value] of ops) {
        if (name === 'reset') {
          table.reset();
          dense.clear();
          placed.clear();
          continue;
        }
        // a table holds either dense values (Rows) or values set by place (Groups), not both
        const key = keyOf(i!);
        if (name === 'add') {
          if (placed.has(key)) continue;
          if (!dense.has(key)) dense.set(key, dense.size + placed.size);
          assert.equal(table.add(key), dense.get(key));
        } else if (name === 'place') {
          if (dense.has(key)) continue;
          const at = table.place(key);
          assert.equal(table.valueAt(at), placed.get(key) ?? -1);
          table.setValue(at, value!);
          placed.set(key, value!);
        } else assert.equal(table.find(key), dense.get(key) ?? placed.get(key) ?? -1);
        assert.equal(table.size, dense.size + placed.size);
      }
      for (const [key, value] of [...dense, ...placed]) assert.equal(table.find(key), value);
    }),
    { numRuns: 300 },
  );
  // a key placed and not given a value yet has none, and does not hide the keys after it
  const table = new SlotTable(2);
  const at = table.place(7);
  assert.equal(table.valueAt(at), -1);
  assert.equal(table.find(7), -1);
  assert.equal(table.add(9), 1);
  assert.equal(table.find(9), 1);
});

/** A source's ids of `n` finest buckets from 2026 on, each checked against its bucketers. */
function finestIds(
  granularities: string[],
  n: number,
): { source: WindowSource; starts: number[]; ids: number[] } {
  const plan = planFor({ id: 's', timeZone: 'UTC', beginningOfWeek: 1, granularities });
  const source = new WindowSource(plan);
  const finest = plan.granularities[plan.finest]!;
  const starts: number[] = [];
  for (let start = finest.bucketer(Date.UTC(2026, 0, 1)); starts.length < n; start = finest.next(start))
    starts.push(start);
  const ids = starts.map((start) => source.finestIdOf(start));
  ids.forEach((id, i) => {
    const start = starts[i]!;
    const last = finest.next(start) - 1;
    if (!plan.granularities.every((g) => g.bucketer(start) === g.bucketer(last))) return assert.equal(id, -1);
    const vector = source.vectorById[id]!;
    assert.equal(vector[plan.finest], id);
    plan.granularities.forEach((g, slot) =>
      assert.equal(source.starts[vector[slot]!], g.bucketer(start), `${g.text} of ${start}`),
    );
  });
  return { source, starts, ids };
}

test("a source's finest buckets: ids whose vectors hold every granularity's bucket, -1 where they differ", () => {
  // weeks cross months: some have no vector
  const { source, starts, ids } = finestIds(['1mo', '1w'], 300);
  assert.ok(ids.some((id) => id < 0) && ids.some((id) => id >= 0));
  // asked again (the last one remembered, the others from the table)
  starts.forEach((start, i) => assert.equal(source.finestIdOf(start), ids[i]));
});

test("a source's finest buckets past the table's limit (50,000): it starts over, the ids stay", () => {
  const { source, starts, ids } = finestIds(['1m', '1h', '1d'], 60_000);
  for (let i = 0; i < 100; i++) assert.equal(source.finestIdOf(starts[i]!), ids[i]);
  for (let i = starts.length - 1; i > starts.length - 100; i--)
    assert.equal(source.finestIdOf(starts[i]!), ids[i]);
});

test('a window finds the keys of several sources by number as by text: the same write set', () => {
  const plans = ['s1', 's2'].map((id) =>
    planFor({ id, timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m', '1h'] }),
  );
  const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
  const body = fc.tuple(
    fc.integer({ min: 0, max: 1 }),
    fc.array(fc.tuple(key, fc.integer({ min: 0, max: 7200_000 }), fc.integer({ min: -5, max: 5 })), {
      minLength: 1,
      maxLength: 6,
    }),
  );
  fc.assert(
    fc.property(
      fc.array(body, { minLength: 1, maxLength: 12 }),
      fc.integer({ min: 1, max: 12 }),
      (bodies, max) => {
        const plain = new IngestWindow();
        const numbered = new IngestWindow();
        // one table of numbers for every source, as on the writer's thread: each source's keys are
        // some of the numbers, not the first ones
        const numbers = new KeyNumbers(max);
        const table = new KeyTable();
        for (const [s, lines] of bodies) {
          const plan = plans[s]!;
          const text = lines.map(([k, at, v]) => `m,k=${s}${k} v=${v} ${at}`).join('\n');
          const wire = mapLineWire(parseLineProtocol(text, { precision: 'ms' }), { nowMs: 0 }).wires[0]!;
          plain.add(plan, wire);
          const settings = {
            id: plan.sourceId,
            timeZone: 'UTC',
            beginningOfWeek: 1,
            granularities: ['1m', '1h'],
          };
          const [entry] = table.resolve(structuredClone(numbers.number([{ settings, wire }])));
          numbered.add(plan, entry!.wire);
        }
        const a: WriteSet = { sources: new Map() };
        const b: WriteSet = { sources: new Map() };
        plain.toWriteSet(a);
        numbered.toWriteSet(b);
        assert.deepEqual(b, a);
      },
    ),
    { numRuns: 300 },
  );
});
