// POST /bootstrap/databases bodies (SPEC sections 4 and 8): the common fields, then the chosen
// driver's own fields. JSON and multipart/form-data share these rules, so whole numbers are also
// accepted as strings of digits (a form sends nothing else).
import * as v from 'valibot';
import { invalid } from '../../errors';
import type { DatabaseInput } from '../../domain/databases';
import { fail, ok, wholeNumber, type Parsed } from '../../domain/source-settings';
import { IDENTIFIER_MODES } from '../../drivers/sqlite-setup';
import { DRIVERS, type Driver } from '../../domain/types';
import { body, fieldErrors, oneOf, optional, optionalText, requiredText, rule, settingsEntries, text, toSettings } from './bootstrap';

const DEFAULT_PORTS: Record<Exclude<Driver, 'sqlite'>, number> = { postgres: 5432, mysql: 3306, redis: 6379, mongo: 27017 };
/** The Trifle::Stats redis driver's default key prefix. */
const DEFAULT_REDIS_PREFIX = 'trfl';

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

const DRIVER_SCHEMAS = {
  sqlite: body({ file_path: optionalText(1024, null) }),
  postgres: body({
    host: requiredText(255),
    port: port(DEFAULT_PORTS.postgres),
    database_name: requiredText(255),
    username: requiredText(255),
    password: secret,
  }),
  mysql: body({
    host: requiredText(255),
    port: port(DEFAULT_PORTS.mysql),
    database_name: requiredText(255),
    username: requiredText(255),
    password: secret,
  }),
  redis: body({ host: requiredText(255), port: port(DEFAULT_PORTS.redis), prefix: optionalText(255, DEFAULT_REDIS_PREFIX) }),
  mongo: body({
    host: requiredText(255),
    port: port(DEFAULT_PORTS.mongo),
    database_name: requiredText(255),
    username: optional((x): Parsed<string | null> => (x === null ? ok(null) : text(x, 255))),
    password: secret,
  }),
} as const;

/** Drops unset optional credentials so the stored config holds only what was given. */
function compact(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined));
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
  if (driver.ok) {
    const own = v.safeParse(DRIVER_SCHEMAS[driver.value] as v.GenericSchema<unknown, Record<string, unknown>>, input);
    if (own.success) fields = pick(own.output, driver.value);
    else Object.assign(errors, fieldErrors(own.issues));
  }
  if (input.sqlite_file !== undefined) errors.sqlite_file = ['must be uploaded as a file (multipart/form-data)'];
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
