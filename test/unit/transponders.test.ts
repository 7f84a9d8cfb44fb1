// Transponders' pieces (SPEC 15): the shared expression language with a..z bound to paths and its
// error messages, the bounded key patterns, and the per-bucket application rules.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  compileColumns,
  evaluateWith,
  expressionProblem,
  parseTransponderExpression,
  ExpressionError,
} from '../../src/shared/expression';
import { isPattern, keyMatches, patternProblem } from '../../src/shared/key-pattern';
import {
  applyToBuckets,
  applyToRead,
  applyToTexts,
  withDerived,
  scanWithTransponders,
  textsOf,
  type TransponderError,
} from '../../src/domain/transponders/apply';
import type { Transponder } from '../../src/storage/transponders';
import { scanSeries } from '../../src/domain/metrics/query/columns';
import { presentSeriesJson } from '../../src/http/present/metrics';

const value = (text: string, ...values: Array<number | null>) =>
  evaluateWith(parseTransponderExpression(text, values.length), values);
const problem = (text: string, paths: number) => expressionProblem(text, paths, "the paths' variables");

describe('the expression language over paths', () => {
  test('numbers, + - * /, unary minus, parentheses, precedence', () => {
    assert.equal(value('a + b * 2', 1, 3), 7);
    assert.equal(value('(a + b) * 2', 1, 3), 8);
    assert.equal(value('-a - -b', 5, 2), -3);
    assert.equal(value('a / b / 2', 12, 3), 2);
    assert.equal(value('1.5e2 + .5', 0), 150.5);
    assert.equal(value('a - b - 1', 10, 4), 5, 'left associative');
  });

  test('sum, mean, avg, min, max, sqrt', () => {
    assert.equal(value('sum(a, b, c)', 1, 2, 3), 6);
    assert.equal(value('mean(a, b)', 1, 2), 1.5);
    assert.equal(value('avg(a, b, 6)', 0, 3), 3);
    assert.equal(value('min(a, b)', -1, 2), -1);
    assert.equal(value('max(a, b)', -1, 2), 2);
    assert.equal(value('sqrt(a)', 16), 4);
    assert.equal(value('sqrt(max(a, b)) + 1', 4, 9), 4);
  });

  test('null rules: a missing path, a null argument or a division by zero is no value', () => {
    assert.equal(value('a + 1', null), null);
    assert.equal(value('sum(a, b)', 1, null), null);
    assert.equal(value('a / b', 1, 0), null);
    assert.equal(value('a / (b - b)', 1, 5), null);
    assert.equal(value('sqrt(a)', -4), null);
    assert.equal(value('a * b', 1e308, 10), null, 'an infinite result is no value');
    assert.equal(value('0 * a', 5), 0);
  });

  test('variables a..z bound to up to 26 paths, in order', () => {
    const values = Array.from({ length: 26 }, (_, i) => i + 1);
    assert.equal(evaluateWith(parseTransponderExpression('z - a', 26), values), 25);
    assert.equal(problem('z', 26), null);
    assert.equal(
      problem('aa', 26),
      "Unknown variable aa: only the paths' variables (a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q, r, s, t, u, v, w, x, y, z) can be used",
    );
    assert.throws(() => parseTransponderExpression('aa', 40), ExpressionError, 'never beyond z');
  });

  test('error messages', () => {
    assert.equal(problem('a + c', 2), "Unknown variable c: only the paths' variables (a, b) can be used");
    assert.equal(problem('', 1), 'Expression is empty');
    assert.equal(problem('a +', 1), 'Unexpected end of expression');
    assert.equal(problem('(a', 1), 'Missing closing parenthesis');
    assert.equal(problem('a )', 1), 'Unexpected ")"');
    assert.equal(problem('a # 2', 1), 'Unexpected character "#" at position 3');
    assert.equal(problem('pow(a, 2)', 1), 'Unknown function pow (use sum, mean, avg, min, max, sqrt)');
    assert.equal(problem('sum()', 1), 'Function sum needs at least one argument');
    assert.equal(problem('sqrt(a, a)', 1), 'Function sqrt takes one argument');
    assert.equal(problem('max(a, 1', 1), 'Missing closing parenthesis after the arguments of max');
    assert.equal(problem('('.repeat(100) + 'a' + ')'.repeat(100), 1), 'Expression is nested too deeply');
    assert.equal(problem('a'.padEnd(1001, ' '), 1), 'Expression is longer than 1000 characters');
    assert.equal(
      expressionProblem('a + b', 1),
      'Unknown variable b: only earlier rows (a) can be used',
      'the widgets keep their wording',
    );
  });
});

describe('key patterns', () => {
  test('exact keys, and a regular expression when the key holds ^ or $', () => {
    assert.equal(isPattern('api'), false);
    assert.equal(keyMatches('api', 'api'), true);
    assert.equal(keyMatches('api', 'api::eu'), false);
    assert.equal(keyMatches('a.b', 'axb'), false, 'an exact key is not a pattern');
    assert.equal(keyMatches('^api', 'api::eu'), true);
    assert.equal(keyMatches('eu$', 'api::eu'), true);
    assert.equal(keyMatches('^shop::[a-z]{2}::orders$', 'shop::sk::orders'), true);
    assert.equal(keyMatches('^shop::[a-z]{2}::orders$', 'shop::svk::orders'), false);
  });

  test('patterns that could backtrack catastrophically are refused', () => {
    for (const bad of [
      '^(a+)+$',
      '^(a*)*$',
      '^(a|aa)*$',
      '^(\\w+\\s?)*$',
      '^((ab)*)+$',
      '^(a{1,5}){2,}$',
      '^(?:x+)+y$',
    ]) {
      assert.match(patternProblem(bad) ?? '', /catastrophic/, bad);
      assert.throws(() => keyMatches(bad, 'aaaa'), /refused/);
    }
    assert.match(patternProblem('^(a)\\1$') ?? '', /back-references/);
    assert.match(patternProblem('^(?<x>a)\\k<x>$') ?? '', /back-references/);
    assert.match(patternProblem('^' + 'a'.repeat(255) + '$') ?? '', /at most 255/);
    assert.match(patternProblem('^(a$') ?? '', /not a valid regular expression/);
    for (const good of [
      '^api$',
      '^api(::[a-z]+)?$',
      '^(eu|us)::orders$',
      '^[(+*]+x$',
      '^a+b*c?$',
      '^(ab){2}$',
      '^x\\(a+\\)+$',
    ]) {
      assert.equal(patternProblem(good), null, good);
    }
  });
});

describe('applying transponders to buckets', () => {
  const t = (over: Partial<Transponder>): Transponder => ({
    id: over.name ?? 'id',
    organizationId: 'o',
    sourceType: 'project',
    sourceId: 's',
    name: 'n',
    key: 'k',
    paths: ['a'],
    expression: 'a',
    response: 'r',
    enabled: true,
    order: 1,
    insertedAt: 0,
    updatedAt: 0,
    ...over,
  });

  test('writes at the response path, creating maps; no value leaves the bucket alone', () => {
    const buckets = [{ s: 6, c: 3 }, { s: 1, c: 0 }, {}];
    const errors: TransponderError[] = [];
    applyToBuckets([t({ paths: ['s', 'c'], expression: 'a / b', response: 'x.y.mean' })], buckets, errors);
    assert.deepEqual(buckets, [{ s: 6, c: 3, x: { y: { mean: 2 } } }, { s: 1, c: 0 }, {}]);
    assert.deepEqual(errors, []);
  });

  test('a later transponder reads an earlier one’s response; a non-number at a path is null', () => {
    const buckets: Record<string, unknown>[] = [{ n: { v: 2 }, m: { deep: 1 } }];
    const errors: TransponderError[] = [];
    applyToBuckets(
      [
        t({ name: '1', paths: ['n.v'], expression: 'a * 10', response: 'n.w' }),
        t({ name: '2', paths: ['n.w'], expression: 'a + 1', response: 'n.z' }),
        t({ name: '3', paths: ['m'], expression: 'a', response: 'q' }),
      ],
      buckets,
      errors,
    );
    assert.deepEqual(buckets, [{ n: { v: 2, w: 20, z: 21 }, m: { deep: 1 } }]);
  });

  test('a failing transponder is skipped whole, even when only one bucket fails', () => {
    const buckets: Record<string, unknown>[] = [{ v: 1 }, { v: 2, r: 5 }, { v: 3, r: { x: 1 } }];
    const errors: TransponderError[] = [];
    applyToBuckets(
      [
        t({ name: 'bad', paths: ['v'], expression: 'a', response: 'r' }),
        t({ name: 'broken', expression: 'a +' }),
      ],
      buckets,
      errors,
    );
    assert.deepEqual(buckets, [{ v: 1 }, { v: 2, r: 5 }, { v: 3, r: { x: 1 } }]);
    assert.deepEqual(
      errors.map((e) => e.name),
      ['bad', 'broken'],
    );
    assert.equal(errors[1]!.error, 'expression: Unexpected end of expression');
  });

  test('texts come back unchanged (the same array) when no transponder matches the key', () => {
    const texts = ['{"a":1}'];
    const errors: TransponderError[] = [];
    assert.equal(applyToTexts([t({ key: 'other' })], 'k', texts, errors), texts);
    assert.deepEqual(applyToTexts([t({ key: '^k$', response: 'b' })], 'k', texts, errors), ['{"a":1,"b":1}']);
    applyToTexts([t({ key: '^(a+)+$' })], 'k', texts, errors);
    assert.match(errors[0]!.error, /refused/);
  });

  test('texts: new top-level members spliced onto the stored text, changed members written whole', () => {
    const texts = ['{"a":2,"m":{"x":1}}', '{}', '{"a":0}', '{"a": 4, "m": {"x": 2}}'];
    const errors: TransponderError[] = [];
    const list = [
      t({ key: 'k', paths: ['a'], expression: '10 / a', response: 'd.v' }),
      t({ key: 'k', paths: ['a'], expression: 'a', response: 'm.y' }),
    ];
    const out = applyToTexts(list, 'k', texts, errors);
    assert.deepEqual(
      out.map((x) => JSON.parse(x)),
      [
        { a: 2, m: { x: 1, y: 2 }, d: { v: 5 } },
        {},
        { a: 0, m: { y: 0 } },
        { a: 4, m: { x: 2, y: 4 }, d: { v: 2.5 } },
      ],
    );
    const onlyNew = [t({ key: 'k', paths: ['a'], expression: 'a * 2', response: 'd.v' })];
    assert.deepEqual(applyToTexts(onlyNew, 'k', ['{"a":2}', '{}', '{"b":1}'], errors), [
      '{"a":2,"d":{"v":4}}',
      '{}',
      '{"b":1}',
    ]);
    assert.deepEqual(
      textsOf(onlyNew, ['{"d":1}'], [{ d: 2 }]),
      ['{"d":2}'],
      'an existing member is written whole',
    );
    assert.deepEqual(errors, []);
  });

  test('columns and buckets agree: texts, a stored number replaced, a later one reading an earlier one', () => {
    const texts = [
      '{"a":2,"b":4,"m":{"x":1}}',
      '{}',
      '{"a":0,"b":1}',
      '{"a":3,"m":{"x":7}}',
      '{"a":1,"b":2}',
    ];
    const list = [
      t({ name: '1', paths: ['a', 'b'], expression: 'b / a', response: 'd.r' }),
      t({ name: '2', paths: ['d.r'], expression: 'a * 10', response: 'd.s' }),
      t({ name: '3', paths: ['a'], expression: '-a', response: 'm.x' }),
      t({ name: '4', paths: ['a'], expression: 'a + 1', response: 'top' }),
    ];
    const fast = applyToTexts(list, 'k', texts, []).map((x) => JSON.parse(x) as unknown);
    const buckets = texts.map((x) => JSON.parse(x) as Record<string, unknown>);
    applyToBuckets(list, buckets, []);
    assert.deepEqual(fast, JSON.parse(JSON.stringify(buckets)), 'as JSON writes them (-0 as 0)');
    assert.deepEqual(fast[0], { a: 2, b: 4, m: { x: -2 }, d: { r: 2, s: 20 }, top: 3 });
    // the query's scan sees the same values, derived paths among the available ones
    const errors: TransponderError[] = [];
    const scan = scanWithTransponders(list, 'k', texts, errors)!((path) => path === 'd.s' || path === 'm.x');
    assert.deepEqual(scan.availablePaths, ['a', 'b', 'd.r', 'd.s', 'm.x', 'top']);
    const column = (path: string) => {
      const c = scan.columns.find((x) => x.path === path)!;
      return Array.from(c.index.subarray(0, c.size), (at, k) => [at, c.value[k]]);
    };
    assert.deepEqual(column('d.s'), [
      [0, 20],
      [4, 20],
    ]);
    assert.deepEqual(column('m.x'), [
      [0, -2],
      [2, -0],
      [3, -3],
      [4, -1],
    ]);
    assert.deepEqual(errors, []);
  });

  test('a repeated read of the same texts gives the same answer; a changed bucket or transponder is seen', () => {
    const list = [
      t({ name: '1', paths: ['a', 'b'], expression: 'a / b * 100', response: 'd.r' }),
      t({ name: '2', paths: ['a'], expression: 'a', response: 'm.y' }),
    ];
    const texts = ['{"a":1,"b":3,"m":{"x":1}}', '{"a":2,"b":4}', '{}'];
    const first = applyToTexts(list, 'k', texts, []);
    assert.deepEqual(first, [
      '{"a":1,"b":3,"m":{"x":1,"y":1},"d":{"r":33.33333333333333}}',
      '{"a":2,"b":4,"d":{"r":50},"m":{"y":2}}',
      '{}',
    ]);
    // equal texts in new strings (what a store returns on each read): the same answer
    const again = texts.map((x) => JSON.parse(JSON.stringify(x)) as string);
    assert.deepEqual(applyToTexts(list, 'k', again, []), first);
    // one bucket changed: its values follow
    const changed = [texts[0]!, '{"a":3,"b":4}', '{}'];
    assert.deepEqual(applyToTexts(list, 'k', changed, [])[1], '{"a":3,"b":4,"d":{"r":75},"m":{"y":3}}');
    // a changed transponder (a new object, as the repository makes): its new expression
    const edited = [t({ name: '1', paths: ['a', 'b'], expression: 'a + b', response: 'd.r' }), list[1]!];
    assert.deepEqual(applyToTexts(edited, 'k', texts, [])[1], '{"a":2,"b":4,"d":{"r":6},"m":{"y":2}}');
    // the query's scan after those reads sees the same values, and its own selection
    const scan = scanWithTransponders(list, 'k', again, [])!((path) => path === 'd.r' || path === 'b');
    assert.deepEqual(scan.availablePaths, ['a', 'b', 'd.r', 'm.x', 'm.y']);
    assert.deepEqual(
      scan.columns.map((c) => [c.path, Array.from(c.value.subarray(0, c.size))]),
      [
        ['b', [3, 4]],
        ['d.r', [(1 / 3) * 100, 50]],
      ],
    );
    // a response into a stored number is reported on every read, kept or not
    const bad = [t({ name: 'KB', paths: ['a'], expression: 'a / 1024', response: 'a.kb' })];
    for (let read = 0; read < 2; read++) {
      const errors: TransponderError[] = [];
      assert.deepEqual(applyToTexts(bad, 'k', texts, errors), texts);
      assert.equal(errors.length, 1);
    }
  });

  test('reads of a range whose buckets change one after another agree with the bucket-by-bucket path', () => {
    const list = [
      t({ name: '1', paths: ['a', 'b'], expression: 'a / b * 100', response: 'live.r' }),
      t({ name: '2', paths: ['a'], expression: 'a * 3', response: 'live.s' }),
    ];
    // mostly buckets of one shape (a read then derives only the changed ones), some of others
    const cell = fc.oneof(
      { arbitrary: fc.constant('{}'), weight: 1 },
      // a response runs into a stored number: the bucket-by-bucket path
      { arbitrary: fc.constant('{"a":1,"live":5}'), weight: 1 },
      // stored members under the responses' map
      { arbitrary: fc.constant('{"a":2,"b":8,"live":{"r":1,"x":3}}'), weight: 1 },
      {
        weight: 12,
        arbitrary: fc
          .record({
            a: fc.oneof(
              fc.integer({ min: -1000, max: 1000 }),
              fc.double({ noNaN: true, noDefaultInfinity: true }),
            ),
            b: fc.option(
              fc.oneof(
                fc.constant(0),
                fc.integer({ min: -50, max: 50 }),
                fc.double({ min: -1e6, max: 1e6, noNaN: true }),
              ),
              { freq: 8 },
            ),
          })
          .map(({ a, b }) => JSON.stringify(b === null ? { a } : { a, b })),
      },
    );
    fc.assert(
      fc.property(
        fc.array(cell, { minLength: 1, maxLength: 40 }),
        fc.array(fc.tuple(fc.nat(), cell), { minLength: 1, maxLength: 6 }),
        (texts, changes) => {
          const reads = [texts, texts.slice()];
          let next = texts.slice();
          for (const [at, text] of changes) {
            next = next.slice();
            next[at % next.length] = text;
            reads.push(next);
          }
          for (const read of reads) {
            const buckets = read.map((x) => JSON.parse(x) as Record<string, unknown>);
            applyToBuckets(list, buckets, []);
            const fast = applyToTexts(list, 'k', read, []).map((x) => JSON.parse(x) as unknown);
            assert.deepEqual(fast, JSON.parse(JSON.stringify(buckets)));
            // the query's scan sees what a scan of the written buckets sees
            const seen = scanWithTransponders(list, 'k', read, [])!(() => true);
            const written = scanSeries(JSON.parse(JSON.stringify(buckets)) as unknown[], () => true);
            const columns = (scan: typeof seen) =>
              scan.columns.map((c) => [
                c.path,
                [...c.index.subarray(0, c.size)],
                [...c.value.subarray(0, c.size)].map((v) => v + 0), // -0 is written as 0
              ]);
            assert.deepEqual(seen.availablePaths, written.availablePaths);
            assert.deepEqual(columns(seen), columns(written));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a read of the same texts again writes the same bytes (whole texts kept, members not copied again)', () => {
    const key = fc.string({ unit: 'binary', maxLength: 6 });
    const number = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    const bucket = fc
      .record(
        {
          a: number,
          b: fc.oneof(fc.constant(0), number),
          m: fc.dictionary(key, number, { maxKeys: 3 }),
          other: fc.dictionary(key, number, { maxKeys: 3 }),
        },
        { requiredKeys: [] },
      )
      .map((b) => JSON.stringify(b));
    fc.assert(
      fc.property(fc.array(bucket, { minLength: 1, maxLength: 30 }), (texts) => {
        // new transponders each time: the first read derives, the next ones find it kept
        const list = [
          t({ name: '1', paths: ['a', 'b'], expression: 'a / b * 100', response: 'derived.r' }),
          t({ name: '2', paths: ['a'], expression: 'a * 2', response: 'm.twice' }),
          t({ name: '3', paths: ['derived.r', 'a'], expression: 'a + b', response: 'derived.é€😀' }),
        ];
        const at = texts.map((_, i) => new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString());
        const bodies: Buffer[] = [];
        let members = false;
        for (let read = 0; read < 3; read++) {
          const copies = texts.map((x) => JSON.parse(JSON.stringify(x)) as string); // new strings, as a store's
          const errors: TransponderError[] = [];
          const made = applyToRead(list, 'k', copies, errors)!;
          assert.deepEqual(errors, []);
          if (read === 0) {
            // the answer as whole texts (what the writer's splicing must give)
            const whole = `{"data":{"at":${JSON.stringify(at)},"values":[${withDerived(made.values, made.derived).join(',')}]}}`;
            bodies.push(Buffer.from(whole, 'utf8'));
            members = made.derived !== undefined;
          } else if (members) assert.equal(made.derived, undefined, 'read again: whole texts');
          bodies.push(
            presentSeriesJson({
              at,
              values: made.values,
              ...(made.derived ? { derived: made.derived } : {}),
            }),
          );
        }
        for (const body of bodies.slice(1)) assert.ok(body.equals(bodies[0]!), body.toString());
        // and the values are those of the bucket-by-bucket path
        const buckets = texts.map((x) => JSON.parse(x) as Record<string, unknown>);
        applyToBuckets(list, buckets, []);
        const sent = JSON.parse(bodies[1]!.toString('utf8')) as { data: { values: unknown[] } };
        assert.deepEqual(sent.data.values, JSON.parse(JSON.stringify(buckets)));
      }),
      { numRuns: 300 },
    );
  });

  test('a response that runs into a stored number: the bucket-by-bucket path reports it, in both', () => {
    const texts = ['{"bytes":5}', '{"bytes":6}'];
    const list = [t({ name: 'KB', paths: ['bytes'], expression: 'a / 1024', response: 'bytes.kb' })];
    const errors: TransponderError[] = [];
    assert.deepEqual(applyToTexts(list, 'k', texts, errors), texts);
    assert.deepEqual(errors[0]?.error, 'response path bytes.kb runs into the value at bytes');
    const queryErrors: TransponderError[] = [];
    const scan = scanWithTransponders(list, 'k', texts, queryErrors)!(() => true);
    assert.deepEqual(scan.availablePaths, ['bytes']);
    assert.equal(queryErrors.length, 1);
  });
});

describe('expressions compiled over columns (what reads run)', () => {
  const expression: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constantFrom('a', 'b', 'c'),
      fc.oneof(fc.integer({ min: 0, max: 100 }).map(String), fc.constantFrom('0', '0.5', '1e3', '1e308')),
      fc
        .tuple(tie('e'), fc.constantFrom('+', '-', '*', '/'), tie('e'))
        .map(([l, op, r]) => `${l} ${op} ${r}`),
      tie('e').map((x) => `-(${x})`),
      tie('e').map((x) => `sqrt(${x})`),
      fc
        .tuple(
          fc.constantFrom('sum', 'mean', 'avg', 'min', 'max'),
          fc.array(tie('e'), { minLength: 1, maxLength: 3 }),
        )
        .map(([f, args]) => `${f}(${args.join(', ')})`),
    ),
  })).e;
  const cell = fc.oneof(
    fc.constant(null),
    fc.integer({ min: -3, max: 3 }),
    fc.double({ min: -1e300, max: 1e300, noNaN: true, noDefaultInfinity: true }),
  );

  test('agree with evaluate bucket by bucket (NaN where it gives null)', () => {
    fc.assert(
      fc.property(
        expression,
        fc.array(fc.tuple(cell, cell, cell), { minLength: 1, maxLength: 8 }),
        (text, rows) => {
          const expr = parseTransponderExpression(text, 3);
          const columns = [0, 1, 2].map((k) => Float64Array.from(rows, (row) => row[k] ?? NaN));
          const out = compileColumns(expr)(columns, rows.length);
          rows.forEach((row, i) => {
            const want = evaluateWith(expr, row);
            const got = out[i]!;
            if (want === null || !Number.isFinite(want))
              assert.ok(Number.isNaN(got), `${text} on ${row}: ${got}`);
            else assert.equal(got === 0 ? 0 : got, want === 0 ? 0 : want, `${text} on ${row}`);
          });
        },
      ),
      { seed: 20261127, numRuns: 400 },
    );
  });
});
