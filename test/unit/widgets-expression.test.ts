// The expression rows' parser and evaluator: precedence, functions, null propagation, and refusals.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { evaluate, expressionProblem, parseExpression, rowLetter } from '../../src/shared/expression';

const calc = (text: string, env: Record<string, number | null> = {}, rows = 3) =>
  evaluate(parseExpression(text, rows), env);

describe('expression rows', () => {
  test('rows are named a, b, c ... z, aa', () => {
    assert.deepEqual([0, 1, 2, 25, 26, 27].map(rowLetter), ['a', 'b', 'c', 'z', 'aa', 'ab']);
  });

  test('arithmetic with precedence, parentheses, unary minus and decimals', () => {
    assert.equal(calc('a + b * c', { a: 1, b: 2, c: 3 }), 7);
    assert.equal(calc('(a + b) * c', { a: 1, b: 2, c: 3 }), 9);
    assert.equal(calc('a - b - c', { a: 10, b: 2, c: 3 }), 5);
    assert.equal(calc('a / b / 2', { a: 12, b: 3 }), 2);
    assert.equal(calc('-a + 2.5', { a: 1 }), 1.5);
    assert.equal(calc('a * 100 / (a + b)', { a: 1, b: 3 }), 25);
    assert.equal(calc('  a+b ', { a: 1, b: 1 }), 2);
  });

  test('functions: sum, mean, avg, min, max, sqrt', () => {
    const env = { a: 4, b: 9, c: 2 };
    assert.equal(calc('sum(a, b, c)', env), 15);
    assert.equal(calc('mean(a, b, c)', env), 5);
    assert.equal(calc('avg(a, c)', env), 3);
    assert.equal(calc('min(a, b, c)', env), 2);
    assert.equal(calc('max(a, b, c)', env), 9);
    assert.equal(calc('sqrt(b) + sqrt(a)', env), 5);
    assert.equal(calc('max(a, b * 2) - min(1, c)', env), 17);
  });

  test('a missing input, a division by zero or a square root of a negative gives null', () => {
    assert.equal(calc('a + b', { a: 1, b: null }), null);
    assert.equal(calc('a + b', { a: 1 }), null);
    assert.equal(calc('a / b', { a: 1, b: 0 }), null);
    assert.equal(calc('a / (b - b)', { a: 1, b: 5 }), null);
    assert.equal(calc('sum(a, b)', { a: 1, b: null }), null);
    assert.equal(calc('sqrt(a)', { a: -4 }), null);
    assert.equal(calc('0 / a', { a: 2 }), 0);
    // an input that is not a finite number is no figure, even alone (found by widgets-fuzz.test.ts)
    assert.equal(calc('a', { a: Number.POSITIVE_INFINITY }), null);
    assert.equal(calc('-a', { a: Number.NEGATIVE_INFINITY }), null);
    assert.equal(calc('a', { a: Number.NaN }), null);
  });

  test('only earlier rows may be named', () => {
    assert.equal(expressionProblem('a + b', 2), null);
    assert.match(expressionProblem('a + c', 2)!, /Unknown variable c/);
    assert.match(expressionProblem('a', 0)!, /Unknown variable a/);
  });

  test('malformed text is refused with a message, never evaluated', () => {
    const cases: Array<[string, RegExp]> = [
      ['', /empty/],
      ['a +', /end of expression/],
      ['(a + b', /closing parenthesis/],
      ['a b', /Unexpected "b"/],
      ['a $ b', /Unexpected character "\$"/],
      ['pow(a, 2)', /Unknown function pow/],
      ['sqrt(a, b)', /one argument/],
      ['max()', /at least one argument/],
      ['constructor', /Unknown variable/],
      ['a.b', /Invalid number|Unexpected/],
      ['process.exit(1)', /Invalid number/],
      ['('.repeat(100) + 'a' + ')'.repeat(100), /nested too deeply/],
      ['a + '.repeat(300) + 'a', /longer than/],
    ];
    for (const [text, message] of cases) assert.match(expressionProblem(text, 2) ?? 'parsed', message, text);
  });
});
