import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseLineProtocol } from '../../src/intake/line-protocol';
import { MappingError, mapLineSamples } from '../../src/intake/mapping';
import { POINTS_PER_WIRE, mapLineWire, mapLineWireSliced } from '../../src/intake/line-wire';
import { parseBatch } from '../../src/domain/metrics/ingest/points';
import { decodePoints, wirePointCount } from '../../src/model/point-wire';

const NOW = Date.UTC(2026, 0, 24, 10, 0, 0);

/** The points the JSON-shaped mapping gives once the batch endpoint has validated them. */
function viaBatch(text: string, keyPrefix?: string) {
  const mapped = mapLineSamples(parseLineProtocol(text), { nowMs: NOW, keyPrefix });
  const points = [];
  for (let from = 0; from < mapped.points.length; from += 10_000)
    points.push(...parseBatch({ points: mapped.points.slice(from, from + 10_000) }));
  return { ...mapped, points };
}

function viaWire(text: string, keyPrefix?: string) {
  const mapped = mapLineWire(parseLineProtocol(text), { nowMs: NOW, keyPrefix });
  return { ...mapped, points: mapped.wires.flatMap((w) => decodePoints(w)) };
}

function same(text: string, keyPrefix?: string): void {
  const a = viaBatch(text, keyPrefix);
  const b = viaWire(text, keyPrefix);
  assert.deepEqual(
    b.points.map((p) => ({ ...p, paths: [...p.paths] })),
    a.points.map((p) => ({ ...p, paths: [...p.paths] })),
  );
  // each line is one pair point in the wire, the two points it stands for once decoded
  assert.equal(
    b.points.length,
    b.wires.reduce((n, w) => n + wirePointCount(w), 0),
  );
  assert.equal(b.points.length, 2 * b.wires.reduce((n, w) => n + w.meta.length / 2, 0));
  assert.deepEqual(
    [b.samples, b.skippedStrings, b.skippedNonFinite],
    [a.samples, a.skippedStrings, a.skippedNonFinite],
  );
}

test('line protocol to wire: the same points as the JSON-shaped mapping through the batch validation', () => {
  same('cpu,host=pve1,cpu=cpu-total usage_idle=97.5,usage_user=1.25 1769248800000000000\n');
  same(
    'system,object=qemu,host=web,vmid=100 mem=1073741824i,netin=5u,running=true,paused=F,name="web",bad=NaN,big=1e400 1769248800000000000',
  );
  same('ha,entity_id=door state="open"\nha,entity_id=door value=1\nha,entity_id=door value=2,value=3');
  same('m a.b=1,c=2,a_b=4\nm c=1,a.b=2 5', 'lab::');
  same('m __proto__=1,constructor=2,10=3,2=4,x=5,02=6,4294967295=7,4294967294=8 1');
  same('m x=1 1\nm,t=a x=2 2\nm x=3 3\nn y=1 4\nm,t=a x=5,y=6 5\nm x=7 6');
  same(`m ${Array.from({ length: 1200 }, (_, i) => `f${i}=${i}`).join(',')} 0`);
  same(`m ${Array.from({ length: 40 }, (_, i) => `f${i % 23}=${i}`).join(',')} 0`);
});

test('line protocol to wire: random bodies give the same points', () => {
  const name = fc.constantFrom('a', 'b', 'c.d', 'c_d', '0', '7', '12', '__proto__', 'é');
  const value = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((v) => `${v}`),
    fc.integer().map((v) => `${v}i`),
    fc.constantFrom('true', 'F', '"s"', 'NaN'),
  );
  const line = fc.record({
    m: fc.constantFrom('cpu', 'mem', 'x y'),
    tags: fc.array(fc.tuple(fc.constantFrom('host', 'cpu', 'b'), fc.constantFrom('a', 'b,c')), {
      maxLength: 3,
    }),
    fields: fc.array(fc.tuple(name, value), { minLength: 1, maxLength: 8 }),
    time: fc.option(fc.integer({ min: 0, max: 2_000_000_000 }), { nil: undefined }),
  });
  fc.assert(
    fc.property(fc.array(line, { maxLength: 20 }), (lines) => {
      const esc = (s: string) => s.replace(/[, =]/g, (c) => `\\${c}`);
      const text = lines
        .map(
          (l) =>
            `${esc(l.m)}${l.tags.map(([k, v]) => `,${k}=${esc(v)}`).join('')} ` +
            `${l.fields.map(([k, v]) => `${esc(k)}=${v}`).join(',')}${l.time === undefined ? '' : ` ${l.time}000000`}`,
        )
        .join('\n');
      same(text);
    }),
    { numRuns: 300 },
  );
});

test('line protocol to wire: the same errors naming the same line', () => {
  const error = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      assert.ok(err instanceof MappingError);
      return [err.line, err.message];
    }
    return null;
  };
  for (const text of [
    'm x=1 0\nm x=1 -1',
    'm x=1 1769248800000000000\nm,k=a x=1 -5\nm x=2',
    `m x=1\nm,t=${'v'.repeat(260)} x=1`,
    '__system__key__ x=1',
    `m,t=${'v'.repeat(260)} x=1 -1`,
  ]) {
    const expected = error(() => mapLineSamples(parseLineProtocol(text), { nowMs: NOW }));
    assert.ok(expected, text);
    assert.deepEqual(
      error(() => mapLineWire(parseLineProtocol(text), { nowMs: NOW })),
      expected,
      text,
    );
  }
});

test('line protocol to wire: large bodies split into wires of at most 10,000 points, sliced alike', async () => {
  const text = Array.from({ length: 12_345 }, (_, i) => `m,k=k${i % 700} x=${i},y=2 ${i}000000`).join('\n');
  const samples = parseLineProtocol(text);
  const mapped = mapLineWire(samples, { nowMs: NOW });
  assert.equal(mapped.points, 24_690);
  assert.deepEqual(
    mapped.wires.map((w) => wirePointCount(w)),
    [POINTS_PER_WIRE, POINTS_PER_WIRE, 4_690],
  );
  const sliced = await mapLineWireSliced(samples, { nowMs: NOW });
  assert.deepEqual(
    sliced.wires.flatMap((w) => decodePoints(w)),
    mapped.wires.flatMap((w) => decodePoints(w)),
  );
  same(text);
});
