// The batch scanner (domain/metrics/ingest/batch-scan.ts) against the generic path it stands in for: whatever it returns
// decodes to exactly the points parseBatch gives, it declines every body the generic path refuses,
// it never throws, and it does take the plain bodies real clients send.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { AppError } from '../../src/errors';
import { scanBatch } from '../../src/domain/metrics/ingest/batch-scan';
import { type ValidPoint, parseBatch } from '../../src/domain/metrics/ingest/points';
import { decodePoints } from '../../src/model/point-wire';
import { parseJsonText } from '../../src/lib/json';
import { WORKLOADS } from '../../bench/workloads';
import { seeded } from '../../bench/helpers';
import {
  type Json,
  MUTATIONS,
  body,
  gaps,
  leaves,
  nested,
  plainPoints,
  serialize,
  wildTimestamp,
} from './batch-scan.helpers';

type Outcome = 'fast' | 'declined' | 'refused';

/** Compares the scanner with the generic path on one body. */
function check(bytes: Uint8Array): Outcome {
  let expected: ValidPoint[] | undefined;
  try {
    expected = parseBatch(parseJsonText(bytes));
  } catch (err) {
    assert.ok(err instanceof AppError, `the generic path threw ${String(err)}`);
  }
  const wire = scanBatch(bytes);
  if (expected === undefined) {
    assert.equal(wire, null, 'the generic path refuses this body: the scanner must decline it');
    return 'refused';
  }
  if (wire === null) return 'declined';
  assert.deepStrictEqual(decodePoints(wire), expected);
  assert.equal(new Set(wire.keys).size, wire.keys.length, 'keys once each');
  assert.equal(
    new Set(wire.pathLists.map((l) => JSON.stringify(l))).size,
    wire.pathLists.length,
    'path lists once each',
  );
  return 'fast';
}

const bytesOf = (text: string) => new Uint8Array(Buffer.from(text));
const count: Record<Outcome, number> = { fast: 0, declined: 0, refused: 0 };
const tally = (outcome: Outcome) => count[outcome]++;

describe('batch scanner, property tests', () => {
  test('valid plain bodies take the fast path and give the generic points', () => {
    fc.assert(
      fc.property(plainPoints, gaps, (points, ws) => {
        const text = serialize(body(points), ws);
        assert.equal(check(bytesOf(text)), 'fast', text);
        tally('fast');
      }),
      { numRuns: 1500 },
    );
  });

  test('changed bodies: the same points, or declined; never points for a refused body', () => {
    const kinds = Object.keys(MUTATIONS);
    fc.assert(
      fc.property(
        plainPoints,
        gaps,
        fc.constantFrom(...kinds),
        fc.nat(),
        fc.nat(),
        wildTimestamp,
        (points, ws, kind, a, b, time) => {
          tally(check(bytesOf(serialize(MUTATIONS[kind]!(structuredClone(points), a, b, time), ws))));
        },
      ),
      { numRuns: 3000 },
    );
  });

  test('changed bytes (cut, replaced, dropped, inserted, wrapped) never throw nor pass a refused body', () => {
    const edit = fc.tuple(
      fc.constantFrom('cut', 'set', 'drop', 'insert', 'bom', 'trail', 'lead'),
      fc.nat(),
      fc.integer({ min: 0, max: 255 }),
    );
    fc.assert(
      fc.property(plainPoints, gaps, edit, (points, ws, [how, at, byte]) => {
        const text = serialize(body(points), ws);
        const bytes = Buffer.from(text);
        const i = at % (bytes.length + 1);
        const changed = {
          cut: () => bytes.subarray(0, i),
          set: () => Buffer.concat([bytes.subarray(0, i), Buffer.from([byte]), bytes.subarray(i + 1)]),
          drop: () => Buffer.concat([bytes.subarray(0, i), bytes.subarray(i + 1)]),
          insert: () => Buffer.concat([bytes.subarray(0, i), Buffer.from([byte]), bytes.subarray(i)]),
          bom: () => Buffer.from(`\ufeff${text}`),
          trail: () => Buffer.from(text + pick(['x', '}', ',', ']', '{}', '0', '\u00a0'], byte)),
          lead: () => Buffer.from(pick(['x', '[', ',', '\u00a0', '\f'], byte) + text),
        }[how]();
        tally(check(new Uint8Array(changed)));
      }),
      { numRuns: 2000 },
    );
  });

  test('points that repeat the one before but for a byte: the same points, or declined', () => {
    const edit = fc.tuple(fc.nat(), fc.constantFrom(...'aAz09.-+eE"\\ ,:{}[]tfn\u00e9'));
    fc.assert(
      fc.property(plainPoints, fc.array(edit, { minLength: 1, maxLength: 6 }), (points, edits) => {
        const first = serialize(points[0]!);
        const copies = edits.map(([at, c]) => {
          const i = at % first.length;
          return first.slice(0, i) + c + first.slice(i + 1);
        });
        tally(check(bytesOf(`{"points":[${[first, ...copies, first].join(',')}]}`)));
      }),
      { numRuns: 2000 },
    );
  });

  test('random bytes and random JSON are declined without a throw', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 300 }),
          fc.json().map(bytesOf),
          fc.jsonValue().map((v) => bytesOf(JSON.stringify({ points: [v] }))),
        ),
        (bytes) => {
          tally(check(bytes));
        },
      ),
      { numRuns: 1500 },
    );
  });

  test('every outcome occurred', () => {
    console.log(`outcomes: ${JSON.stringify(count)}`);
    assert.ok(count.fast > 1500 && count.declined > 100 && count.refused > 1000, JSON.stringify(count));
  });
});

function pick<T>(items: readonly T[], n: number): T {
  return items[n % items.length]!;
}

const point = (values: Json, extra: Array<[string, Json]> = []): Json => ({
  obj: [['key', { str: 'orders' }], ['at', { str: '2026-01-05T10:00:00Z' }], ['values', values], ...extra],
});
const one = (values: Json, extra: Array<[string, Json]> = []) =>
  bytesOf(serialize(body([point(values, extra)])));

describe('batch scanner, examples', () => {
  test('the benchmark bodies take the fast path', () => {
    for (const workload of WORKLOADS) {
      for (const text of workload.bodies(seeded(42)).slice(0, 4))
        assert.equal(check(bytesOf(text)), 'fast', workload.name);
    }
  });

  test('limits: 32 levels, 1000 leaves, 10,000 points, 255-character keys are taken; one more is refused', () => {
    assert.equal(check(one(nested(32))), 'fast');
    assert.equal(check(one(nested(33))), 'refused');
    assert.equal(check(one(leaves(1000))), 'fast');
    assert.equal(check(one(leaves(1001))), 'refused');
    const many = (n: number) =>
      bytesOf(serialize(body(Array.from({ length: n }, () => point({ obj: [['n', { num: '1' }]] })))));
    assert.equal(check(many(10_000)), 'fast');
    assert.equal(check(many(10_001)), 'refused');
    // 10,000 distinct keys fill the key table to its highest load; then each again, out of order
    const keys = Array.from({ length: 10_000 }, (_, i) => `key.${(i * 7919) % 10_000}`);
    const distinct = (order: string[]) =>
      bytesOf(
        serialize(
          body(
            order.map((key) => ({
              obj: [
                ['key', { str: key }],
                ['at', { str: '2026-01-05T10:00:00Z' }],
                ['values', leaves(1)],
              ],
            })),
          ),
        ),
      );
    assert.equal(check(distinct(keys)), 'fast');
    assert.equal(check(distinct([...keys.slice(0, 5000).reverse(), ...keys.slice(0, 5000)])), 'fast');
    const keyed = (key: string) =>
      bytesOf(
        serialize(
          body([
            {
              obj: [
                ['key', { str: key }],
                ['at', { str: '2026-01-05T10:00:00Z' }],
                ['values', leaves(1)],
              ],
            },
          ]),
        ),
      );
    assert.equal(check(keyed('k'.repeat(255))), 'fast');
    assert.equal(check(keyed('k'.repeat(256))), 'refused');
  });

  test('empty objects among the values and the five members in any order are taken', () => {
    assert.equal(
      check(
        one({
          obj: [
            ['a', { obj: [] }],
            ['b', { num: '-0' }],
            ['c', { obj: [['d', { obj: [] }]] }],
          ],
        }),
      ),
      'fast',
    );
    const text =
      '{"points":[{"untracked":true,"values":{"x":{"y":1.5e-7}},"operation":"assert","at":"2024-02-29t23:59:59.999999999-00:30","key":" k.e.y "}]}';
    assert.equal(check(bytesOf(text)), 'fast');
  });

  test('what the generic path takes but spells differently is declined: dotted, digit-led and non-ASCII names, non-ASCII keys, escapes', () => {
    assert.equal(check(one({ obj: [['a.b', { num: '1' }]] })), 'declined');
    assert.equal(
      check(
        one({
          obj: [
            ['a.b', { num: '1' }],
            ['a', { obj: [['b', { num: '2' }]] }],
          ],
        }),
      ),
      'declined',
    );
    assert.equal(
      check(
        one({
          obj: [
            ['b', { num: '1' }],
            ['1', { num: '2' }],
          ],
        }),
      ),
      'declined',
    );
    assert.equal(check(one({ obj: [['é', { num: '1' }]] })), 'declined');
    assert.equal(check(one({ obj: [['n', { num: '1' }]] }, [['tags', { arr: [] }]])), 'declined');
    assert.equal(
      check(
        bytesOf(
          serialize(
            body([
              {
                obj: [
                  ['key', { str: 'größe' }],
                  ['at', { str: '2026-01-05T10:00:00Z' }],
                  ['values', leaves(1)],
                ],
              },
            ]),
          ),
        ),
      ),
      'declined',
    );
    assert.equal(
      check(
        bytesOf(
          serialize(
            body([
              {
                obj: [
                  ['key', { str: 'a\\u0062' }],
                  ['at', { str: '2026-01-05T10:00:00Z' }],
                  ['values', leaves(1)],
                ],
              },
            ]),
          ),
        ),
      ),
      'declined',
    );
  });

  test('random bytes are declined without a throw', () => {
    const random = seeded(7);
    for (let i = 0; i < 200; i++) {
      const bytes = Uint8Array.from({ length: Math.floor(random() * 2000) }, () =>
        Math.floor(random() * 256),
      );
      assert.equal(scanBatch(bytes), null);
    }
    assert.equal(scanBatch(new Uint8Array(0)), null);
  });
});
