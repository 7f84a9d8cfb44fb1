// Bucket rows as shapes and numbers (model/bucket-shape.ts) write exactly the text the tree path
// writes (leaves.ts: parse, applyDelta, JSON.stringify), for any sequence of deltas, including
// paths that are both a leaf and a map, integer-like names, replacements and overflowing sums.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ShapeRegistry, applyToBucket, parseBucket, renderBucket } from '../../src/model/bucket-shape';
import { PathSplitter, parseTree } from '../../src/model/leaves';
import { type RowDelta, applyDelta } from '../../src/model/row-delta';

const PATHS = [
  'count',
  'amount.net',
  'amount.tax',
  'a',
  'a.b',
  'a.b.c',
  '10',
  'x.2',
  'x.1',
  '__proto__.n',
  'amount',
];

const delta = fc
  .uniqueArray(fc.constantFrom(...PATHS), { minLength: 1, maxLength: 5 })
  .chain((paths) =>
    fc.record({
      paths: fc.constant(paths),
      values: fc.array(
        fc.oneof(
          fc.integer({ min: -1000, max: 1000 }),
          fc.double({ noNaN: true, noDefaultInfinity: true }),
          fc.constant(1.5e308),
        ),
        {
          minLength: paths.length,
          maxLength: paths.length,
        },
      ),
      set: fc.option(fc.array(fc.boolean(), { minLength: paths.length, maxLength: paths.length }), {
        nil: null,
      }),
    }),
  )
  .map((d): RowDelta => ({
    paths: d.paths,
    values: d.values,
    set: d.set && Uint8Array.from(d.set, (b) => (b ? 1 : 0)),
  }));

test('shapes write the text trees write, delta after delta, and after a re-read', () => {
  fc.assert(
    fc.property(
      fc.array(delta, { minLength: 1, maxLength: 12 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
      (deltas, rereads) => {
        const shapes = new ShapeRegistry();
        const splitter = new PathSplitter();
        let text = '{}';
        let bucket = parseBucket(undefined, shapes);
        deltas.forEach((d, i) => {
          const tree = parseTree(text);
          applyDelta(tree, d, splitter);
          text = JSON.stringify(tree);
          if (rereads[i % rereads.length]) bucket = parseBucket(renderBucket(bucket), shapes);
          bucket = applyToBucket(bucket, d, shapes.of(d.paths), shapes);
          assert.equal(renderBucket(bucket), text, `after delta ${i}`);
        });
      },
    ),
    { numRuns: 2000 },
  );
});

test('the common case stays a shape: no tree, values changed in place', () => {
  const shapes = new ShapeRegistry();
  const d: RowDelta = { paths: ['count', 'amount.net', 'amount.tax'], values: [1, 2.5, 0.5], set: null };
  let bucket = applyToBucket(parseBucket(undefined, shapes), d, shapes.of(d.paths), shapes);
  const again = applyToBucket(bucket, d, shapes.of(d.paths), shapes);
  assert.equal(again, bucket);
  assert.ok(bucket.shape && !bucket.tree);
  assert.equal(renderBucket(bucket), '{"count":2,"amount":{"net":5,"tax":1}}');
  bucket = parseBucket('{"count":2,"amount":{"net":5,"tax":1}}', shapes);
  assert.equal(
    bucket.shape,
    shapes.of(d.paths),
    'a stored row of the same leaves reads back as the same shape',
  );
  assert.equal(parseBucket('not json', shapes).shape?.paths.length, 0, 'an unreadable row reads as empty');
});

test('a stored text read by a shape read before (no JSON.parse) gives what JSON.parse and flatten give', () => {
  /** paths and values, or the tree: what a parse gives, comparable across registries */
  const seen = (b: ReturnType<typeof parseBucket>) =>
    b.shape
      ? { paths: [...b.shape.paths], values: [...b.values!].map((v) => (Object.is(v, -0) ? '-0' : v)) }
      : { tree: b.tree };
  const number = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
    fc.integer({ min: -5, max: 5 }).map(String),
    fc.constantFrom(
      '-0',
      '0',
      '01',
      '1.',
      '.5',
      '+1',
      '1e400',
      '-1e400',
      '1E+2',
      '1e',
      '-',
      '1.5e-3',
      ' 1',
      '"1"',
      'null',
      '1,"z":2',
    ),
  );
  const shapeTexts = [
    ['{"count":', ',"amount":{"net":', ',"tax":', '}}'],
    ['{"count":{"sum":', ',"count":', ',"last":', '},"net":{"sum":', ',"count":', ',"last":', '}}'],
    ['{"10":', ',"2":', '}'],
    ['{"2":', ',"10":', '}'],
    ['{"a":{"b":', '},"a.b":', '}'],
  ];
  const text = fc
    .tuple(
      fc.constantFrom(...shapeTexts),
      fc.array(number, { minLength: 8, maxLength: 8 }),
      fc.nat(40),
      fc.boolean(),
    )
    .map(([pieces, numbers, cut, cutIt]) => {
      const t = pieces.map((p, i) => p + (i < pieces.length - 1 ? numbers[i] : '')).join('');
      return cutIt ? t.slice(0, cut) + t.slice(cut + 1) : t;
    });
  fc.assert(
    fc.property(fc.array(text, { minLength: 1, maxLength: 20 }), (texts) => {
      const warm = new ShapeRegistry();
      for (const t of texts)
        assert.deepEqual(seen(parseBucket(t, warm)), seen(parseBucket(t, new ShapeRegistry())), t);
    }),
    { numRuns: 2000 },
  );
  // the usual row is read without JSON.parse once its shape is known
  const shapes = new ShapeRegistry();
  const first = parseBucket('{"count":{"sum":3,"count":2,"last":1.5}}', shapes);
  const second = parseBucket('{"count":{"sum":4.25,"count":3,"last":-0}}', shapes);
  assert.equal(second.shape, first.shape);
  assert.ok(shapes.readKnown('{"count":{"sum":1,"count":1,"last":1}}'));
  assert.equal(shapes.readKnown('{"count":{"sum":01,"count":1,"last":1}}'), null);
  assert.equal(shapes.readKnown('{"count":{"sum":1e999,"count":1,"last":1}}'), null);
});
