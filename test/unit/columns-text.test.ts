// The query maths reads the stores' JSON texts without parsing them where it can (domain/metrics/query/columns.ts): on
// any text, scanning it must give what parsing it and walking the maps gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type Scan, scanSeries } from '../../src/domain/metrics/query/columns';
import { MAX_PATH_DEPTH } from '../../src/model/paths';
import { MAX_SHAPE_MISSES, TextShapes } from '../../src/domain/metrics/query/text-shapes';

const plain = (scan: Scan) => ({
  availablePaths: scan.availablePaths,
  columns: scan.columns.map((c) => ({
    path: c.path,
    index: [...c.index.subarray(0, c.size)],
    value: [...c.value.subarray(0, c.size)],
  })),
});

function assertSame(texts: string[], selects: (path: string) => boolean = () => true): void {
  const parsed = texts.map((t) => JSON.parse(t) as unknown);
  assert.deepEqual(plain(scanSeries(texts, selects)), plain(scanSeries(parsed, selects)), texts.join('\n'));
}

const key = fc.oneof(
  fc.constantFrom(
    'count',
    'n',
    'amount',
    'net',
    'US',
    '200',
    '2xx',
    '__proto__',
    'a.b',
    'x"y',
    'back\\slash',
    'é',
    '',
  ),
  fc.string({ maxLength: 4 }),
);
const number = fc.oneof(
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.double({ min: 1e14, max: 1e21, noNaN: true }).map(Math.floor), // whole numbers of 15 to 21 digits
  fc.constantFrom(0, -0, 1e21, 9007199254740993, 123456789012345, 1234567890123456, 1.5e-7),
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.dictionary(
    key,
    fc.oneof(
      { depthSize: 'small' },
      number,
      number,
      tie('tree'),
      fc.constantFrom<unknown>(null, true, 'text', [1, 2]),
    ),
    { maxKeys: 5 },
  ),
}));

test('scanning texts reads what parsing them reads, for any stored value', () => {
  fc.assert(
    fc.property(
      fc.array(tree, { maxLength: 8 }),
      fc.constantFrom('', 'amount', 'count', 'a'),
      (values, prefix) => {
        assertSame(
          values.map((v) => JSON.stringify(v)),
          (path) => prefix === '' || path === prefix || path.startsWith(`${prefix}.`),
        );
      },
    ),
    { numRuns: 400 },
  );
});

test('texts the stores did not write plainly are read as JSON.parse reads them', () => {
  const deep = (n: number): string => (n === 0 ? '1' : `{"d":${deep(n - 1)}}`);
  assertSame([
    '{"a":1,"a":{"b":2}}', // a duplicate key: the last wins, as a map and not a leaf
    '{"a":{"b":2},"a":1}',
    '{"a":1,"a":2}',
    '{ "a" : 1 }', // whitespace
    '{"a":[1,2],"b":3}',
    '{"a":"1","b":null,"c":true}',
    '{"a.b":1,"a":{"b":2}}', // two spellings of one path
    '{"a":{"b":2},"a.b":1}',
    '{"x\\"y":1,"u\\u0041":2}', // escapes
    '{"n":1e400,"m":-1e400,"k":1}', // beyond a double
    '{"n":-0,"m":0.5e1,"k":1E2,"j":-12.5e-3}',
    '{"b":1,"2":2,"1":3}', // integer keys come first in a parsed map
    '{"1.5":1,"1":{"5":2}}', // ... which decides which spelling of a path is the later one
    deep(MAX_PATH_DEPTH - 1),
    deep(MAX_PATH_DEPTH),
    deep(MAX_PATH_DEPTH + 3),
    '{}',
    '{"e":{}}',
  ]);
});

test('a text that is not JSON fails as JSON.parse does', () => {
  for (const text of ['{"a":1', '{"a":1}}', '{"a":}', '{"a":-}', '{"a":1.2.3}', 'null', '[]', '']) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      assert.throws(() => scanSeries([text], () => true), SyntaxError, text);
      continue;
    }
    assert.deepEqual(plain(scanSeries([text], () => true)), plain(scanSeries([parsed], () => true)), text);
  }
});

// Buckets of one key mostly share a shape (domain/metrics/query/text-shapes.ts): the scanner matches them against the
// shapes it has learned. Variants of a few trees with other numbers, interleaved, must still read
// as parsing reads them.
const withNumbers = (value: unknown, numbers: number[], next = { i: 0 }): unknown => {
  if (typeof value === 'number') return numbers[next.i++ % numbers.length];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withNumbers(v, numbers, next)]));
};

test('buckets that share a shape read as parsing reads them', () => {
  fc.assert(
    fc.property(
      fc.array(tree, { minLength: 1, maxLength: 3 }),
      fc.array(fc.tuple(fc.nat(), fc.array(number, { minLength: 1, maxLength: 6 })), {
        minLength: 1,
        maxLength: 24,
      }),
      fc.constantFrom('', 'amount', 'count', 'a'),
      (shapes, buckets, prefix) => {
        const texts = buckets.map(([s, numbers]) =>
          JSON.stringify(withNumbers(shapes[s % shapes.length], numbers)),
        );
        assertSame(texts, (path) => prefix === '' || path === prefix || path.startsWith(`${prefix}.`));
      },
    ),
    { numRuns: 400 },
  );
});

test('a bucket that differs from a learned shape in any way is read as parsing reads it', () => {
  const shape = (a: string, b: string) => `{"m":{"a":${a},"b":${b}},"n":2}`;
  const texts = [
    shape('1', '2'), // learned
    shape('3', '4.5'),
    shape('1e400', '1'), // non-finite: not a leaf here, the other is
    shape('-1e400', '-0'),
    shape('1E2', '0.5e1'),
    shape('"1"', '2'), // a string
    shape('null', '2'),
    shape('[1]', '2'),
    shape('{"x":1}', '2'), // a map where the shape has a number
    shape(' 1', '2'), // whitespace
    shape('12345678901234567890123', '-1234567890123456'), // digits past a double's exact range
    '{"m":{"a":1,"b":2},"n":2,"o":3}', // a key more
    '{"m":{"b":2,"a":1},"n":2}', // another order
    '{"m":{"a":1,"a":2},"n":2}', // a duplicate key
    '{"m":{"a":1,"b":2},"n.x":2}', // a dotted key
  ];
  for (const select of [() => true, (p: string) => p === 'm.a', (p: string) => p === 'n', () => false]) {
    assertSame(texts, select);
    assertSame([...texts].reverse(), select);
  }
  const onlyInfinite = [shape('1', '2'), shape('1e400', '2')];
  assert.deepEqual(scanSeries(onlyInfinite, () => true).availablePaths, ['m.a', 'm.b', 'n']);
  assert.deepEqual(scanSeries([shape('1e400', '2'), shape('1e400', '3')], () => true).availablePaths, [
    'm.b',
    'n',
  ]);
  // a shape learned from a text with a non-finite number would leave that path out of later buckets
  assert.deepEqual(scanSeries([shape('1e400', '2'), shape('5', '3')], (p) => p === 'n').availablePaths, [
    'm.a',
    'm.b',
    'n',
  ]);
  assert.throws(() => scanSeries([shape('1', '2'), shape('1.2.3', '2')], () => true), SyntaxError);
});

test('a series of ever-changing shapes reads as parsing reads it', () => {
  // 37 shapes cycling: more than a scan learns, and more misses than it tries shapes for
  const texts = Array.from({ length: 2000 }, (_, i) =>
    JSON.stringify({ [`k${i % 37}`]: { v: i, [`w${i % 5}`]: i / 7 } }),
  );
  assertSame(texts, (path) => path.endsWith('.v'));
  assertSame(texts, () => true);
});

test('shapes stop being tried after too many buckets that match none', () => {
  const shapes = new TextShapes<string>();
  shapes.learn('{"a":1,"b":2}', (path) => (path === 'b' ? path : null));
  const read: number[] = [];
  const record = (_path: string, value: number) => read.push(value);
  assert.equal(shapes.read('{"a":3,"b":4}', record), true);
  for (let i = 0; i < MAX_SHAPE_MISSES; i++) assert.equal(shapes.read('{"c":1}', record), false);
  assert.equal(shapes.read('{"a":5,"b":6}', record), true, 'a match before the limit is passed');
  assert.equal(shapes.read('{"c":1}', record), false);
  assert.equal(shapes.read('{"c":1}', record), false);
  assert.equal(shapes.read('{"a":7,"b":8}', record), false, 'no more tries past the limit');
  assert.deepEqual(read, [4, 6]);
});

test('empty buckets do not count against the shapes of a sparse series', () => {
  const shapes = new TextShapes<string>();
  shapes.learn('{"a":1}', (path) => path);
  const read: number[] = [];
  for (let i = 0; i < 3 * MAX_SHAPE_MISSES; i++)
    assert.equal(
      shapes.read('{}', () => undefined),
      false,
    );
  assert.equal(
    shapes.read('{"a":2}', (_path, value) => read.push(value)),
    true,
  );
  assert.deepEqual(read, [2]);
});
