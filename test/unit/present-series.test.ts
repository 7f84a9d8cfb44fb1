// GET /api/v1/metrics writes its answer as bytes (http/present/metrics.ts): bucket texts spliced in
// unparsed, and the labels of a range encoded once and reused by every read of that range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { presentSeriesJson } from '../../src/http/present/metrics';

const parse = (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as { data: { at: string[]; values: unknown[] } };

test('the answer is the labels and the texts as JSON, also when one labels array is read again', () => {
  const at = ['2025-03-04T10:00:00+01:00', '2025-03-04T11:00:00+01:00', '2025-03-04T12:00:00+01:00'];
  const first = parse(presentSeriesJson({ at, values: ['{}', '{"n":1}', '{"é":{"x":2.5}}'] }));
  assert.deepEqual(first.data, { at, values: [{}, { n: 1 }, { é: { x: 2.5 } }] });
  const again = parse(presentSeriesJson({ at, values: ['{"n":3}', '{}', '{"ü":4}'] }));
  assert.deepEqual(again.data, { at, values: [{ n: 3 }, {}, { ü: 4 }] });
  const other = ['2025-03-04T10:00:00Z'];
  assert.deepEqual(parse(presentSeriesJson({ at: other, values: ['{"n":5}'] })).data, { at: other, values: [{ n: 5 }] });
});

test('an empty range is two empty arrays', () => {
  assert.equal(presentSeriesJson({ at: [], values: [] }).toString(), '{"data":{"at":[],"values":[]}}');
});
