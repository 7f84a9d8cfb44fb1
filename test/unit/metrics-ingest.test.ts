import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError, toHttp } from '../../src/errors';
import { MAX_BATCH_POINTS, parseBatch, parsePoint } from '../../src/domain/metrics/ingest/points';

const AT = '2025-03-04T10:20:30Z';
const ok = { key: 'orders', at: AT, values: { count: 1 } };

function nest(depth: number): Record<string, unknown> {
  let node: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) node = { n: node };
  return node;
}

function manyLeaves(n: number): Record<string, number> {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));
}

/** The HTTP answer an error thrown by fn maps to. */
function answer(fn: () => unknown): { status: number; errors: Record<string, unknown> } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    const http = toHttp(err);
    return { status: http.status, errors: http.body.errors };
  }
  assert.fail('expected a throw');
}

describe('parsePoint: 400 when the point cannot be read', () => {
  const cases: Array<[string, unknown, string]> = [
    ['body an array', [ok], 'Request body must be a JSON object'],
    ['body null', null, 'Request body must be a JSON object'],
    ['key missing', { at: AT, values: { a: 1 } }, 'key is required'],
    ['key a number', { key: 5, at: AT, values: { a: 1 } }, 'key must be'],
    ['key empty', { key: '', at: AT, values: { a: 1 } }, 'key must be'],
    ['key of 256 characters', { key: 'k'.repeat(256), at: AT, values: { a: 1 } }, 'key must be'],
    ['at missing', { key: 'k', values: { a: 1 } }, 'at is required'],
    ['at without offset', { key: 'k', at: '2025-03-04T10:20:30', values: { a: 1 } }, 'at must be'],
    ['at impossible date', { key: 'k', at: '2025-02-30T00:00:00Z', values: { a: 1 } }, 'at must be'],
    ['at a number', { key: 'k', at: 1735689600, values: { a: 1 } }, 'at must be'],
    ['values missing', { key: 'k', at: AT }, 'values is required'],
    ['values an array', { key: 'k', at: AT, values: [1] }, 'values must be an object'],
    ['values a string', { key: 'k', at: AT, values: 'x' }, 'values must be an object'],
    ['values null', { key: 'k', at: AT, values: null }, 'values must be an object'],
  ];
  for (const [name, body, detail] of cases) {
    test(name, () => {
      const { status, errors } = answer(() => parsePoint(body));
      assert.equal(status, 400);
      assert.match(String(errors.detail), new RegExp(`^${detail}`));
    });
  }

  test('a 400 wins over a 422 in the same body', () => {
    assert.equal(answer(() => parsePoint({ key: 'k', at: 'nope', values: {}, operation: 'x' })).status, 400);
  });
});

describe('parsePoint: 422 naming the field', () => {
  const cases: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['values empty', { values: {} }, 'values', /at least one numeric leaf/],
    ['only empty maps', { values: { a: {} } }, 'values', /at least one numeric leaf/],
    ['string leaf names its path', { values: { a: { b: 'x' } } }, 'values', /a\.b must be a finite number/],
    ['boolean leaf', { values: { ok: true } }, 'values', /ok must be a finite number/],
    ['null leaf', { values: { n: null } }, 'values', /n must be a finite number/],
    ['array leaf', { values: { list: [1, 2] } }, 'values', /list must be a finite number/],
    ['too deep (33 levels)', { values: nest(33) }, 'values', /deeper than 32/],
    ['too many leaves', { values: manyLeaves(1001) }, 'values', /more than 1000 leaves/],
    ['operation unknown', { operation: 'increment' }, 'operation', /track or assert/],
    ['operation null', { operation: null }, 'operation', /track or assert/],
    ['untracked a string', { untracked: 'true' }, 'untracked', /boolean/],
  ];
  for (const [name, patch, field, message] of cases) {
    test(name, () => {
      const { status, errors } = answer(() => parsePoint({ ...ok, ...patch }));
      assert.equal(status, 422);
      assert.deepEqual(Object.keys(errors), [field]);
      assert.match((errors[field] as string[])[0]!, message);
    });
  }

  test('several broken fields are reported together', () => {
    const { errors } = answer(() => parsePoint({ ...ok, values: {}, operation: 'x', untracked: 1 }));
    assert.deepEqual(Object.keys(errors).sort(), ['operation', 'untracked', 'values']);
  });
});

describe('parsePoint: accepted points', () => {
  test('defaults: track, tracked; leaves flattened to dot paths', () => {
    const p = parsePoint({
      key: 'shop',
      at: '2025-03-04T11:20:30.5+01:00',
      values: { count: 2, amount: { net: 1.5, tax: 0 } },
    });
    assert.equal(p.key, 'shop');
    assert.equal(p.atMs, Date.UTC(2025, 2, 4, 10, 20, 30, 500));
    assert.equal(p.assert, false);
    assert.equal(p.untracked, false);
    assert.deepEqual(p.paths, ['count', 'amount.net', 'amount.tax']);
    assert.deepEqual(p.values, [2, 1.5, 0]);
  });

  test('assert and untracked', () => {
    const p = parsePoint({ ...ok, operation: 'assert', untracked: true });
    assert.equal(p.assert, true);
    assert.equal(p.untracked, true);
  });

  test('32 levels and 1,000 leaves are the limits, inclusive', () => {
    assert.equal(parsePoint({ ...ok, values: nest(32) }).paths[0], `${'n.'.repeat(31)}leaf`);
    assert.equal(parsePoint({ ...ok, values: manyLeaves(1000) }).paths.length, 1000);
  });

  test('a key of 255 characters, counted in code points', () => {
    assert.equal(parsePoint({ ...ok, key: '😀'.repeat(255) }).key.length, 510);
  });

  test('a dotted key and the nesting it mimics are one leaf: the later spelling wins', () => {
    const p = parsePoint({ ...ok, values: { 'a.b': 1, a: { b: 2 }, c: 3 } });
    assert.deepEqual(p.paths, ['a.b', 'c']);
    assert.deepEqual(p.values, [2, 3]);
  });

  test('a key named __proto__ is data', () => {
    const p = parsePoint({ ...ok, values: JSON.parse('{"__proto__": {"x": 4}}') });
    assert.deepEqual(p.paths, ['__proto__.x']);
  });
});

describe('parseBatch', () => {
  test('400 when points is missing or not an array', () => {
    assert.equal(answer(() => parseBatch({})).status, 400);
    assert.equal(answer(() => parseBatch({ points: {} })).status, 400);
    assert.equal(answer(() => parseBatch([ok])).status, 400);
  });

  test('422 for an empty batch and one over the limit', () => {
    assert.deepEqual(Object.keys(answer(() => parseBatch({ points: [] })).errors), ['points']);
    const big = Array.from({ length: MAX_BATCH_POINTS + 1 }, () => ok);
    assert.equal(answer(() => parseBatch({ points: big })).status, 422);
    assert.equal(parseBatch({ points: big.slice(1) }).length, MAX_BATCH_POINTS);
  });

  test('one bad point: 422 naming its index, whether the fault is a 400 or a 422 on its own', () => {
    const bad = (point: unknown) => answer(() => parseBatch({ points: [ok, ok, ok, point] }));
    assert.deepEqual(bad({ ...ok, values: { a: 'x' } }), {
      status: 422,
      errors: { 'points[3].values': ['leaf a must be a finite number'] },
    });
    assert.deepEqual(Object.keys(bad({ at: AT, values: { a: 1 } }).errors), ['points[3].key']);
    assert.deepEqual(Object.keys(bad('point').errors), ['points[3]']);
    assert.equal(bad({ ...ok, at: 'yesterday' }).status, 422);
  });

  test('valid points come back in order', () => {
    const points = parseBatch({ points: [ok, { ...ok, key: 'second', operation: 'assert' }] });
    assert.deepEqual(
      points.map((p) => [p.key, p.assert]),
      [
        ['orders', false],
        ['second', true],
      ],
    );
  });
});
