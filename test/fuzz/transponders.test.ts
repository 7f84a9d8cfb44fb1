// Property test (SPEC 15): the server's transponders and the browser's widget rows evaluate the
// same language alike. For random expressions over three paths and random values (some missing,
// zeros for divisions), the derived value a GET /api/v1/metrics returns through the real server
// equals the shared module's own evaluation (src/shared/expression.ts, which the web bundle
// imports), absent exactly when that evaluation is no value. Seeded; TRANSPONDER_RUNS changes the count.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { evaluateWith, parseTransponderExpression } from '../../src/shared/expression';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';

const SEED = 20261126;
const RUNS = Number(process.env.TRANSPONDER_RUNS ?? 60);
const AT = '2026-01-24T10:30:00Z';
const RANGE = 'from=2026-01-24T10:00:00Z&to=2026-01-24T10:00:00Z&granularity=1h';

const expression: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', 'c'),
    fc.oneof(fc.integer({ min: 0, max: 100 }).map(String), fc.constantFrom('0.5', '2.25', '1e3', '.75')),
    fc.tuple(tie('e'), fc.constantFrom('+', '-', '*', '/'), tie('e')).map(([l, op, r]) => `${l} ${op} ${r}`),
    tie('e').map((x) => `(${x})`),
    tie('e').map((x) => `-${x}`),
    tie('e').map((x) => `sqrt(${x})`),
    fc
      .tuple(
        fc.constantFrom('sum', 'mean', 'avg', 'min', 'max'),
        fc.array(tie('e'), { minLength: 1, maxLength: 3 }),
      )
      .map(([f, args]) => `${f}(${args.join(', ')})`),
  ),
})).e;

const value = fc.oneof(
  fc.constant(null), // the path is not written: missing
  fc.integer({ min: -3, max: 3 }),
  fc
    .double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true })
    .map((d) => (Object.is(d, -0) ? 0 : d)),
);

let server: TestServer;
let p: ProjectAgent;
before(async () => {
  server = await startTestServer();
  p = await createProjectWithToken(server);
});
after(() => server.stop());

test('server and browser evaluation agree on random expressions', async () => {
  let run = 0;
  await fc.assert(
    fc.asyncProperty(expression, fc.tuple(value, value, value), async (text, values) => {
      run += 1;
      const key = `prop-${run}-${Math.random().toString(36).slice(2)}`;
      const auth = { token: p.sourceToken, sourceId: p.sourceId };
      const made = await request(
        server,
        'POST',
        '/api/v1/transponders',
        { name: 'p', key, paths: ['in.a', 'in.b', 'in.c'], expression: text, response: 'out' },
        auth,
      );
      assert.equal(made.status, 201, `${text}: ${made.text}`);
      const written: Record<string, number> = {};
      ['a', 'b', 'c'].forEach((name, i) => {
        if (values[i] !== null) written[name] = values[i]!;
      });
      const pointValues = Object.keys(written).length > 0 ? { in: written } : { other: 1 };
      const put = await request(
        server,
        'POST',
        '/api/v1/metrics',
        { key, at: AT, values: pointValues },
        auth,
      );
      assert.equal(put.status, 201, put.text);
      const read = await request(server, 'GET', `/api/v1/metrics?${RANGE}&key=${key}`, undefined, auth);
      assert.equal(read.status, 200, read.text);
      assert.equal(read.body.meta, undefined);
      const direct = evaluateWith(parseTransponderExpression(text, 3), values);
      const expected = direct === 0 ? 0 : direct; // JSON has no -0: the response carries 0
      const got = read.body.data.values[0].out;
      if (expected === null) assert.equal(got, undefined, `${text} with ${JSON.stringify(values)}: no value`);
      else assert.equal(got, expected, `${text} with ${JSON.stringify(values)}`);
      assert.equal(
        (await request(server, 'DELETE', `/api/v1/transponders/${made.body.data.id}`, undefined, auth))
          .status,
        200,
      );
    }),
    { seed: SEED, numRuns: RUNS },
  );
  assert.equal(run >= RUNS, true);
});
