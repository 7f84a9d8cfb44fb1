// The outbox's back-off: doubling per attempt from the base, capped, with +-50% jitter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { backoffMs } from '../../src/domain/alerts/outbox';

test('back-off doubles per attempt up to the cap, jittered between half and one and a half times', () => {
  const mid = () => 0.5;
  assert.deepEqual(
    [1, 2, 3, 4, 12].map((n) => backoffMs(n, 5000, 60_000, mid)),
    [5000, 10_000, 20_000, 40_000, 60_000],
  );
  assert.equal(
    backoffMs(3, 5000, 60_000, () => 0),
    10_000,
  );
  assert.equal(
    backoffMs(3, 5000, 60_000, () => 0.999999),
    Math.round(20_000 * 1.499999),
  );
});
