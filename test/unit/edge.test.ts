// The HTTP edge's own pieces without a server: AppError's cause and expose flag as toHttp and the
// error middleware treat them, and validate(schema) as handlers see it. The routes that use them
// are covered through the real server by test/http/*.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Context } from 'koa';
import * as v from 'valibot';
import { AppError, badRequest, toHttp, unavailable } from '../../src/errors';
import { errorHandler } from '../../src/http/middleware/errors';
import { validate } from '../../src/http/middleware/validate';
import type { Logger } from '../../src/lib/log';

type Line = [level: string, msg: string, fields: Record<string, unknown>];

function recordingLog(lines: Line[]): Logger {
  const at =
    (level: string) =>
    (msg: string, fields: Record<string, unknown> = {}) =>
      void lines.push([level, msg, fields]);
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } as unknown as Logger;
}

/** Just what the middleware under test reads and writes of a Koa context. */
function fakeContext(fields: { body?: unknown; query?: Record<string, string> } = {}) {
  const headers: Record<string, string> = {};
  const ctx = {
    state: { requestId: 'req-1', body: fields.body } as Record<string, unknown>,
    query: fields.query ?? {},
    method: 'POST',
    path: '/api/v1/x',
    status: 404,
    body: undefined as unknown,
    headers,
    set(values: Record<string, string>) {
      Object.assign(headers, values);
    },
  };
  return ctx;
}

const asContext = (ctx: ReturnType<typeof fakeContext>) => ctx as unknown as Context;

describe('AppError: cause and expose', () => {
  test('the cause rides on the error for the log; the answer never holds it', () => {
    const driver = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432 password=hunter2'), {
      code: 'ECONNREFUSED',
    });
    const err = unavailable('The postgres database source is unavailable, retry later', 5);
    const withCause = new AppError(err.kind, err.message, { ...err.options, cause: driver });
    assert.equal(withCause.cause, driver);
    const answer = toHttp(withCause);
    assert.deepEqual(answer, {
      status: 503,
      body: { errors: { detail: 'The postgres database source is unavailable, retry later' } },
      headers: { 'Retry-After': '5' },
    });
    assert.doesNotMatch(JSON.stringify(answer), /ECONNREFUSED|hunter2/);
    assert.equal('cause' in withCause.options, false, 'the cause is no part of what travels to the answer');
  });

  test('expose: 4xx and the written 5xx messages by default; a 500 never, whatever it asks', () => {
    assert.equal(badRequest('from is required').expose, true);
    assert.deepEqual(toHttp(new AppError('internal', 'SQLITE_CORRUPT at page 7', { expose: true })).body, {
      errors: { detail: 'Internal server error' },
    });
    assert.deepEqual(toHttp(new AppError('bad_request', 'parser state 0x1f', { expose: false })).body, {
      errors: { detail: 'Bad Request' },
    });
    assert.deepEqual(
      toHttp(new AppError('unavailable', 'pool of host db7 exhausted', { expose: false, retryAfter: 1 })),
      {
        status: 503,
        body: { errors: { detail: 'Service unavailable, retry later' } },
        headers: { 'Retry-After': '1' },
      },
    );
    assert.deepEqual(toHttp(new Error('secret internals')).body, {
      errors: { detail: 'Internal server error' },
    });
  });

  test('the error middleware logs the cause with the request id and answers without it', async () => {
    const lines: Line[] = [];
    const handle = errorHandler(recordingLog(lines));
    const ctx = fakeContext();
    const cause = Object.assign(new Error('getaddrinfo ENOTFOUND db.internal'), { code: 'ENOTFOUND' });
    await handle(asContext(ctx), () =>
      Promise.reject(
        new AppError('unavailable', 'The mysql database source is unavailable, retry later', {
          cause,
          retryAfter: 5,
        }),
      ),
    );
    assert.equal(ctx.status, 503);
    assert.doesNotMatch(JSON.stringify(ctx.body), /ENOTFOUND|db\.internal/);
    assert.deepEqual(
      lines.map(([level, msg]) => [level, msg]),
      [['warn', 'store unavailable']],
    );
    assert.equal(lines[0]![2].request_id, 'req-1');
    assert.equal(lines[0]![2].error, 'ENOTFOUND: getaddrinfo ENOTFOUND db.internal');
    assert.equal(lines[0]![2].detail, 'The mysql database source is unavailable, retry later');

    lines.length = 0;
    const refused = fakeContext();
    await handle(asContext(refused), () =>
      Promise.reject(
        new AppError('conflict', 'Schema is not the Trifle layout', {
          cause: new Error('no such table: trifle_stats'),
        }),
      ),
    );
    assert.deepEqual(refused.body, { errors: { detail: 'Schema is not the Trifle layout' } });
    assert.deepEqual(
      lines.map(([level, msg, f]) => [level, msg, f.error]),
      [['warn', 'request refused', 'Error: no such table: trifle_stats']],
    );

    lines.length = 0;
    const fault = fakeContext();
    await handle(asContext(fault), () => Promise.reject(new TypeError('x is undefined')));
    assert.deepEqual([fault.status, fault.body], [500, { errors: { detail: 'Internal server error' } }]);
    assert.equal(lines[0]![1], 'request failed');
    assert.match(String(lines[0]![2].error), /TypeError: x is undefined/);
  });
});

describe('validate(schema)', () => {
  const next = () => Promise.resolve();

  test('a parser gets the body, which leaves ctx.state; the handler reads the typed result', async () => {
    const seen: unknown[] = [];
    const input = validate({
      body: (body: unknown, ctx) => {
        seen.push(body, ctx.path);
        if (typeof body !== 'object' || body === null) throw badRequest('Request body must be a JSON object');
        return { name: String((body as { name?: unknown }).name) };
      },
    });
    const ctx = fakeContext({ body: { name: 'a' } });
    await input(asContext(ctx), next);
    assert.deepEqual(seen, [{ name: 'a' }, '/api/v1/x']);
    assert.equal(ctx.state.body, undefined, 'the raw body is not kept');
    const typed: { name: string } = input.body(asContext(ctx));
    assert.deepEqual(typed, { name: 'a' });
    assert.deepEqual(input.takeBody(asContext(ctx)), { name: 'a' });
    assert.throws(() => input.body(asContext(ctx)), /no body was validated/, 'taken once');

    let ran = false;
    const bad = fakeContext({ body: 'text' });
    await assert.rejects(
      input(asContext(bad), async () => void (ran = true)),
      (err: AppError) => err.status === 400,
    );
    assert.equal(ran, false, 'the handler does not run on a refused body');
  });

  test('a valibot schema: a body becomes a 422 by field, a query a 400 with the first message', async () => {
    const entity = validate({
      body: v.object({ name: v.string('must be text'), size: v.number('must be a number') }),
    });
    await assert.rejects(
      entity(asContext(fakeContext({ body: { name: 1, size: 'x' } })), next),
      (err: AppError) => {
        assert.deepEqual(toHttp(err).body, {
          errors: { name: ['must be text'], size: ['must be a number'] },
        });
        return err.status === 422;
      },
    );
    const page = validate({
      query: v.object({ limit: v.pipe(v.string(), v.regex(/^\d+$/, 'limit must be an integer')) }),
    });
    await assert.rejects(page(asContext(fakeContext({ query: { limit: 'ten' } })), next), (err: AppError) => {
      assert.deepEqual(toHttp(err).body, { errors: { detail: 'limit must be an integer' } });
      return err.status === 400;
    });
    const ok = fakeContext({ query: { limit: '10' } });
    await page(asContext(ok), next);
    assert.deepEqual(page.query(asContext(ok)), { limit: '10' });
  });

  test('an accessor on a request its validator did not see is a fault, not a client error', () => {
    const input = validate({ query: () => 1 });
    assert.throws(() => input.query(asContext(fakeContext())), /no query was validated/);
  });
});

/** The edge's source files (src/http, src/intake), relative to the repository. */
function edgeFiles(): string[] {
  const root = path.join(import.meta.dirname, '../..');
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts')) out.push(rel);
    }
  };
  walk('src/http');
  walk('src/intake');
  return out.map((rel) => path.join(root, rel));
}

/** Code (comments dropped) that reads a request's query, body or state past validate() and state.ts. */
const PAST_THE_EDGE = [
  /\bctx\.query\b/,
  /\bctx\.request\.body\b/,
  /\bctx\.state\b/,
  /\bas (UserAuth|SourceAuth|Auth|Source)\b/,
];
function readsPastTheEdge(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line))
    .filter((line) => PAST_THE_EDGE.some((pattern) => pattern.test(line)));
}

describe('the edge reads requests only through validate() and state.ts', () => {
  test('the check sees each way around them', () => {
    const lines = [
      'const q = ctx.query.q;',
      'const b = ctx.request.body;',
      'ctx.state.auth = auth;',
      'const s = ctx.state.source as Source;',
      '// ctx.query in a comment',
      'const { source } = input.series.query(ctx);',
    ];
    assert.deepEqual(readsPastTheEdge(lines.join('\n')), lines.slice(0, 4));
  });

  test('no file of src/http or src/intake but validate.ts and state.ts does', () => {
    const files = edgeFiles();
    assert.ok(
      files.some((file) => file.endsWith(path.join('routes', 'session.ts'))),
      'the walk found the routes',
    );
    const found = files
      .filter(
        (file) =>
          !file.endsWith(path.join('middleware', 'validate.ts')) &&
          !file.endsWith(path.join('http', 'state.ts')),
      )
      .flatMap((file) =>
        readsPastTheEdge(readFileSync(file, 'utf8')).map((line) => `${path.basename(file)}: ${line.trim()}`),
      );
    assert.deepEqual(found, []);
  });
});
