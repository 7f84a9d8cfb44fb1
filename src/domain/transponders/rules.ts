// The body of POST/PUT /api/v1/transponders (SPEC 15): at the top level or under `transponder`;
// `config` ({paths, expression, response}) or the same three at the top level; `enabled` a boolean
// or "true"/"false"; `order` an integer or a string of one. Every broken rule is a 422 naming its
// field, the config's under `config`. On an update, fields left out keep their value.
import { invalid } from '../../errors';
import { MAX_TRANSPONDER_PATHS, expressionProblem } from '../../shared/expression';
import type { TransponderFields } from '../../storage/transponders';
import { isPattern, patternProblem } from '../../shared/key-pattern';

const MAX_NAME = 255;
const MAX_PATH = 255;

type Body = Record<string, unknown>;
const isObject = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

function pathProblem(what: string, value: unknown): string | null {
  if (value !== undefined && value !== null && typeof value !== 'string') return `${what} must be a string`;
  if (typeof value !== 'string' || value.trim() === '') return `${what} can't be blank`;
  if (value.includes('*')) return `${what} must not contain wildcards (*)`;
  if (value.length > MAX_PATH) return `${what} must be at most ${MAX_PATH} characters`;
  if (value.split('.').some((part) => part === ''))
    return `${what} must be a dot path without empty segments`;
  return null;
}

/** Whether a body gives the transponder's order (else a new one goes last: the repository's insert at the end). */
export function orderGiven(raw: Body): boolean {
  const body = isObject(raw.transponder) ? raw.transponder : raw;
  return body.order !== undefined && body.order !== null;
}

/**
 * The transponder's fields from a request body, over `base` (the stored transponder on an update,
 * null on a create; `nextOrder` is the default order of a new one). Throws a 422 AppError.
 */
export function transponderFields(
  raw: Body,
  base: TransponderFields | null,
  nextOrder: number,
): TransponderFields {
  const body = isObject(raw.transponder) ? raw.transponder : raw;
  const config = isObject(body.config) ? body.config : {};
  const pick = (name: string): unknown => (config[name] !== undefined ? config[name] : body[name]);
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);

  const name = body.name ?? base?.name;
  if (name !== undefined && name !== null && typeof name !== 'string') add('name', 'must be a string');
  else if (typeof name !== 'string' || name.trim() === '') add('name', "can't be blank");
  else if (name.length > MAX_NAME) add('name', `should be at most ${MAX_NAME} character(s)`);

  const key = body.key ?? base?.key;
  if (key !== undefined && key !== null && typeof key !== 'string') add('key', 'must be a string');
  else if (typeof key !== 'string' || key.trim() === '') add('key', "can't be blank");
  else if (key.length > MAX_PATH) add('key', `should be at most ${MAX_PATH} character(s)`);
  else if (isPattern(key)) {
    const problem = patternProblem(key);
    if (problem) add('key', problem);
  }

  if (body.config !== undefined && !isObject(body.config))
    add('config', 'must be an object with paths, expression and response');
  const paths = pick('paths') ?? base?.paths;
  let pathCount = 0;
  if (!Array.isArray(paths) || paths.length === 0) add('config', 'paths must be a list of 1 to 26 paths');
  else if (paths.length > MAX_TRANSPONDER_PATHS)
    add('config', `paths must hold at most ${MAX_TRANSPONDER_PATHS} paths (one per variable a..z)`);
  else {
    pathCount = paths.length;
    paths.forEach((p, i) => {
      const problem = pathProblem(`paths[${i}]`, p);
      if (problem) add('config', problem);
    });
  }
  const expression = pick('expression') ?? base?.expression;
  if (expression !== undefined && expression !== null && typeof expression !== 'string')
    add('config', 'expression must be a string');
  else if (typeof expression !== 'string' || expression.trim() === '')
    add('config', "expression can't be blank");
  else if (pathCount > 0) {
    const problem = expressionProblem(expression, pathCount, "the paths' variables");
    if (problem) add('config', `expression: ${problem}`);
  }
  const response = pick('response') ?? base?.response;
  const responseProblem = pathProblem('response', response);
  if (responseProblem) add('config', responseProblem);

  let enabled: unknown = body.enabled ?? base?.enabled ?? true;
  if (enabled === 'true') enabled = true;
  else if (enabled === 'false') enabled = false;
  if (typeof enabled !== 'boolean') add('enabled', 'must be true or false');

  let order: unknown = body.order ?? base?.order ?? nextOrder;
  if (typeof order === 'string' && /^-?\d{1,9}$/.test(order.trim())) order = Number(order.trim());
  if (typeof order !== 'number' || !Number.isSafeInteger(order) || Math.abs(order) > 1e9)
    add('order', 'must be an integer');

  if (Object.keys(errors).length > 0) throw invalid(errors);
  return {
    name: (name as string).trim(),
    key: key as string,
    paths: (paths as string[]).map((p) => p.trim()),
    expression: expression as string,
    response: (response as string).trim(),
    enabled: enabled as boolean,
    order: order as number,
  };
}
