import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { type Precision, parseLineProtocol } from '../../src/intake/line-protocol';
import { type MappedWire, mapLineWire } from '../../src/intake/line-wire';
import { mapLineBodyDirect } from '../../src/intake/line-direct';
import { mapLineBodyWasm } from '../../src/intake/line-wasm';
import { hash53 } from '../../src/lib/key-hash';

const NOW = Date.UTC(2026, 0, 24, 10, 0, 0) + 0.5;

/** The general way: parsed, then mapped (or the error it ends in). */
function general(text: string, precision: Precision) {
  try {
    return mapLineWire(parseLineProtocol(text, { precision }), { nowMs: NOW });
  } catch (err) {
    return err as Error;
  }
}

/** Bodies the WebAssembly reader took (it declines more than the JavaScript one: any byte past ASCII, ...). */
let readByWasm = 0;

/** A reader's wires are exactly the general way's, which then must not have failed. */
function same(read: MappedWire, text: string, precision: Precision, reader: string): void {
  const expected = general(text, precision);
  assert.ok(
    !(expected instanceof Error),
    `read by the ${reader} reader, but the parser refuses it: ${String(expected)}`,
  );
  const { keyHashes, ...wires } = read;
  assert.deepEqual(wires, expected, `${reader} reader`);
  // each key's hash for the cardinality limit, as the limit computes it
  assert.deepEqual(
    keyHashes,
    read.wires.map((w) => w.keys.map(hash53)),
  );
  // values compared bit for bit (deepEqual takes -0 for 0 in typed arrays)
  for (let w = 0; w < read.wires.length; w++) {
    const a = read.wires[w]!.values;
    const b = expected.wires[w]!.values;
    for (let i = 0; i < a.length; i++)
      assert.ok(Object.is(a[i], b[i]), `${reader}: value ${i}: ${a[i]} vs ${b[i]}`);
  }
}

/**
 * The direct reader and the WebAssembly one either decline (null) or give exactly the wires of
 * the general way; WebAssembly reads only what the direct reader reads. Returns whether the
 * direct reader read the body.
 */
function check(text: string, precision: Precision = 'ns'): boolean {
  const viaWasm = mapLineBodyWasm(Buffer.from(text), precision, NOW);
  const direct = mapLineBodyDirect(text, precision, NOW);
  if (viaWasm !== null) {
    readByWasm++;
    assert.ok(direct !== null, 'read by the WebAssembly reader but declined by the direct one');
    same(viaWasm, text, precision, 'WebAssembly');
  }
  if (direct === null) return false;
  same(direct, text, precision, 'direct');
  return true;
}

test('line protocol read directly: the usual bodies, exactly as parsed and mapped', () => {
  const read = [
    'cpu,cpu=cpu-total,host=pve1 usage_idle=97.5,usage_user=1.25 1769248800000000000\n',
    'bench,key=k17 count=1,net=17.5,tax=3 1769248800123456789\nbench,key=k18 count=1,net=0.5,tax=0 1769248800000000001',
    'm x=1\nm x=2 1769248800000000000\n\n\nm y=3,x=4 5\n',
    'm,a=1,b=2,c=3 v=-0,w=+.5,x=1.,y=-12.75e2,z=123456789012345678 1',
    'm a=1i,b=-7i,c=+3i,d=12u,e=t,f=FALSE,g=True 1',
    'm,t=x a.b=1,c=2 1\nm,t=x a.b=3,c=4 2\nm,t=y c=5,a.b=6 3',
    'm=x,t=a=b v=1 1', // `=` is an ordinary character of a measurement; refused in a tag value
    'm v=0.1,w=0.30000000000000004,x=9007199254740993,y=123456.7890123 1',
    'm v=1   1769248800000000000   \nm v=2  ',
    'm v=1 9223372036854775807',
    'm v=1 1769248800',
  ];
  for (const text of read) check(text);
  // a second time: the keys are known from the first
  for (const text of read) check(text);
  // more lines than a wire holds (two points each): the keys are placed again in the second wire
  check(Array.from({ length: 12_000 }, (_, i) => `m,k=${i % 7} v=${i} ${i}`).join('\n'));
  for (const precision of ['ns', 'us', 'ms', 's', 'm', 'h'] as const) {
    check('m v=1 1769248800\nm v=2 17692\nm v=3 1\nm v=4 0', precision);
  }
  assert.ok(check(read[0]!));
  assert.ok(check(read[1]!));
  assert.ok(check(read[2]!));
  assert.ok(check(read[3]!));
  assert.ok(check(read[4]!));
  // declined: the general way decides (an error, escapes, strings, unsorted tags, ...)
  const declined = [
    'cpu,host=a\\ b v=1 1',
    'm s="x",v=1 1',
    'm,b=1,a=2 v=1 1',
    'm,a=1,a=2 v=1 1',
    'm v=1,v=2 1',
    'm 0=1 1',
    'm v=1 -5',
    'm v=NaN 1',
    'm v=1e400 1',
    'm v=1 92233720368547758070',
    'm v=1 9223372036854775808',
    '# comment\nm v=1 1',
    ' m v=1 1',
    'm\tv=1 1',
    'm v=1 1\r\n',
    'm v=1 1 2',
    'm,t= v=1 1',
    'm,t=a=b v=1 1',
    'm',
    'm ',
    ',t=a v=1',
    'm v= 1',
    'm =1 1',
    'm v=1, 1',
    'm v=1x 1',
    '__system__key__ v=1 1',
    `${'k'.repeat(300)} v=1 1`,
  ];
  for (const text of declined) {
    assert.equal(mapLineBodyDirect(text, 'ns', NOW), null, text);
    assert.equal(mapLineBodyWasm(Buffer.from(text), 'ns', NOW), null, text);
  }
});

test('line protocol read directly: random and mutated bodies read the same as parsed and mapped', () => {
  const name = fc.constantFrom('a', 'b', 'c.d', 'c_d', '0', 'x=', '__proto__', 'é', 'count', 'net');
  const value = fc.oneof(
    fc.double({ noNaN: true, min: -1e20, max: 1e20 }).map((v) => `${v}`),
    fc.double({ noNaN: true }).map((v) => `${v}`),
    fc.integer().map((v) => `${v}`),
    fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map((v) => `${v}i`),
    fc.bigInt({ min: 0n, max: 2n ** 65n }).map((v) => `${v}u`),
    fc.stringMatching(/^[+-]?\d{0,17}(\.\d{0,17})?([eE][+-]?\d{1,3})?$/),
    fc.constantFrom('true', 'F', 'T', 'false', '"s"', 'NaN', 'inf', '-', '.', '1.2.3', '0x10', '1_0'),
  );
  const time = fc.oneof(
    fc.constant(''),
    fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }).map((v) => ` ${v}`),
    fc.integer({ min: 0, max: 2_000_000_000 }).map((v) => ` ${v}000000000`),
  );
  const line = fc.record({
    m: fc.constantFrom('cpu', 'mem', 'a=b', 'é', '\u200b', 'x y'),
    tags: fc.array(fc.tuple(fc.constantFrom('host', 'cpu', 'b', 'a'), fc.constantFrom('a', 'b,c', 'z', '')), {
      maxLength: 3,
    }),
    fields: fc.array(fc.tuple(name, value), { minLength: 1, maxLength: 6 }),
    time,
    space: fc.constantFrom(' ', '  '),
  });
  const precision = fc.constantFrom<Precision>('ns', 'us', 'ms', 's', 'm', 'h');
  let readDirectly = 0;
  fc.assert(
    fc.property(fc.array(line, { maxLength: 12 }), precision, fc.boolean(), (lines, p, sorted) => {
      const text = lines
        .map((l) => {
          const tags = sorted ? [...l.tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) : l.tags;
          return (
            `${l.m}${tags.map(([k, v]) => `,${k}=${v}`).join('')}${l.space}` +
            `${l.fields.map(([k, v]) => `${k}=${v}`).join(',')}${l.time}`
          );
        })
        .join('\n');
      if (check(text, p)) readDirectly++;
    }),
    { numRuns: 3000 },
  );
  assert.ok(readDirectly > 100, `only ${readDirectly} bodies were read directly`);
  assert.ok(readByWasm > 100, `only ${readByWasm} bodies were read by the WebAssembly reader`);

  // bodies of the bench's shape with one character changed, dropped or doubled
  const base =
    'bench,key=k1 count=1,net=1.5,tax=3 1769248800000000000\nbench,key=k2 count=1,net=2.5,tax=4 1769248800000001000\n';
  const chars = [...' ,=.-+\n\\"#\tei0u9tT'];
  fc.assert(
    fc.property(
      fc.nat(base.length - 1),
      fc.constantFrom(...chars),
      fc.constantFrom(0, 1, 2),
      (at, c, how) => {
        const text =
          how === 0
            ? base.slice(0, at) + c + base.slice(at + 1)
            : how === 1
              ? base.slice(0, at) + base.slice(at + 1)
              : base.slice(0, at) + c + base.slice(at);
        check(text);
      },
    ),
    { numRuns: 3000 },
  );
});

test('line protocol read by the WebAssembly reader: decimals of up to 19 digits read as Number() reads them', () => {
  const decimal = fc
    .tuple(fc.constantFrom('', '-', '+'), fc.stringMatching(/^\d{1,19}$/), fc.nat(19))
    .map(([sign, digits, dot]) => {
      const at = Math.min(dot, digits.length);
      return `${sign}${digits.slice(0, at)}${at < digits.length ? '.' : ''}${digits.slice(at)}`;
    });
  fc.assert(
    fc.property(fc.array(decimal, { minLength: 1, maxLength: 8 }), (raws) => {
      const text = raws.map((raw, i) => `m,k=${i} v=${raw} ${i + 1}`).join('\n');
      const read = mapLineBodyWasm(Buffer.from(text), 'ns', NOW);
      assert.ok(read !== null, text);
      const values = read.wires[0]!.values;
      raws.forEach((raw, i) => {
        assert.ok(Object.is(values[3 * i], Number(raw)), `${raw}: ${values[3 * i]} vs ${Number(raw)}`);
        assert.ok(Object.is(values[3 * i + 2], Number(raw)), raw);
      });
      check(text);
    }),
    { numRuns: 3000 },
  );
});

test('line protocol read by the WebAssembly reader: its key table starts over past 100,000 keys and reads on the same', () => {
  // 24 bodies of 5,000 new keys: the table starts over once, and keys seen before it did are new again
  for (let body = 0; body < 24; body++) {
    const text = Array.from({ length: 5_000 }, (_, i) => `m,k=b${body}-${i} v=${i} ${i + 1}`).join('\n');
    const read = mapLineBodyWasm(Buffer.from(text), 'ns', NOW);
    assert.ok(read !== null);
    assert.equal(read.wires[0]!.keys.length, 5_000);
    assert.equal(read.wires[0]!.keys[4_999], `m,k=b${body}-4999`);
  }
  for (const body of [0, 23]) {
    const text = Array.from({ length: 100 }, (_, i) => `m,k=b${body}-${i * 7} v=${i} ${i + 1}`).join('\n');
    assert.ok(check(text));
  }
});
