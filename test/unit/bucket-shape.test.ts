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
