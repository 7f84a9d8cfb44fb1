// The metrics endpoints write their answers as text (http/present/metrics.ts). GET: bucket texts
// spliced in unparsed, and the labels of a range encoded once and reused by every read of that
// range. Query: the table written from its columns, which must be what JSON.stringify writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { presentQueryJson, presentSeriesJson } from '../../src/http/present/metrics';
import { type QueryMode, answerQuery, runQuery } from '../../src/domain/metrics/query/query';

const parse = (bytes: Buffer) =>
  JSON.parse(bytes.toString('utf8')) as { data: { at: string[]; values: unknown[] } };

test('the answer is the labels and the texts as JSON, also when one labels array is read again', () => {
  const at = ['2025-03-04T10:00:00+01:00', '2025-03-04T11:00:00+01:00', '2025-03-04T12:00:00+01:00'];
  const first = parse(presentSeriesJson({ at, values: ['{}', '{"n":1}', '{"é":{"x":2.5}}'] }));
  assert.deepEqual(first.data, { at, values: [{}, { n: 1 }, { é: { x: 2.5 } }] });
  const again = parse(presentSeriesJson({ at, values: ['{"n":3}', '{}', '{"ü":4}'] }));
  assert.deepEqual(again.data, { at, values: [{ n: 3 }, {}, { ü: 4 }] });
  const other = ['2025-03-04T10:00:00Z'];
  assert.deepEqual(parse(presentSeriesJson({ at: other, values: ['{"n":5}'] })).data, {
    at: other,
    values: [{ n: 5 }],
  });
});

test('texts of any characters: the bytes JSON.stringify writes, also when they take 2 to 4 bytes a unit', () => {
  // the body is sized for one byte per UTF-16 unit and grown when a text may not fit
  const key = fc.string({ unit: 'binary', maxLength: 12 });
  const bucket = fc.dictionary(
    key,
    fc.oneof(
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.dictionary(key, fc.integer()),
    ),
    { maxKeys: 6 },
  );
  fc.assert(
    fc.property(fc.array(bucket, { maxLength: 60 }), (buckets) => {
      const at = buckets.map((_, i) => new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString());
      const values = buckets.map((b) => JSON.stringify(b));
      const expected = Buffer.from(JSON.stringify({ data: { at, values: buckets } }), 'utf8');
      assert.ok(presentSeriesJson({ at, values }).equals(expected));
    }),
    { numRuns: 300 },
  );
  // a year of buckets whose every unit takes 3 bytes (and a few of 4 bytes: surrogate pairs)
  const at = Array.from({ length: 8760 }, (_, i) =>
    new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString(),
  );
  const buckets = at.map((_, i) => ({ ['€'.repeat(20) + (i % 7 === 0 ? '😀' : '')]: i }));
  const body = presentSeriesJson({ at, values: buckets.map((b) => JSON.stringify(b)) });
  assert.ok(body.equals(Buffer.from(JSON.stringify({ data: { at, values: buckets } }), 'utf8')));
});

test('an empty range is two empty arrays', () => {
  assert.equal(presentSeriesJson({ at: [], values: [] }).toString(), '{"data":{"at":[],"values":[]}}');
});

test('a query answer is written as JSON.stringify writes the answer object, table included', () => {
  const leaf = fc.oneof(
    fc.integer({ min: -1e6, max: 1e6 }),
    fc.double({ noNaN: true }),
    fc.constantFrom(-0, 0.1, 1e21, 5e-324),
  );
  const bucket = fc.dictionary(
    fc.constantFrom('a', 'b', 'c'),
    fc.oneof(leaf, fc.dictionary(fc.constantFrom('x', 'y', 'é"'), leaf)),
  );
  fc.assert(
    fc.property(
      fc.array(bucket, { minLength: 1, maxLength: 30 }),
      fc.constantFrom<QueryMode>('aggregate', 'timeline', 'category'),
      fc.constantFrom('a', 'b', 'b.x', 'b.é"', 'c'),
      fc.constantFrom(undefined, 1, 2, 3),
      fc.boolean(),
      (buckets, mode, valuePath, slices, asText) => {
        const start = Date.UTC(2026, 0, 1);
        const at = buckets.map((_, i) => new Date(start + i * 3_600_000).toISOString().replace('.000Z', 'Z'));
        const series = { at, values: asText ? buckets.map((b) => JSON.stringify(b)) : buckets };
        const req = {
          key: 'k',
          fromMs: start,
          toMs: start + (buckets.length - 1) * 3_600_000,
          granularity: '1h',
          mode,
          valuePath,
          aggregator: 'sum',
          slices,
        };
        let expected: string;
        try {
          expected = JSON.stringify({ data: runQuery(req, series) });
        } catch {
          assert.throws(() => answerQuery(req, series));
          return;
        }
        assert.equal(presentQueryJson(answerQuery(req, series)), expected);
      },
    ),
    { numRuns: 500 },
  );
});
