// Request bodies of /dashboards and /dashboard-groups: the envelope (`dashboard` / `dashboard_group`
// or the top level) and the top-level fields' types. Every field is optional here: which ones a
// create needs, and the rules that need the database (sources, groups, granularities), payload
// widgets and segments live in src/domain/dashboards. Unknown fields are dropped.
import * as v from 'valibot';
import { badRequest, invalidField } from '../../errors';
import { ErrorBag } from '../../domain/dashboards/issues';
import { PERIOD_MESSAGE, isPeriod } from '../../domain/dashboards/periods';
import { DEPTH_MESSAGE, MAX_DOCUMENT_DEPTH, depthWithin } from '../../domain/dashboards/limits';

const MAX_TEXT = 255;
const MAX_POSITION = 2_147_483_647;
const chars = (s: string) => [...s].length;

const text = v.string('must be a string');
const name = v.pipe(
  text,
  v.check((s: string) => s.trim() !== '', 'must not be blank'),
  v.check((s: string) => chars(s) <= MAX_TEXT, `must be at most ${MAX_TEXT} characters`),
);
const key = v.pipe(
  text,
  v.minLength(1, 'must not be empty'),
  // A key of spaces matches no metric anyone can type (SPEC 6 allows 1..255 characters).
  v.check((s: string) => s === '' || s.trim() !== '', 'must not be blank'),
  v.check((s: string) => chars(s) <= MAX_TEXT, `must be at most ${MAX_TEXT} characters`),
);
const flag = v.boolean('must be true or false');
const position = v.pipe(
  v.number('must be an integer'),
  v.integer('must be an integer'),
  v.minValue(0, 'must be 0 or more'),
  v.maxValue(MAX_POSITION, `must be at most ${MAX_POSITION}`),
);
const period = v.pipe(text, v.check(isPeriod, PERIOD_MESSAGE));
// Checked here, before anything recursive walks the document (SPEC 6: at most 32 levels).
const document = v.pipe(
  v.unknown(),
  v.check((value: unknown) => depthWithin(value, MAX_DOCUMENT_DEPTH), DEPTH_MESSAGE),
);
const sourceType = v.picklist(['database', 'project'], 'must be one of database, project');

const DASHBOARD_FIELDS = v.object({
  name: v.optional(name),
  key: v.optional(key),
  visibility: v.optional(flag),
  locked: v.optional(flag),
  position: v.optional(position),
  default_timeframe: v.optional(period),
  default_granularity: v.optional(period),
  group_id: v.optional(v.nullable(v.string('must be a dashboard group id or null'))),
  source: v.optional(v.object({ type: sourceType, id: text }, 'must be an object {type, id}')),
  source_type: v.optional(sourceType),
  source_id: v.optional(text),
  // null is what a dashboard of a project source shows, so a client echoing one back may send it
  database_id: v.optional(v.nullable(v.string('must be a string or null'))),
  payload: v.optional(document),
  segments: v.optional(document),
});
export type DashboardFields = v.InferOutput<typeof DASHBOARD_FIELDS>;

const GROUP_FIELDS = v.object({ name: v.optional(name), position: v.optional(position) });
export type GroupFields = v.InferOutput<typeof GROUP_FIELDS>;

/** The fields: under `envelope` when the body has that key, else the body itself. */
export function unwrap(body: Record<string, unknown>, envelope: string): Record<string, unknown> {
  if (!(envelope in body)) return body;
  const inner = body[envelope];
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) {
    throw invalidField(envelope, 'must be an object');
  }
  return inner as Record<string, unknown>;
}

/**
 * Parses the fields a schema knows; issues go to `bag` and the broken fields are left out of the
 * result, so the domain checks can still run on the rest and one 422 names every problem.
 */
function parseLenient<T>(
  schema: v.GenericSchema<unknown, T>,
  fields: Record<string, unknown>,
  bag: ErrorBag,
): T {
  const first = v.safeParse(schema, fields, { abortEarly: false });
  if (first.success) return first.output;
  bag.addIssues('', first.issues);
  const broken = new Set(first.issues.map((issue) => issue.path?.[0]?.key));
  const rest = Object.fromEntries(Object.entries(fields).filter(([field]) => !broken.has(field)));
  const second = v.safeParse(schema, rest);
  if (!second.success) throw new Error('dashboard fields schema must accept any subset of valid fields');
  return second.output;
}

export const parseDashboardFields = (fields: Record<string, unknown>, bag: ErrorBag): DashboardFields =>
  parseLenient(DASHBOARD_FIELDS, fields, bag);

export const parseGroupFields = (fields: Record<string, unknown>, bag: ErrorBag): GroupFields =>
  parseLenient(GROUP_FIELDS, fields, bag);

// The dashboards list is paged (SPEC 6): `limit` 1..1000 (default 100), `offset` 0 or more.
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1_000;
const MAX_OFFSET = 1_000_000_000;

function pageNumber(name: string, min: number, max: number) {
  return v.pipe(
    v.string(`${name} must be given once`),
    v.regex(/^\d{1,10}$/, `${name} must be an integer from ${min} to ${max}`),
    v.transform(Number),
    v.minValue(min, `${name} must be an integer from ${min} to ${max}`),
    v.maxValue(max, `${name} must be an integer from ${min} to ${max}`),
  );
}

const PAGE = v.object({
  limit: v.optional(pageNumber('limit', 1, MAX_PAGE_LIMIT), String(DEFAULT_PAGE_LIMIT)),
  offset: v.optional(pageNumber('offset', 0, MAX_OFFSET), '0'),
});
export type Page = v.InferOutput<typeof PAGE>;

/** `limit` and `offset` of a list request's query string, else 400 naming the parameter. */
export function parsePage(query: Record<string, unknown>): Page {
  const result = v.safeParse(PAGE, { limit: query.limit, offset: query.offset });
  if (!result.success) throw badRequest(result.issues[0].message);
  return result.output;
}
