// Batch bodies parsed in the worker thread give exactly what parsing inline gives: the same points,
// and the same errors (status, message, fields) for every kind of bad body.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors';
import { createBatchParser } from '../../src/domain/metrics/ingest/batch-parser';
import { parseBatch } from '../../src/domain/metrics/ingest/points';
import { decodePoints, encodePoints } from '../../src/model/point-wire';
import { parseJsonText } from '../../src/lib/json';

const point = (i: number) => ({
  key: i % 3 === 0 ? 'orders' : 'visits',
  at: new Date(Date.UTC(2026, 0, 5) + i * 7_000).toISOString(),
  values:
    i % 5 === 0 ? { count: 1, amount: { net: i + 0.25, tax: i % 7 } } : { count: 1, 'a.b': i, a: { c: -i } },
  ...(i % 11 === 0 ? { operation: 'assert' } : {}),
  ...(i % 13 === 0 ? { untracked: true } : {}),
});
const body = (points: unknown[]) => Buffer.from(JSON.stringify({ points }));
const many = (n: number) => Array.from({ length: n }, (_, i) => point(i));

async function outcome(promise: Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await promise };
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return { status: err.status, message: err.message, options: err.options };
  }
}

function inline(raw: Buffer): Promise<unknown> {
  try {
    return Promise.resolve(parseBatch(parseJsonText(raw)));
  } catch (err) {
    return Promise.reject(err);
  }
}

describe('point wire format', () => {
  test('decode(encode(points)) gives the points back, sharing one paths array per spelling', () => {
    const points = parseBatch({ points: many(40) });
    const wire = encodePoints(points);
    assert.deepEqual(wire.keys, ['orders', 'visits']);
    assert.equal(wire.pathLists.length, 2);
    const back = decodePoints(wire);
    assert.deepEqual(back, points);
    assert.equal(back[1]!.paths, back[2]!.paths);
  });
});

describe('batch parser', () => {
  const parser = createBatchParser({ offThreadBytes: 1024, maxInFlightBytes: 1 << 20 });
  after(() => parser.close());

  test('a large body is parsed in the worker into the same points as inline', async () => {
    const raw = body(many(2_000));
    const before = parser.stats.offThread;
    const expected = await outcome(inline(raw)); // first: the parser takes the bytes over
    assert.deepEqual(await outcome(parser.parse(raw).then(decodePoints)), expected);
    assert.equal(parser.stats.offThread, before + 1);
    assert.equal(raw.length, 0, 'the bytes were moved to the worker, not copied');
  });

  test('concurrent bodies each get their own points', async () => {
    const bodies = [10, 200, 30, 400, 50].map((n) => body(many(n)));
    const expected = bodies.map((raw) => parseBatch(JSON.parse(raw.toString())));
    const results = await Promise.all(bodies.map((raw) => parser.parse(raw)));
    results.forEach((wire, i) => assert.deepEqual(decodePoints(wire), expected[i]));
  });

  const bad: Array<[string, Buffer]> = [
    ['malformed JSON', Buffer.from(`{"points": [${JSON.stringify(point(1)).repeat(2)}`.padEnd(2_000, ' '))],
    ['not an object', Buffer.from(JSON.stringify(many(30)))],
    ['points missing', Buffer.from(JSON.stringify({ other: many(30) }))],
    ['points not an array', Buffer.from(JSON.stringify({ points: { a: many(30) } }))],
    ['a bad point deep in the batch', body([...many(500), { ...point(1), values: { n: 'x' } }, ...many(10)])],
    ['an unreadable point', body([...many(300), { key: 'k', at: 'yesterday', values: { n: 1 } }])],
    [
      'too many points',
      body(
        Array.from({ length: 10_001 }, () => ({ key: 'k', at: '2026-01-05T00:00:00Z', values: { n: 1 } })),
      ),
    ],
  ];
  for (const [name, raw] of bad) {
    test(`${name}: the same error as inline`, async () => {
      assert.ok(raw.length >= 1024, 'goes to the worker');
      const expected = await outcome(inline(raw));
      const off = await outcome(parser.parse(raw));
      assert.ok(!('ok' in (off as object)), 'refused');
      assert.deepEqual(off, expected);
    });
  }

  test('small bodies, no body, and bodies over the in-flight cap are parsed inline', async () => {
    const capped = createBatchParser({ offThreadBytes: 1024, maxInFlightBytes: 4096 });
    try {
      await capped.parse(body(many(2)));
      await assert.rejects(capped.parse(undefined), (err: AppError) => err.status === 400);
      await capped.parse(body(many(200))); // larger than the whole cap
      assert.deepEqual(capped.stats, { offThread: 0, inline: 3 });
    } finally {
      await capped.close();
    }
  });

  test('closing fails outstanding bodies with 503 and later ones are parsed inline', async () => {
    const closing = createBatchParser({ offThreadBytes: 1024, maxInFlightBytes: 1 << 24 });
    const outstanding = closing.parse(body(many(5_000)));
    await closing.close();
    const result = (await outcome(outstanding)) as { status?: number; ok?: unknown };
    // the worker may have answered before it stopped; otherwise the body is refused, never lost silently
    if (!('ok' in result)) assert.equal(result.status, 503);
    assert.equal((await closing.parse(body(many(100)))).meta.length / 2, 100);
    assert.equal(closing.stats.inline, 1);
  });
});
