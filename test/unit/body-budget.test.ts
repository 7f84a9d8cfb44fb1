// The server-wide body budget: charges add up across requests, a charge past the cap is a 503
// with Retry-After, and closing a request gives back exactly what it took.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors';
import { createBodyBudget } from '../../src/http/middleware/body-budget';

test('charges add up over requests; past the cap 503 + Retry-After; close gives back what was taken', () => {
  const budget = createBodyBudget(1000);
  const a = budget.open();
  const b = budget.open();
  a.take(600);
  b.take(400);
  assert.equal(budget.used, 1000);
  assert.throws(
    () => b.take(1),
    (err: unknown) => err instanceof AppError && err.status === 503 && err.options.retryAfter === 1,
  );
  assert.equal(budget.used, 1000, 'a refused charge takes nothing');
  a.close();
  a.close(); // twice is harmless
  assert.equal(budget.used, 400);
  a.take(1000); // a closed charge no longer takes
  assert.equal(budget.used, 400);
  b.close();
  assert.equal(budget.used, 0);
});
