// The query maths reads the stores' JSON texts without parsing them where it can (columns.ts): on
// any text, scanning it must give what parsing it and walking the maps gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type Scan, scanSeries } from '../../src/domain/metrics/columns';
import { MAX_PATH_DEPTH } from '../../src/model/paths';

const plain = (scan: Scan) => ({
  availablePaths: scan.availablePaths,
  columns: scan.columns.map((c) => ({ path: c.path, index: [...c.index.subarray(0, c.size)], value: [...c.value.subarray(0, c.size)] })),
});

function assertSame(texts: string[], selects: (path: string) => boolean = () => true): void {
  const parsed = texts.map((t) => JSON.parse(t) as unknown);
  assert.deepEqual(plain(scanSeries(texts, selects)), plain(scanSeries(parsed, selects)), texts.join('\n'));
}

const key = fc.oneof(
  fc.constantFrom('count', 'n', 'amount', 'net', 'US', '200', '2xx', '__proto__', 'a.b', 'x"y', 'back\\slash', 'é', ''),
  fc.string({ maxLength: 4 }),
);
const number = fc.oneof(
  fc.integer({ min: -1e6, max: 1e6 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.double({ min: 1e14, max: 1e21, noNaN: true }).map(Math.floor), // whole numbers of 15 to 21 digits
  fc.constantFrom(0, -0, 1e21, 9007199254740993, 123456789012345, 1234567890123456, 1.5e-7),
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.dictionary(key, fc.oneof({ depthSize: 'small' }, number, number, tie('tree'), fc.constantFrom<unknown>(null, true, 'text', [1, 2])), { maxKeys: 5 }),
}));

test('scanning texts reads what parsing them reads, for any stored value', () => {
  fc.assert(
    fc.property(fc.array(tree, { maxLength: 8 }), fc.constantFrom('', 'amount', 'count', 'a'), (values, prefix) => {
      assertSame(values.map((v) => JSON.stringify(v)), (path) => prefix === '' || path === prefix || path.startsWith(`${prefix}.`));
    }),
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
