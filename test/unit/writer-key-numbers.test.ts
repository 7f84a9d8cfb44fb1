// Merges name their keys by number (drivers/embedded/writer-protocol.ts): what the thread resolves
// is the keys the event loop logged, message after message, across the table's restarts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KeyNumbers, KeyTable } from '../../src/drivers/embedded/writer-protocol';
import type { AppendEntry } from '../../src/drivers/embedded/metric-writer';

const settings = { id: 's', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m'] };

const entry = (keys: string[]): AppendEntry => ({
  settings,
  wire: { keys, pathLists: [['v']], meta: new Float64Array(0), values: new Float64Array(0) },
});

test('keys sent as numbers resolve to the keys sent, across messages and table restarts', () => {
  const key = fc.constantFrom('a', 'b', 'cpu,host=x', 'é', '', 'a,b=c', 'k9');
  fc.assert(
    fc.property(
      fc.array(fc.array(fc.array(key, { maxLength: 6 }), { minLength: 1, maxLength: 3 }), { maxLength: 12 }),
      fc.integer({ min: 1, max: 8 }),
      (messages, max) => {
        const numbers = new KeyNumbers(max);
        const table = new KeyTable();
        for (const keysOfEntries of messages) {
          const entries = keysOfEntries.map(entry);
          // as the thread receives it: a structured clone
          const message = structuredClone({ upTo: 1, ...numbers.number(entries) });
          const resolved = table.resolve(message);
          assert.deepEqual(
            resolved.map((e) => e.wire.keys),
            keysOfEntries,
          );
          assert.ok(resolved.every((e) => !('keyNumbers' in e.wire)));
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
