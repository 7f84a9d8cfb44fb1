// Validation of metric points (SPEC 5.2): POST /api/v1/metrics and its batch variant.
//
// Hand-written rather than a valibot schema: this is the ingest hot path (every leaf of every
// point is visited once, and flattened to its dot path on the way), and the rules split into 400s
// (the point cannot be read) and 422s (readable, but breaks a rule), which a batch reports as 422s
// naming the point's index.
import { badRequest, invalid } from '../../../errors';
import { parseTimestamp } from '../../../shared/time';
import { SYSTEM_KEY } from '../../../model/write-set';
import type { ValidPoint } from '../../../model/point';

export const MAX_KEY_LENGTH = 255;
export const MAX_DEPTH = 32;
export const MAX_LEAVES = 1000;
export const MAX_BATCH_POINTS = 10_000;

export type { ValidPoint };

interface FieldError {
  field: string;
  message: string;
}

/** Why a point was refused: `unreadable` maps to 400, otherwise to 422. */
interface PointErrors {
  unreadable: boolean;
  errors: FieldError[];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function keyLength(key: string): number {
  return key.length <= MAX_KEY_LENGTH ? key.length : [...key].length; // code points, not UTF-16 units
}

// White space in Unicode's sense (\s: tab, no-break space, the U+2000 spaces, ideographic space,
// BOM...) and the zero-width characters that print as nothing: a key of only these is blank.
const BLANK = /^[\s\u180e\u200b-\u200d\u2060]*$/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// The points of a batch mostly share their key: the last key found good is not checked again.
let lastGoodKey: string | null = null;

/** Why a key cannot be read (400), or null. */
function keyError(key: unknown): string | null {
  if (key === lastGoodKey) return null;
  if (typeof key !== 'string' || key.length === 0 || keyLength(key) > MAX_KEY_LENGTH) {
    return `must be a string of 1 to ${MAX_KEY_LENGTH} characters`;
  }
  if (BLANK.test(key)) return 'must not be blank';
  if (LONE_SURROGATE.test(key)) return 'must be well-formed Unicode (it holds a lone surrogate)';
  lastGoodKey = key;
  return null;
}

/** The 400-level checks: the fields every point must carry in a readable form. */
function readableErrors(body: Record<string, unknown>, atMs: number | null): FieldError[] {
  const errors: FieldError[] = [];
  const { key, at, values } = body;
  if (key === undefined) errors.push({ field: 'key', message: 'is required' });
  else {
    const problem = keyError(key);
    if (problem) errors.push({ field: 'key', message: problem });
  }
  if (at === undefined) errors.push({ field: 'at', message: 'is required' });
  else if (atMs === null) {
    errors.push({ field: 'at', message: 'must be an RFC 3339 timestamp with a time zone offset' });
  }
  if (values === undefined) errors.push({ field: 'values', message: 'is required' });
  else if (!isObject(values)) errors.push({ field: 'values', message: 'must be an object' });
  return errors;
}

interface Leaves {
  paths: string[];
  values: number[];
  dotted: boolean;
  error: string | null;
}

// hasOwnProperty.call rather than Object.hasOwn: V8 optimizes it inside for-in (about half the
// cost of the walk of a typical point).
const hasOwn = Object.prototype.hasOwnProperty;

function walkLeaves(node: Record<string, unknown>, prefix: string, depth: number, out: Leaves): void {
  for (const name in node) {
    if (!hasOwn.call(node, name)) continue;
    const value = node[name];
    const path = prefix === '' ? name : `${prefix}.${name}`;
    if (name.includes('.')) out.dotted = true;
    if (isObject(value)) {
      if (depth >= MAX_DEPTH) out.error = `must not be nested deeper than ${MAX_DEPTH} levels (at ${path})`;
      else walkLeaves(value, path, depth + 1, out);
    } else if (typeof value === 'number' && Number.isFinite(value)) {
      if (out.paths.length >= MAX_LEAVES) out.error = `must not have more than ${MAX_LEAVES} leaves`;
      else {
        out.paths.push(path);
        out.values.push(value);
      }
    } else {
      out.error = `leaf ${path} must be a finite number`;
    }
    if (out.error) return;
  }
}

/** Keeps the later of two spellings of one path (`{"a.b": 1, a: {b: 2}}` is `a.b` = 2). */
function dedupe(leaves: Leaves): void {
  const last = new Map<string, number>();
  leaves.paths.forEach((path, i) => last.set(path, i));
  if (last.size === leaves.paths.length) return;
  leaves.paths = [...last.keys()];
  leaves.values = [...last.values()].map((i) => leaves.values[i]!);
}

function ruleErrors(body: Record<string, unknown>, leaves: Leaves): FieldError[] {
  const errors: FieldError[] = [];
  if (body.key === SYSTEM_KEY)
    errors.push({ field: 'key', message: `must not be the system key ${SYSTEM_KEY}` });
  if (leaves.error) errors.push({ field: 'values', message: leaves.error });
  else if (leaves.paths.length === 0)
    errors.push({ field: 'values', message: 'must hold at least one numeric leaf' });
  const { operation, untracked } = body;
  if (operation !== undefined && operation !== 'track' && operation !== 'assert') {
    errors.push({ field: 'operation', message: 'must be track or assert' });
  }
  if (untracked !== undefined && typeof untracked !== 'boolean') {
    errors.push({ field: 'untracked', message: 'must be a boolean' });
  }
  return errors;
}

function checkPoint(body: unknown): ValidPoint | PointErrors {
  if (!isObject(body)) return { unreadable: true, errors: [{ field: '', message: 'must be a JSON object' }] };
  const atMs = parseTimestamp(body.at);
  const unreadable = readableErrors(body, atMs);
  if (unreadable.length > 0) return { unreadable: true, errors: unreadable };
  const leaves: Leaves = { paths: [], values: [], dotted: false, error: null };
  walkLeaves(body.values as Record<string, unknown>, '', 1, leaves);
  const broken = ruleErrors(body, leaves);
  if (broken.length > 0) return { unreadable: false, errors: broken };
  if (leaves.dotted) dedupe(leaves);
  return {
    key: body.key as string,
    atMs: atMs!,
    assert: body.operation === 'assert',
    untracked: body.untracked === true,
    paths: leaves.paths,
    values: leaves.values,
  };
}

function isValid(result: ValidPoint | PointErrors): result is ValidPoint {
  return !('errors' in result);
}

function fieldMap(errors: FieldError[], prefix: string): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const { field, message } of errors) {
    const name = field === '' ? prefix : prefix === '' ? field : `${prefix}.${field}`;
    (fields[name || 'body'] ??= []).push(message);
  }
  return fields;
}

/** One point of POST /api/v1/metrics: 400 when unreadable, 422 naming the fields otherwise. */
export function parsePoint(body: unknown): ValidPoint {
  const result = checkPoint(body);
  if (isValid(result)) return result;
  if (result.unreadable) {
    const first = result.errors[0]!;
    throw badRequest(
      first.field === '' ? `Request body ${first.message}` : `${first.field} ${first.message}`,
    );
  }
  throw invalid(fieldMap(result.errors, ''));
}

/** `{points: [...]}` of POST /api/v1/metrics/batch: all valid, or 422 naming the first bad index. */
export function parseBatch(body: unknown): ValidPoint[] {
  if (!isObject(body)) throw badRequest('Request body must be a JSON object');
  const { points } = body;
  if (points === undefined) throw badRequest('points is required');
  if (!Array.isArray(points)) throw badRequest('points must be an array');
  if (points.length === 0 || points.length > MAX_BATCH_POINTS) {
    throw invalid({ points: [`must hold 1 to ${MAX_BATCH_POINTS} points`] });
  }
  const valid: ValidPoint[] = new Array(points.length);
  for (let i = 0; i < points.length; i++) {
    const result = checkPoint(points[i]);
    if (!isValid(result)) throw invalid(fieldMap(result.errors, `points[${i}]`));
    valid[i] = result;
  }
  return valid;
}
