// OverflowGuard.needsCheckWire's scan of a wire's values: a large value (or an infinite one)
// anywhere sends the wire through the checked lane, small ones never do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LARGE, OverflowGuard } from '../../src/domain/metrics/ingest/overflow';
import type { WirePoints } from '../../src/model/wire';

const wire = (values: number[]): WirePoints => ({
  keys: ['k'],
  pathLists: [['v']],
  meta: new Float64Array([0, 0]),
  values: new Float64Array(values),
});

test('needsCheckWire finds a large value at any place of the values', () => {
  const guard = new OverflowGuard();
  for (let length = 0; length <= 13; length++) {
    const small = Array.from({ length }, (_, i) => (i % 2 ? -1 : 1) * (LARGE / 2 + i));
    assert.equal(guard.needsCheckWire('s', wire(small)), false, `length ${length}`);
    for (let at = 0; at < length; at++) {
      for (const large of [LARGE, -LARGE, Infinity, -Infinity, Number.MAX_VALUE]) {
        const values = small.slice();
        values[at] = large;
        assert.equal(guard.needsCheckWire('s', wire(values)), true, `${large} at ${at} of ${length}`);
      }
    }
  }
  assert.equal(guard.needsCheckWire('s', wire([-0, 0, 1e290, -1e290, 5])), false);
});
