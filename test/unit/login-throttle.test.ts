// The login throttle: free failures, then a doubling block per email, reset by a success.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createLoginThrottle } from '../../src/domain/login-throttle';

const T0 = 1_800_000_000_000;

function fail(throttle: ReturnType<typeof createLoginThrottle>, email: string, times: number, now = T0): void {
  for (let i = 0; i < times; i++) throttle.recordFailure(email, now);
}

describe('login throttle', () => {
  test('four failures are free; the fifth blocks for one second', () => {
    const t = createLoginThrottle();
    fail(t, 'a@x.io', 4);
    assert.equal(t.retryAfter('a@x.io', T0), 0);
    fail(t, 'a@x.io', 1);
    assert.equal(t.retryAfter('a@x.io', T0), 1);
    assert.equal(t.retryAfter('a@x.io', T0 + 999), 1);
    assert.equal(t.retryAfter('a@x.io', T0 + 1_000), 0);
  });

  test('each further failure doubles the block, rounded up to whole seconds, capped at 15 minutes', () => {
    const t = createLoginThrottle();
    fail(t, 'b@x.io', 5);
    fail(t, 'b@x.io', 1);
    assert.equal(t.retryAfter('b@x.io', T0), 2);
    fail(t, 'b@x.io', 1);
    assert.equal(t.retryAfter('b@x.io', T0), 4);
    assert.equal(t.retryAfter('b@x.io', T0 + 3_500), 1);
    fail(t, 'b@x.io', 30);
    assert.equal(t.retryAfter('b@x.io', T0), 900);
  });

  test('emails are compared without letter case and kept apart from each other', () => {
    const t = createLoginThrottle();
    fail(t, 'Mixed@X.io', 5);
    assert.equal(t.retryAfter('mixed@x.io', T0), 1);
    assert.equal(t.retryAfter('MIXED@X.IO', T0), 1);
    assert.equal(t.retryAfter('other@x.io', T0), 0);
  });

  test('a success forgets the failures', () => {
    const t = createLoginThrottle();
    fail(t, 'c@x.io', 5);
    t.recordSuccess('C@x.io');
    assert.equal(t.retryAfter('c@x.io', T0), 0);
    fail(t, 'c@x.io', 4);
    assert.equal(t.retryAfter('c@x.io', T0), 0);
  });

  test('memory is bounded: past 10,000 emails the least recently failed one is forgotten', () => {
    const t = createLoginThrottle();
    fail(t, 'first@x.io', 5);
    for (let i = 0; i < 9_999; i++) t.recordFailure(`spray-${i}@x.io`, T0);
    assert.equal(t.retryAfter('first@x.io', T0), 1);
    t.recordFailure('one-more@x.io', T0);
    assert.equal(t.retryAfter('first@x.io', T0), 0);
    fail(t, 'recent@x.io', 5);
    assert.equal(t.retryAfter('recent@x.io', T0), 1);
  });
});
