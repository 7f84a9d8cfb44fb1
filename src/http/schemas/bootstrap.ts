// Bootstrap request bodies (SPEC sections 2, 4 and 8), validated with valibot. Each field is one
// rule with its own message, so a 422 names every broken field of the body at once. Signup and
// login credentials are the exception: missing ones are a 400 (SPEC section 2).
import * as v from 'valibot';
import { badRequest, invalid } from '../../errors';
import { normalizeId } from '../../lib/ids';
import { DEFAULT_TOKEN_NAME, type LoginInput, type SignupInput } from '../../domain/accounts';
import { DEFAULT_SOURCE_TOKEN_NAME, type SourceTokenInput } from '../../domain/source-tokens';
import type { DatabaseUpdate, ProjectInput, ProjectUpdate } from '../../domain/sources';
import { parseRetention } from '../../domain/retention';
import {
  fail,
  ok,
  parseBeginningOfWeek,
  parseExpireAfter,
  parseGranularities,
  parseGranularityText,
  parseTimeframe,
  parseTimeZone,
  pickDefaultGranularity,
  type Parsed,
  type SourceSettings,
} from '../../domain/source-settings';

/** A valibot schema around a parser: its message becomes the field's 422 message. */
export function rule<T>(parse: (input: unknown) => Parsed<T>) {
  return v.pipe(
    v.unknown(),
    v.rawTransform<unknown, T>(({ dataset, addIssue, NEVER }) => {
      const result = parse(dataset.value);
      if (result.ok) return result.value;
      addIssue({ message: result.message });
      return NEVER;
    }),
  );
}

/** An optional field: absent and null both reach the parser as null (which picks the default). */
export const optional = <T>(parse: (input: unknown) => Parsed<T>) => v.optional(rule(parse), null);

/** A body object whose missing required keys are reported as `is required`. */
export const body = <E extends v.ObjectEntries>(entries: E) => v.looseObject(entries, 'is required');

/** The issues of a body, by top-level field name. */
export function fieldErrors(issues: readonly v.BaseIssue<unknown>[]): Record<string, string[]> {
  const fields: Record<string, string[]> = {};
  for (const issue of issues) {
    const key = issue.path?.[0]?.key;
    const field = typeof key === 'string' ? key : 'base';
    const list = (fields[field] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
  return fields;
}

/** Parses an entity body or throws the 422 that names its fields. */
export function parseEntity<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (!result.success) throw invalid(fieldErrors(result.issues));
  return result.output;
}

export function text(input: unknown, max: number): Parsed<string> {
  if (typeof input !== 'string') return fail('must be a string');
  const trimmed = input.trim();
  if (trimmed === '') return fail("can't be blank");
  if (trimmed.length > max) return fail(`must be at most ${max} characters`);
  return ok(trimmed);
}

export const requiredText = (max: number) =>
  rule((x) => (x === undefined || x === null ? fail<string>('is required') : text(x, max)));

export const optionalText = <D extends string | null>(max: number, fallback: D) =>
  optional((x): Parsed<string | D> => (x === null ? ok(fallback) : text(x, max)));

export function oneOf<T extends string>(values: readonly T[]) {
  return (x: unknown): Parsed<T> => {
    if (x === undefined || x === null) return fail('is required');
    if (typeof x !== 'string' || !values.includes(x as T))
      return fail(`must be one of: ${values.join(', ')}`);
    return ok(x as T);
  };
}

const flag = (fallback: boolean) => v.optional(v.boolean('must be a JSON boolean (true or false)'), fallback);

// ---- signup and login ----

const credential = v.nonNullish(v.string('must be a string'), 'is required');
const credentials = body({ email: credential, password: credential });

/** 400 when email or password is missing or not a string. */
function requireCredentials(input: unknown): void {
  const result = v.safeParse(credentials, input);
  if (result.success) return;
  const issue = result.issues[0];
  const key = issue.path?.[0]?.key;
  throw badRequest(`${typeof key === 'string' ? key : 'email'} ${issue.message}`);
}

function email(x: unknown): Parsed<string> {
  const s = String(x);
  if (s.length > 160) return fail('must be at most 160 characters');
  return /^[^\s@]+@[^\s@]+$/.test(s) ? ok(s) : fail('is not a valid email address');
}

function password(x: unknown): Parsed<string> {
  const length = [...String(x)].length;
  if (length < 8) return fail('must be at least 8 characters');
  if (length > 256) return fail('must be at most 256 characters');
  return ok(String(x));
}

const signupSchema = body({
  email: rule(email),
  password: rule(password),
  // A blank name means "no name"; a blank organization_name is refused (it would decide too much).
  name: optional((x) =>
    typeof x === 'string' && x.trim() === '' ? ok(null) : x === null ? ok(null) : text(x, 255),
  ),
  organization_name: optionalText(255, null),
  token_name: optionalText(255, DEFAULT_TOKEN_NAME),
});

export function parseSignup(input: unknown): SignupInput {
  requireCredentials(input);
  const b = parseEntity(signupSchema, input);
  return {
    email: b.email,
    password: b.password,
    name: b.name,
    organizationName: b.organization_name,
    tokenName: b.token_name,
  };
}

const loginSchema = body({ token_name: optionalText(255, DEFAULT_TOKEN_NAME) });

export function parseLogin(input: unknown): LoginInput {
  requireCredentials(input);
  const b = parseEntity(loginSchema, input);
  const { email: e, password: p } = input as { email: string; password: string };
  return { email: e, password: p, tokenName: b.token_name };
}

// ---- organizations, projects, source tokens ----

export const parseOrganization = (input: unknown): { name: string } =>
  parseEntity(body({ name: requiredText(255) }), input);

/** The time settings shared by projects and databases, default_granularity checked against the list. */
export const settingsEntries = {
  time_zone: optional(parseTimeZone),
  beginning_of_week: optional(parseBeginningOfWeek),
  granularities: optional(parseGranularities),
  default_granularity: optional(parseGranularityText),
  default_timeframe: optional(parseTimeframe),
};

type SettingsOutput = v.InferOutput<ReturnType<typeof body<typeof settingsEntries>>>;

/** Builds SourceSettings; a default_granularity outside the list is a 422. */
export function toSettings(b: SettingsOutput): SourceSettings {
  const picked = pickDefaultGranularity(b.granularities, b.default_granularity);
  if (!picked.ok) throw invalid({ default_granularity: [picked.message] });
  return {
    timeZone: b.time_zone,
    beginningOfWeek: b.beginning_of_week,
    granularities: b.granularities,
    defaultTimeframe: b.default_timeframe,
    defaultGranularity: picked.value,
  };
}

const uuidOrNull = (x: unknown): Parsed<string | null> =>
  x === null ? ok(null) : normalizeId(x) !== null ? ok(normalizeId(x)) : fail('must be a UUID');

const projectSchema = body({
  name: requiredText(255),
  ...settingsEntries,
  expire_after: optional(parseExpireAfter),
  // checked against the granularities once those are known (retentionOf)
  retention: v.optional(v.unknown()),
  project_cluster_id: optional(uuidOrNull),
});

/** The retention map of a body against the project's granularities; 422 naming `retention`. */
function retentionOf(input: unknown, granularities: readonly string[]): Record<string, string> | null {
  const parsed = parseRetention(input, granularities);
  if (!parsed.ok) throw invalid({ retention: [parsed.message] });
  return parsed.value;
}

/**
 * POST /bootstrap/projects. With metrics clusters configured, `project_cluster_id` must name one
 * (SPEC 4, 14); without any it is recorded as given.
 */
export function parseProject(input: unknown, clusters: readonly { id: string }[] = []): ProjectInput {
  const b = parseEntity(projectSchema, input);
  const cluster = b.project_cluster_id;
  if (cluster && clusters.length > 0 && !clusters.some((c) => c.id === cluster))
    throw invalid({ project_cluster_id: ['is not a configured metrics cluster'] });
  const settings = toSettings(b);
  return {
    name: b.name,
    settings,
    expireAfter: b.expire_after,
    retention: retentionOf(b.retention, settings.granularities),
    projectClusterId: b.project_cluster_id,
  };
}

/** Fixed at creation: a project never moves between metrics clusters. */
const FIXED_PROJECT_FIELDS = ['project_cluster_id'] as const;

const projectUpdateSchema = body({
  name: v.optional(requiredText(255)),
  // time_zone and beginning_of_week only while the project holds no data (domain/sources.ts)
  time_zone: v.optional(rule(parseTimeZone)),
  beginning_of_week: v.optional(rule(parseBeginningOfWeek)),
  granularities: v.optional(rule(parseGranularities)),
  default_granularity: v.optional(rule(parseGranularityText)),
  default_timeframe: v.optional(rule(parseTimeframe)),
  expire_after: v.optional(rule(parseExpireAfter)),
  retention: v.optional(v.unknown()),
  ...Object.fromEntries(
    FIXED_PROJECT_FIELDS.map((f) => [
      f,
      v.optional(v.custom<never>(() => false, 'cannot be changed after creation')),
    ]),
  ),
});

/**
 * PUT /bootstrap/projects/:id: every field optional; absent keeps the stored value, `null` clears
 * expire_after and retention. The default granularity and the retention map are checked against
 * the granularities the project will have (the new list when one is given).
 */
export function parseProjectUpdate(
  input: unknown,
  current: {
    granularities: readonly string[];
    defaultGranularity: string;
    retention?: Record<string, string> | null;
  },
): ProjectUpdate {
  const result = v.safeParse(projectUpdateSchema, input);
  const given = input as Record<string, unknown>;
  const granularities =
    result.success && result.output.granularities ? result.output.granularities : current.granularities;
  const retention = parseRetention(
    'retention' in given ? given.retention : (current.retention ?? null),
    granularities,
  );
  if (!result.success || !retention.ok) {
    const fields = result.success ? {} : fieldErrors(result.issues);
    if (!retention.ok) fields.retention = [retention.message];
    throw invalid(fields);
  }
  const b = result.output;
  const update: ProjectUpdate = {};
  if (b.name !== undefined) update.name = b.name;
  if (b.time_zone !== undefined) update.timeZone = b.time_zone;
  if (b.beginning_of_week !== undefined) update.beginningOfWeek = b.beginning_of_week;
  if (b.granularities !== undefined) update.granularities = b.granularities;
  if (b.default_timeframe !== undefined) update.defaultTimeframe = b.default_timeframe;
  const defaultGranularity = b.default_granularity ?? current.defaultGranularity;
  if (!granularities.includes(defaultGranularity)) {
    throw invalid({ default_granularity: ['must be one of the granularities'] });
  }
  if (b.default_granularity !== undefined && b.default_granularity !== null) {
    update.defaultGranularity = b.default_granularity;
  }
  if (b.expire_after !== undefined) update.expireAfter = b.expire_after;
  if ('retention' in given || b.granularities !== undefined) update.retention = retention.value;
  return update;
}

const databaseUpdateSchema = body({
  display_name: v.optional(requiredText(255)),
  default_granularity: v.optional(rule(parseGranularityText)),
  default_timeframe: v.optional(rule(parseTimeframe)),
  ...Object.fromEntries(
    ['time_zone', 'beginning_of_week', 'granularities', 'driver'].map((f) => [
      f,
      v.optional(v.custom<never>(() => false, "cannot be changed: it is part of the store's layout")),
    ]),
  ),
});

/** PATCH /bootstrap/databases/:id: the name and the dashboard defaults. */
export function parseDatabaseUpdate(input: unknown, granularities: readonly string[]): DatabaseUpdate {
  const b = parseEntity(databaseUpdateSchema, input);
  const update: DatabaseUpdate = {};
  if (b.display_name !== undefined) update.name = b.display_name;
  if (b.default_timeframe !== undefined) update.defaultTimeframe = b.default_timeframe;
  if (b.default_granularity !== undefined && b.default_granularity !== null) {
    if (!granularities.includes(b.default_granularity)) {
      throw invalid({ default_granularity: ['must be one of the granularities'] });
    }
    update.defaultGranularity = b.default_granularity;
  }
  return update;
}

const sourceTokenSchema = body({
  source_type: rule(oneOf(['database', 'project'] as const)),
  source_id: rule((x) =>
    x === undefined || x === null
      ? fail<string>('is required')
      : normalizeId(x) !== null
        ? ok(normalizeId(x)!)
        : fail('must be a UUID'),
  ),
  name: optionalText(255, DEFAULT_SOURCE_TOKEN_NAME),
  read: flag(true),
  write: flag(true),
});

export function parseSourceToken(input: unknown): SourceTokenInput {
  const b = parseEntity(sourceTokenSchema, input);
  return { sourceType: b.source_type, sourceId: b.source_id, name: b.name, read: b.read, write: b.write };
}
