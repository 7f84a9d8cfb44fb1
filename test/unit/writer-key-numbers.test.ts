// Merges name their keys by number (drivers/embedded/writer-protocol.ts): what the thread resolves
// is the keys the event loop logged, message after message, across the table's restarts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KeyNumbers, KeyTable } from '../../src/drivers/embedded/writer-protocol';
import type { AppendEntry } from '../../src/drivers/embedded/metric-writer';
import { IngestWindow } from '../../src/model/window/window';
import { planFor } from '../../src/domain/metrics/merge';
import type { WriteSet } from '../../src/model/write-set';
import { parseLineProtocol } from '../../src/intake/line-protocol';
import { mapLineWire } from '../../src/intake/line-wire';
import { hash53 } from '../../src/lib/key-hash';

const settings = { id: 's', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m'] };

const entry = (keys: string[]): AppendEntry => ({
  settings,
  wire: { keys, pathLists: [['v']], meta: new Float64Array(0), values: new Float64Array(0) },
});

/** Hashes of keys as a wire may carry them (the reader's hash53), or ones that collide often. */
const hashings: Array<((key: string) => number) | null> = [null, hash53, (key) => key.length % 3];

test('keys sent as numbers resolve to the keys sent, across messages and table restarts', () => {
  const key = fc.constantFrom('a', 'b', 'cpu,host=x', 'é', '', 'a,b=c', 'k9');
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.array(key, { maxLength: 6 }), { minLength: 1, maxLength: 3 }), { maxLength: 12 }),
      fc.integer({ min: 1, max: 8 }),
      fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 5 }),
      (messages, max, hashingOrder) => {
        const numbers = new KeyNumbers(max);
        let sent = 0;
        const table = new KeyTable();
        const named = new Map<string, string>();
        for (const keysOfEntries of messages) {
          const entries = keysOfEntries.map((keys) => {
            // wires with and without their keys' hashes, in turn
            const e = entry(keys);
            const hashing = hashings[hashingOrder[sent++ % hashingOrder.length]!]!;
            if (hashing) e.wire.keyHashes = keys.map(hashing);
            return e;
          });
          // as the thread receives it: a structured clone
          const message = structuredClone({ upTo: 1, ...numbers.number(entries) });
          const resolved = table.resolve(message);
          assert.deepEqual(
            resolved.map((e) => e.wire.keys),
            keysOfEntries,
          );
          // the numbers stay, with the table's epoch: a number names one key within an epoch
          for (const e of resolved) assert.equal(e.wire.keyNumbers!.length, e.wire.keys.length);
          for (const e of resolved) {
            e.wire.keys.forEach((k, i) => {
              const n = e.wire.keyNumbers![i]!;
              const seen = named.get(`${e.wire.keyEpoch}:${n}`);
              if (seen !== undefined) assert.equal(seen, k);
              named.set(`${e.wire.keyEpoch}:${n}`, k);
            });
          }
          // the logged entries are left as they were
          assert.deepEqual(
            entries.map((e) => e.wire.keys),
            keysOfEntries,
          );
        }
      },
    ),
  );
  // a key already known is sent as its number alone
  const numbers = new KeyNumbers();
  assert.deepEqual(numbers.number([entry(['a', 'b', 'a'])]).newKeys, ['a', 'b']);
  const again = numbers.number([entry(['b', 'c'])]);
  assert.deepEqual(again.newKeys, ['c']);
  assert.deepEqual([...again.entries[0]!.wire.keyNumbers!], [1, 2]);
  assert.deepEqual(again.entries[0]!.wire.keys, []);
});

test('a window finds keys by number as it finds them by text: the same write set', () => {
  const plan = planFor({ id: 's', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m', '1h', '1d'] });
  const key = fc.constantFrom('a', 'b', 'c', 'd', 'e');
  const body = fc.array(
    fc.tuple(key, fc.integer({ min: 0, max: 7200_000 }), fc.integer({ min: -5, max: 5 })),
    {
      minLength: 1,
      maxLength: 8,
    },
  );
  fc.assert(
    fc.property(
      fc.array(body, { minLength: 1, maxLength: 10 }),
      fc.integer({ min: 1, max: 6 }),
      (bodies, max) => {
        const plain = new IngestWindow();
        const numbered = new IngestWindow();
        const numbers = new KeyNumbers(max);
        const table = new KeyTable();
        for (const lines of bodies) {
          const text = lines.map(([k, at, v]) => `m,k=${k} v=${v} ${at}`).join('\n');
          const wire = mapLineWire(parseLineProtocol(text, { precision: 'ms' }), { nowMs: 0 }).wires[0]!;
          plain.add(plan, wire);
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

test('keys found by their hashes keep their numbers as the table grows and starts over', () => {
  const numbers = new KeyNumbers(6_000);
  const table = new KeyTable();
  const keys = Array.from({ length: 9_000 }, (_, i) => `cpu,host=h${i}`);
  for (let round = 0; round < 4; round++) {
    for (let from = 0; from < keys.length; from += 1_000) {
      const slice = keys.slice(from, from + 1_000);
      const e = entry(slice);
      if ((from / 1_000 + round) % 3 !== 0) e.wire.keyHashes = slice.map(hash53);
      const resolved = table.resolve(structuredClone({ upTo: 1, ...numbers.number([e]) }));
      assert.deepEqual(resolved[0]!.wire.keys, slice);
    }
  }
});
