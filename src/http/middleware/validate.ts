// validate(schema): the one place a request's body and query are checked, before the handler runs.
// The router mounts it on every route that reads a body or a query; the handler reads the result
// through the same validator, typed (`input.body(ctx)`), never from ctx.state or ctx.query.
//
// A schema is a parser, (input, ctx) => value, that throws the SPEC's AppError (400 for a body or
// parameter that cannot be read, 422 naming the fields of an entity body); the parsers of
// src/http/schemas/ and the domain's own (a metric point, a series range) are such. A bare valibot
// schema is taken too: a body's issues become a 422 by field, a query's first issue a 400. The
// parser gets the context for what the edge already knows (the token's source, for its
// granularities and zone). The batch endpoint's body is the exception: its bytes go to the batch
// scanner (src/domain/metrics/batch-*.ts), which reads and checks them in one pass, off the event
// loop for large bodies, and is that body's validator.
import type { Context, Next } from 'koa';
import * as v from 'valibot';
import { badRequest, invalid } from '../../errors';
import { stateOf } from '../state';

export type Parser<T> = (input: unknown, ctx: Context) => T;
export type Schema<T> = Parser<T> | v.GenericSchema<unknown, T>;
/**
 * A query parser gets the parameters as Koa parsed them (a name given twice is an array). It may
 * answer a promise when it needs a repository (the token's or the path's source); the body is
 * parsed once it settles.
 */
export type QueryParser<T> = (
  query: Record<string, string | string[] | undefined>,
  ctx: Context,
) => T | Promise<T>;
export type QuerySchema<T> = QueryParser<T> | v.GenericSchema<unknown, T>;

export interface Validator<B, Q> {
  /** the middleware */
  (ctx: Context, next: Next): Promise<void>;
  /** the validated body (the route's body middleware and this validator ran) */
  body(ctx: Context): B;
  /** the validated body, forgotten by the request from here on (a large one need not outlive its use) */
  takeBody(ctx: Context): B;
  /** the validated query */
  query(ctx: Context): Q;
}

/** The issues of a body, by top-level field name ('base' for the body itself). */
function fieldsOf(issues: readonly v.BaseIssue<unknown>[]): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const issue of issues) {
    const key = issue.path?.[0]?.key;
    const list = (fields[typeof key === 'string' ? key : 'base'] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  return fields;
}

function runBody<T>(schema: Schema<T>, input: unknown, ctx: Context): T {
  if (typeof schema === 'function') return schema(input, ctx);
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw invalid(fieldsOf(result.issues));
}

function runQuery<T>(schema: QuerySchema<T>, ctx: Context): T | Promise<T> {
  if (typeof schema === 'function') return schema(ctx.query, ctx);
  const result = v.safeParse(schema, ctx.query);
  if (result.success) return result.output;
  throw badRequest(result.issues[0].message);
}

/** A part not validated (or taken) for this request. */
const NONE: unique symbol = Symbol('not validated');

interface Checked<B, Q> {
  body: B | typeof NONE;
  query: Q | typeof NONE;
}

export function validate<B = undefined, Q = undefined>(schemas: {
  body?: Schema<B>;
  query?: QuerySchema<Q>;
}): Validator<B, Q> {
  const checked = new WeakMap<Context, Checked<B, Q>>();
  const unchecked = (part: string) => new Error(`validate: no ${part} was validated for this request`);
  // Not an async function: the raw body is not kept while the handler awaits (see takeBody in body.ts).
  function check(ctx: Context, next: Next): Promise<void> {
    try {
      const result: Checked<B, Q> = { body: NONE, query: NONE };
      if (!schemas.query) return checkBody(ctx, next, result);
      const query = runQuery(schemas.query, ctx);
      if (!(query instanceof Promise)) {
        result.query = query;
        return checkBody(ctx, next, result);
      }
      return query.then((value) => {
        result.query = value;
        return checkBody(ctx, next, result);
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }
  function checkBody(ctx: Context, next: Next, result: Checked<B, Q>): Promise<void> {
    try {
      if (schemas.body) {
        const state = stateOf(ctx);
        const raw = state.body;
        state.body = undefined;
        result.body = runBody(schemas.body, raw, ctx);
      }
      checked.set(ctx, result);
    } catch (err) {
      return Promise.reject(err);
    }
    return next();
  }
  return Object.assign(check, {
    body(ctx: Context): B {
      const found = checked.get(ctx);
      const body = found ? found.body : NONE;
      if (body === NONE) throw unchecked('body');
      return body;
    },
    takeBody(ctx: Context): B {
      const found = checked.get(ctx);
      const body = found ? found.body : NONE;
      if (body === NONE || !found) throw unchecked('body');
      found.body = NONE;
      return body;
    },
    query(ctx: Context): Q {
      const found = checked.get(ctx);
      const query = found ? found.query : NONE;
      if (query === NONE) throw unchecked('query');
      return query;
    },
  });
}
