// The fields of each channel type (docs/alerts-channels.md): which are settings (stored as they
// are and returned), which are secrets (encrypted at rest, returned masked to their last four
// characters), their rules and limits. Checked with valibot; a field's issues are named
// `settings.<field>` or `secrets.<field>` in the 422.
import * as v from 'valibot';
import { isHostName } from '../../../lib/outbound';
import type { ChannelPreset, ChannelType } from '../../../storage/channels';
import { depthWithin, jsonBytes } from '../../dashboards/limits';
import { unknownFields } from './template';

export const CHANNEL_TYPES: readonly ChannelType[] = ['webhook', 'ntfy', 'gotify', 'email'];

export const LIMITS = {
  channelsPerOrganization: 100,
  name: 255,
  url: 2048,
  secret: 2048,
  headers: 20,
  headerValue: 1024,
  bodyTemplateBytes: 16 * 1024,
  bodyTemplateDepth: 16,
  recipients: 20,
  tags: 10,
} as const;

const PRINTABLE = /^[\x20-\x7e]*$/; // what an HTTP header value may carry without encoding
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/;
/** Headers the sender sets itself (or that would break the request): not a user's to set. */
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'x-idempotency-key',
  'authorization',
  'cookie',
  'proxy-authorization',
]);
const EMAIL = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+$/;

/** Why a URL cannot be a channel's target, or null. */
export function urlProblem(text: string): string | null {
  if (text.length > LIMITS.url) return `must be at most ${LIMITS.url} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an http:// or https:// URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (url.username !== '' || url.password !== '')
    return "must not hold a user name or password (use the channel's token or authorization secret)";
  if (!isHostName(url.hostname)) return 'must name a host (a DNS name or an IP address)';
  return null;
}

const text = v.string('must be a string');
const url = v.pipe(
  text,
  v.check(
    (s: string) => urlProblem(s) === null,
    'must be an http:// or https:// URL naming a host, without user or password',
  ),
  v.check((s: string) => s.length <= LIMITS.url, `must be at most ${LIMITS.url} characters`),
);
const secretText = (what: string) =>
  v.pipe(
    text,
    v.minLength(1, 'must not be empty'),
    v.maxLength(LIMITS.secret, `must be at most ${LIMITS.secret} characters`),
    v.regex(PRINTABLE, `must be printable ASCII (${what})`),
  );

const headers = v.pipe(
  v.record(text, text, 'must be an object of header names and values'),
  v.check((h) => Object.keys(h).length <= LIMITS.headers, `must hold at most ${LIMITS.headers} headers`),
  v.check((h) => Object.keys(h).every((k) => HEADER_NAME.test(k)), 'header names must be HTTP tokens'),
  v.check(
    (h) => Object.keys(h).every((k) => !RESERVED_HEADERS.has(k.toLowerCase())),
    'must not set Host, Content-Length, Connection, Authorization (use secrets.authorization), Cookie or X-Idempotency-Key',
  ),
  v.check(
    (h) => Object.values(h).every((x) => x.length <= LIMITS.headerValue && PRINTABLE.test(x)),
    `header values must be printable ASCII of at most ${LIMITS.headerValue} characters`,
  ),
);

const bodyTemplate = v.nullable(
  v.pipe(
    v.unknown(),
    v.check(
      (b) => typeof b === 'object' && b !== null,
      'must be a JSON object or array (the body template), or null',
    ),
    v.check(
      (b) => depthWithin(b, LIMITS.bodyTemplateDepth),
      `must be nested at most ${LIMITS.bodyTemplateDepth} levels`,
    ),
    v.check(
      (b) => jsonBytes(b) <= LIMITS.bodyTemplateBytes,
      `must be at most ${LIMITS.bodyTemplateBytes} bytes of JSON`,
    ),
    v.check(
      (b) => unknownFields(b).length === 0,
      (issue) => {
        const names = unknownFields(issue.input).map((n) => `{{${n}}}`);
        return `names unknown fields ${names.join(', ')} (see docs/alerts-channels.md for the fields)`;
      },
    ),
  ),
);

const priority = (min: number, max: number) =>
  v.nullable(
    v.pipe(
      v.number(`must be an integer ${min}..${max} or null`),
      v.integer(`must be an integer ${min}..${max} or null`),
      v.minValue(min, `must be an integer ${min}..${max} or null`),
      v.maxValue(max, `must be an integer ${min}..${max} or null`),
    ),
  );

const NTFY_TOPIC = /^[-_A-Za-z0-9]{1,64}$/;
const NTFY_TAG = /^[\x21-\x2b\x2d-\x7e]{1,64}$/; // printable ASCII but comma and space

interface SecretSpec {
  required: boolean;
  schema: v.GenericSchema<unknown, string>;
}

interface TypeSpec {
  settings: v.GenericSchema<unknown, Record<string, unknown>>;
  secrets: Record<string, SecretSpec>;
}

export const TYPE_SPECS: Record<ChannelType, TypeSpec> = {
  webhook: {
    settings: v.object({
      method: v.optional(v.picklist(['POST', 'PUT', 'PATCH'], 'must be one of POST, PUT, PATCH'), 'POST'),
      headers: v.optional(headers, {}),
      body: v.optional(bodyTemplate, null),
    }),
    secrets: {
      url: { required: true, schema: url },
      authorization: { required: false, schema: secretText('the Authorization header value') },
    },
  },
  ntfy: {
    settings: v.object({
      server: v.optional(url, 'https://ntfy.sh'),
      topic: v.pipe(text, v.regex(NTFY_TOPIC, 'must be 1..64 letters, digits, - or _')),
      priority: v.optional(priority(1, 5), null),
      tags: v.optional(
        v.pipe(
          v.array(
            v.pipe(
              text,
              v.regex(NTFY_TAG, 'tags must be 1..64 printable ASCII characters without comma or space'),
            ),
            'must be a list of tags',
          ),
          v.maxLength(LIMITS.tags, `must hold at most ${LIMITS.tags} tags`),
        ),
        [],
      ),
    }),
    secrets: { token: { required: false, schema: secretText('an ntfy access token') } },
  },
  gotify: {
    settings: v.object({
      server: url,
      priority: v.optional(priority(0, 10), null),
    }),
    secrets: { token: { required: true, schema: secretText('a Gotify application token') } },
  },
  email: {
    settings: v.object({
      to: v.pipe(
        v.array(
          v.pipe(
            text,
            v.maxLength(254, 'addresses must be at most 254 characters'),
            v.regex(EMAIL, 'must be a list of e-mail addresses'),
          ),
          'must be a list of e-mail addresses',
        ),
        v.minLength(1, 'must name at least one recipient'),
        v.maxLength(LIMITS.recipients, `must name at most ${LIMITS.recipients} recipients`),
      ),
      subject_prefix: v.optional(
        v.nullable(
          v.pipe(
            text,
            v.maxLength(100, 'must be at most 100 characters'),
            v.regex(/^[^\r\n]*$/, 'must be one line'),
          ),
        ),
        null,
      ),
    }),
    secrets: {},
  },
};

/** The issues of a valibot result by `<prefix>.<first key>`. */
export function issuesByField(
  prefix: string,
  issues: readonly v.BaseIssue<unknown>[],
  into: Record<string, string[]>,
): void {
  for (const issue of issues) {
    const key = issue.path?.[0]?.key;
    const field = typeof key === 'string' ? `${prefix}.${key}` : prefix;
    const list = (into[field] ??= []);
    if (!list.includes(issue.message)) list.push(issue.message);
  }
}

export const PRESET_TYPES: Record<ChannelPreset, ChannelType> = {
  slack: 'webhook',
  discord: 'webhook',
  mattermost: 'webhook',
  teams: 'webhook',
};

/** A secret as the API shows it: its last four characters, none of a short one. */
export function maskSecret(plain: string): string {
  return plain.length > 8 ? `…${plain.slice(-4)}` : '…';
}
