// POST /bootstrap/databases bodies (SPEC sections 4 and 8): the common fields, then the chosen
// driver's own fields. JSON and multipart/form-data share these rules, so whole numbers are also
// accepted as strings of digits (a form sends nothing else).
import * as v from 'valibot';
import { invalid } from '../../errors';
import type { DatabaseInput } from '../../domain/databases';
import { fail, ok, wholeNumber, type Parsed } from '../../domain/source-settings';
import { IDENTIFIER_MODES } from '../../drivers/sqlite/setup';
import { DRIVERS, type Driver } from '../../domain/types';
import {
  body,
  fieldErrors,
  oneOf,
  optional,
  optionalText,
  requiredText,
  rule,
  settingsEntries,
  text,
  toSettings,
} from './bootstrap';
import { bareHost, isHostName } from '../../lib/outbound';

const DEFAULT_PORTS: Record<Exclude<Driver, 'sqlite'>, number> = {
  postgres: 5432,
  mysql: 3306,
  redis: 6379,
  mongo: 27017,
};

const HOST_RULE = 'must be a DNS name or an IP address (no port, path, options or spaces)';

/**
 * host: a DNS name or IP literal and nothing else. A directory (a unix socket for pg), `?opt=`
 * or `host:port/?authSource=` (mongo client options) never reach a client library.
 */
const hostField = optional((x): Parsed<string> => {
  if (x === null) return fail('is required');
  const t = text(x, 255);
  if (!t.ok) return t;
  return isHostName(t.value) ? ok(bareHost(t.value)) : fail(HOST_RULE);
});

const port = (fallback: number) =>
  optional((x): Parsed<number> => {
    if (x === null) return ok(fallback);
    const n = wholeNumber(x);
    return n !== null && n >= 1 && n <= 65535 ? ok(n) : fail('must be an integer from 1 to 65535');
  });

/** Secrets are kept exactly as given (no trimming), but must be strings of sane length. */
const secret = optional((x): Parsed<string | null> => {
  if (x === null) return ok(null);
  if (typeof x !== 'string') return fail('must be a string');
  return x.length <= 1024 ? ok(x) : fail('must be at most 1024 characters');
});

const commonSchema = body({
  display_name: requiredText(255),
  driver: rule(oneOf(DRIVERS)),
  identifier_mode: optional((x) => (x === null ? ok('full' as const) : oneOf(IDENTIFIER_MODES)(x))),
  ...settingsEntries,
});

/** ssl: a JSON boolean, or `true` / `false` from a form. */
const flag = optional((x): Parsed<boolean | null> => {
  if (x === null) return ok(null);
  if (typeof x === 'boolean') return ok(x);
  if (x === 'true' || x === 'false') return ok(x === 'true');
  return fail('must be a boolean');
});

const redisDatabase = optional((x): Parsed<number | null> => {
  if (x === null) return ok(null);
  const n = wholeNumber(x);
  return n !== null && n >= 0 && n <= 15 ? ok(n) : fail('must be an integer from 0 to 15');
});

const URL_SCHEMES: Record<Exclude<Driver, 'sqlite'>, readonly string[]> = {
  postgres: ['postgres:', 'postgresql:'],
  mysql: ['mysql:'],
  redis: ['redis:', 'rediss:'],
  mongo: ['mongodb:'],
};

/**
 * A connection URL of the driver's scheme (kept as given: it may hold a password), holding only
 * what the fields hold: host (a DNS name or IP literal), port, user, password, database and, for
 * mongo, `?authSource=`. Any other option, a socket path, several hosts or SRV are refused: the
 * service parses the URL into those fields and no client library ever sees it.
 */
function connectionUrl(driver: Exclude<Driver, 'sqlite'>) {
  return optional((x): Parsed<string | null> => {
    if (x === null) return ok(null);
    if (typeof x !== 'string') return fail('must be a string');
    if (x.length > 2048) return fail('must be at most 2048 characters');
    let url: URL;
    try {
      url = new URL(x);
    } catch {
      return fail('must be a connection URL');
    }
    const schemes = URL_SCHEMES[driver];
    if (!schemes.includes(url.protocol))
      return fail(`must start with ${schemes.map((p) => `${p}//`).join(' or ')}`);
    if (url.hostname === '') return fail('must name a host');
    if (!isHostName(bareHost(url.hostname)))
      return fail(`must name one host that ${HOST_RULE.replace('must be', 'is')}`);
    const options = [...url.searchParams.keys()].filter((k) => !(driver === 'mongo' && k === 'authSource'));
    if (options.length > 0 || url.hash !== '') {
      return fail(`must not carry options (${options[0] ?? '#'}): give ssl and the other settings as fields`);
    }
    if (driver === 'redis' && !/^\/?(\d{1,2})?$/.test(url.pathname))
      return fail('must name the database as a number (…/0)');
    if ((driver === 'postgres' || driver === 'mysql') && url.pathname.replace(/^\//, '') === '') {
      return fail('must name the database (…/database_name)');
    }
    return ok(x);
  });
}

const DRIVER_SCHEMAS = {
  sqlite: body({ file_path: optionalText(1024, null) }),
  postgres: body({
    host: hostField,
    port: port(DEFAULT_PORTS.postgres),
    database_name: requiredText(255),
    username: requiredText(255),
    password: secret,
    ssl: flag,
  }),
  mysql: body({
    host: hostField,
    port: port(DEFAULT_PORTS.mysql),
    database_name: requiredText(255),
    username: requiredText(255),
    password: secret,
    ssl: flag,
  }),
  redis: body({
    host: hostField,
    port: port(DEFAULT_PORTS.redis),
    password: secret,
    database: redisDatabase,
    // default: one of the source's own (domain/databases.ts); `trfl` when asked for by name
    prefix: optionalText(255, null),
  }),
  mongo: body({
    host: hostField,
    port: port(DEFAULT_PORTS.mongo),
    database_name: requiredText(255),
    username: optional((x): Parsed<string | null> => (x === null ? ok(null) : text(x, 255))),
    password: secret,
    auth_source: optionalText(255, null),
  }),
} as const;

/** The `url` form: the URL replaces the connection fields; the driver's other fields stay. */
const URL_SCHEMAS = {
  postgres: body({ ssl: flag }),
  mysql: body({ ssl: flag }),
  redis: body({ database: redisDatabase, prefix: optionalText(255, null) }),
  mongo: body({ database_name: optionalText(255, null), auth_source: optionalText(255, null) }),
} as const;

/** Fields the URL already holds: giving them beside it is ambiguous. */
const URL_EXCLUDES = ['host', 'port', 'username', 'password'];

/** The connection fields of a driver given as `url` (JSON body already checked for `url`). */
function parseUrlForm(
  driver: Exclude<Driver, 'sqlite'>,
  input: Record<string, unknown>,
  errors: Record<string, string[]>,
) {
  const checked = v.safeParse(connectionUrl(driver), input.url);
  if (!checked.success) errors.url = fieldErrors(checked.issues).base ?? ['must be a connection URL'];
  for (const field of URL_EXCLUDES)
    if (input[field] !== undefined) (errors[field] ??= []).push('cannot be combined with url');
  if (driver !== 'mongo' && input.database_name !== undefined)
    (errors.database_name ??= []).push('cannot be combined with url');
  const own = v.safeParse(URL_SCHEMAS[driver] as v.GenericSchema<unknown, Record<string, unknown>>, input);
  const fields: Record<string, unknown> = { url: checked.success ? checked.output : null };
  if (own.success) {
    for (const key of Object.keys((URL_SCHEMAS[driver] as unknown as { entries: object }).entries)) {
      if (own.output[key] !== undefined) fields[key] = own.output[key];
    }
  } else Object.assign(errors, fieldErrors(own.issues));
  if (
    driver === 'mongo' &&
    checked.success &&
    fields.database_name == null &&
    new URL(checked.output as string).pathname.replace(/^\//, '') === ''
  ) {
    errors.database_name = ['is required (or name the database in url)'];
  }
  return fields;
}

/** Drops unset optional credentials so the stored config holds only what was given. */
function compact(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(fields).filter(([, value]) => value !== null && value !== undefined),
  );
}

/**
 * The body of POST /databases; `sqlite_file` may only arrive as an uploaded file (the route passes
 * it separately), so a text field of that name is refused.
 */
export function parseDatabase(input: Record<string, unknown>): DatabaseInput {
  const common = v.safeParse(commonSchema, input);
  const errors = common.success ? {} : fieldErrors(common.issues);
  const driver = oneOf(DRIVERS)(input.driver);
  let fields: Record<string, unknown> = {};
  if (driver.ok && driver.value !== 'sqlite' && input.url !== undefined && input.url !== null) {
    fields = parseUrlForm(driver.value, input, errors);
  } else if (driver.ok) {
    const own = v.safeParse(
      DRIVER_SCHEMAS[driver.value] as v.GenericSchema<unknown, Record<string, unknown>>,
      input,
    );
    if (own.success) fields = pick(own.output, driver.value);
    else Object.assign(errors, fieldErrors(own.issues));
  }
  if (driver.ok && driver.value === 'redis' && common.success && common.output.identifier_mode !== 'full') {
    errors.identifier_mode = ['must be full for redis (its only layout)'];
  }
  if (input.sqlite_file !== undefined)
    errors.sqlite_file = ['must be uploaded as a file (multipart/form-data)'];
  if (!common.success || Object.keys(errors).length > 0) throw invalid(errors);
  const b = common.output;
  const { file_path: filePath, ...driverFields } = fields;
  return {
    displayName: b.display_name,
    driver: b.driver,
    settings: toSettings(b),
    config: { ...compact(driverFields), identifier_mode: b.identifier_mode },
    filePath: typeof filePath === 'string' ? filePath : null,
  };
}

/** Only the driver's own keys (the loose body also carries every other field). */
function pick(fields: Record<string, unknown>, driver: Driver): Record<string, unknown> {
  const keys = Object.keys((DRIVER_SCHEMAS[driver] as unknown as { entries: object }).entries);
  return Object.fromEntries(keys.filter((k) => k in fields).map((k) => [k, fields[k]]));
}
