// The exact decimal sum `service migrate` compares with PostgreSQL's sum(numeric).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DecimalSum, normalizeDecimal } from '../../src/lib/decimal-sum';

const sum = (values: number[]) => {
  const s = new DecimalSum();
  for (const v of values) s.add(v);
  return s.toString();
};

describe('DecimalSum', () => {
  test('adds the decimals the doubles spell, without rounding', () => {
    assert.equal(sum([]), '0');
    assert.equal(sum([0.1, 0.2]), '0.3'); // 0.1 + 0.2 is 0.30000000000000004 in doubles
    assert.equal(sum([1e21, 1e-7]), '1000000000000000000000.0000001');
    assert.equal(sum([1.5e300, 1]), `15${'0'.repeat(298)}1`);
    assert.equal(sum([-2.5, 1, 0.25]), '-1.25');
    assert.equal(sum([5e-324, -5e-324]), '0');
    assert.equal(sum([-0, 3]), '3');
    assert.equal(sum([1 / 3]), '0.3333333333333333');
  });

  test('refuses what JSON cannot spell', () => {
    assert.throws(() => sum([Number.NaN]), /not a finite number/);
    assert.throws(() => sum([Infinity]), /not a finite number/);
  });

  test('normalizeDecimal reads PostgreSQL numeric text the same way', () => {
    assert.equal(normalizeDecimal('0.50'), '0.5');
    assert.equal(normalizeDecimal('12.000'), '12');
    assert.equal(normalizeDecimal('-0.000'), '0');
    assert.equal(normalizeDecimal('007.10'), '7.1');
    assert.equal(normalizeDecimal('-3'), '-3');
  });
});
