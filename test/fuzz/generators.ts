// Request generators for the API fuzz test: every endpoint with a valid body, then mutated (fields
// replaced by random or hostile JSON, removed, nested thousands deep, the text cut or edited),
// random methods, paths and headers, gzip (valid and broken), and multipart SQLite uploads.
// Placeholders (`{source}`, `{database}`, `{dashboard}`, `{group}`) are filled when a request is
// sent, from the objects that exist by then.
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { type SeedFile, sqliteFile } from './sqlite-files';

export type AuthChoice = 'none' | 'user' | 'otherUser' | 'rw' | 'ro' | 'wo' | 'noFlags' | 'minted' | 'junk';
export type SourceChoice = 'none' | 'own' | 'other' | 'junk' | 'upper';

export interface FuzzRequest {
  kind: string;
  method: string;
  path: string;
  auth: AuthChoice;
  junkAuth: string;
  source: SourceChoice;
  headers: Record<string, string>;
  body?: Buffer;
  /** set when the request matches a finding known to be another area's (see api.test.ts) */
  known?: string;
}

const AT = '2026-01-24T10:00:00Z';
const TO = '2026-01-25T10:00:00Z';
const point = { key: 'fuzz', at: AT, values: { n: 1, nested: { a: 2 } } };
const widget = { id: 'w1', type: 'kpi', title: 'T', x: 0, y: 0, w: 3, h: 2, path: 'n', function: 'sum' };
const dashboard = {
  name: 'Fuzz',
  key: 'fuzz',
  source: { type: 'project', id: '{source}' },
  payload: { grid: [widget] },
  segments: [{ name: 'country', groups: [{ label: 'G', items: [{ value: 'SK' }] }] }],
};

interface Endpoint {
  method: string;
  path: string;
  body?: Record<string, unknown>;
  query?: Record<string, string>;
}

const ENDPOINTS: Endpoint[] = [
  { method: 'GET', path: '/api/v1/health' },
  {
    method: 'POST',
    path: '/api/v1/bootstrap/signup',
    body: { email: 'fuzz-{n}@example.com', password: 'long enough', organization_name: 'Fuzz {n}' },
  },
  {
    method: 'POST',
    path: '/api/v1/bootstrap/login',
    body: { email: 'fuzz-owner@example.com', password: 'not the password' },
  },
  { method: 'GET', path: '/api/v1/bootstrap/me' },
  { method: 'POST', path: '/api/v1/bootstrap/organizations', body: { name: 'Org {n}' } },
  { method: 'GET', path: '/api/v1/bootstrap/sources' },
  {
    method: 'POST',
    path: '/api/v1/bootstrap/databases',
    body: { display_name: 'D', driver: 'sqlite', file_path: 'fuzz-{n}.sqlite' },
  },
  { method: 'POST', path: '/api/v1/bootstrap/databases/{database}/setup', body: {} },
  {
    method: 'POST',
    path: '/api/v1/bootstrap/projects',
    body: { name: 'P', time_zone: 'Europe/Bratislava', granularities: ['1h', '1d'] },
  },
  {
    method: 'POST',
    path: '/api/v1/bootstrap/source-tokens',
    body: { source_type: 'project', source_id: '{source}', read: true, write: true },
  },
  { method: 'GET', path: '/api/v1/metrics', query: { key: 'fuzz', from: AT, to: TO, granularity: '1h' } },
  { method: 'POST', path: '/api/v1/metrics', body: point },
  { method: 'POST', path: '/api/v1/metrics/batch', body: { points: [point, { ...point, key: 'fuzz2' }] } },
  {
    method: 'POST',
    path: '/api/v1/metrics/query',
    body: {
      key: 'fuzz',
      from: AT,
      to: TO,
      granularity: '1h',
      mode: 'aggregate',
      value_path: 'n',
      aggregator: 'sum',
      slices: 2,
    },
  },
  { method: 'GET', path: '/api/v1/dashboards', query: { limit: '10', offset: '0' } },
  { method: 'GET', path: '/api/v1/dashboards/{dashboard}' },
  { method: 'POST', path: '/api/v1/dashboards', body: dashboard },
  {
    method: 'PUT',
    path: '/api/v1/dashboards/{dashboard}',
    body: { name: 'Renamed', payload: { grid: [widget] } },
  },
  { method: 'PATCH', path: '/api/v1/dashboards/{dashboard}', body: { locked: false, segments: [] } },
  { method: 'DELETE', path: '/api/v1/dashboards/{dashboard}' },
  { method: 'GET', path: '/api/v1/dashboard-groups' },
  { method: 'GET', path: '/api/v1/dashboard-groups/{group}' },
  { method: 'POST', path: '/api/v1/dashboard-groups', body: { name: 'G', position: 1 } },
  { method: 'PUT', path: '/api/v1/dashboard-groups/{group}', body: { name: 'G2' } },
  { method: 'DELETE', path: '/api/v1/dashboard-groups/{group}' },
  // The web interface's extensions (docs/interface.md) and operations (docs/operations.md). Sign-out
  // and token revocation name ids the fuzz does not use, so its own tokens stay valid.
  { method: 'GET', path: '/api/v1/bootstrap/setup-state' },
  { method: 'GET', path: '/api/v1/session' },
  {
    method: 'POST',
    path: '/api/v1/session',
    body: { email: 'fuzz-owner@example.com', password: 'not the password' },
  },
  { method: 'GET', path: '/api/v1/bootstrap/source-tokens', query: { source_id: '{source}' } },
  { method: 'DELETE', path: '/api/v1/bootstrap/source-tokens/00000000-0000-4000-8000-000000000000' },
  {
    method: 'GET',
    path: '/api/v1/sources/{source}/metrics',
    query: { key: 'fuzz', from: AT, to: TO, granularity: '1h' },
  },
  {
    method: 'PUT',
    path: '/api/v1/bootstrap/projects/{source}',
    body: { name: 'P2', retention: { '1h': '30d' }, expire_after: 86_400 },
  },
  { method: 'POST', path: '/api/v1/dashboards/{dashboard}/shares', body: {} },
  { method: 'GET', path: '/api/v1/dashboards/{dashboard}/shares' },
  { method: 'GET', path: '/api/v1/shared/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
  {
    method: 'GET',
    path: '/api/v1/shared/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/metrics',
    query: { from: AT, to: TO, granularity: '1h' },
  },
  { method: 'GET', path: '/metrics' },
  { method: 'GET', path: '/d/{dashboard}', query: { range: '7d', kiosk: '' } },
];

const DEEP = '\u0000DEEP\u0000';
const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u00a0',
  '\t\n',
  'x'.repeat(300),
  'x'.repeat(70_000),
  '__system__key__',
  '../../etc/passwd',
  '/etc/passwd',
  'service.db',
  'app.db-wal',
  'a::b',
  '*',
  'n.*',
  '1h',
  '0m',
  '99999999y',
  '2026-02-30T00:00:00Z',
  'NaN',
  'null',
  '00000000-0000-4000-8000-000000000000',
  '{source}',
  '{database}',
  'ÄÖÜ😀',
  '\u0000',
  '%00',
  '<script>',
];
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    1e308,
    -1e308,
    5e-324,
    -0,
    2 ** 53 + 1,
    0,
    -1,
    1.5,
    2_147_483_648,
    true,
    false,
    null,
    [],
    {},
    DEEP,
  ),
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ maxLength: 40 }),
  fc.uuid(),
);

type Mutation =
  | { kind: 'set'; key: string; value: unknown }
  | { kind: 'delete'; key: string }
  | { kind: 'nested'; path: string[]; value: unknown }
  | { kind: 'replace'; value: unknown };

function mutation(keys: string[]): fc.Arbitrary<Mutation> {
  const key =
    keys.length > 0
      ? fc.oneof(fc.constantFrom(...keys), fc.string({ maxLength: 12 }))
      : fc.string({ maxLength: 12 });
  return fc.oneof(
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('set' as const), key, value: hostileValue }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), key }) },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('nested' as const),
        path: fc.array(
          fc.oneof(
            fc.constantFrom('values', 'payload', 'grid', '0', 'segments', 'points', 'source', 'id', 'n'),
            fc.string({ maxLength: 6 }),
          ),
          { minLength: 2, maxLength: 4 },
        ),
        value: hostileValue,
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('replace' as const), value: hostileValue }) },
  );
}

function applyMutation(body: unknown, m: Mutation): unknown {
  if (m.kind === 'replace') return m.value;
  if (typeof body !== 'object' || body === null) return body;
  const copy = structuredClone(body) as Record<string, unknown>;
  if (m.kind === 'set') copy[m.key] = m.value;
  else if (m.kind === 'delete') delete copy[m.key];
  else {
    let node: unknown = copy;
    for (const step of m.path.slice(0, -1)) {
      if (typeof node !== 'object' || node === null) return copy;
      const next = (node as Record<string, unknown>)[step];
      node =
        typeof next === 'object' && next !== null ? next : ((node as Record<string, unknown>)[step] = {});
    }
    if (typeof node === 'object' && node !== null)
      (node as Record<string, unknown>)[m.path[m.path.length - 1]!] = m.value;
  }
  return copy;
}

/** JSON text of a body; the deep marker becomes 2,000..50,000 levels of nesting. */
function bodyText(body: unknown, depth: number): string {
  const text = JSON.stringify(body) ?? 'null';
  const deep =
    depth % 2 === 0 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  return text.replaceAll(JSON.stringify(DEEP), deep);
}

type TextEdit = { kind: 'none' } | { kind: 'cut' | 'insert' | 'surrogate'; at: number; char: string };
const textEdit: fc.Arbitrary<TextEdit> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'none' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom('cut' as const, 'insert' as const, 'surrogate' as const),
      at: fc.nat(),
      char: fc.string({ minLength: 1, maxLength: 2 }),
    }),
  },
);

function editText(text: string, edit: TextEdit): string {
  if (edit.kind === 'none' || text.length === 0) return text;
  const at = edit.at % text.length;
  if (edit.kind === 'cut') return text.slice(0, at);
  if (edit.kind === 'insert') return text.slice(0, at) + edit.char + text.slice(at);
  return text.replace(/"([^"\\]{1,20})"/, '"\\ud800$1"'); // a lone surrogate in the first string
}

type Encoding = 'none' | 'gzip' | 'brokenGzip' | 'gzipNoHeader' | 'bogus';
const encoding = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Encoding>('none') },
  { weight: 3, arbitrary: fc.constant<Encoding>('gzip') },
  { weight: 1, arbitrary: fc.constantFrom<Encoding>('brokenGzip', 'gzipNoHeader', 'bogus') },
);

function encode(
  bytes: Buffer,
  how: Encoding,
  flip: number,
): { body: Buffer; headers: Record<string, string> } {
  if (how === 'none') return { body: bytes, headers: {} };
  if (how === 'bogus')
    return {
      body: bytes,
      headers: { 'content-encoding': ['br', 'deflate', 'gzip, br', 'x-unknown'][flip % 4]! },
    };
  const zipped = gzipSync(bytes);
  if (how === 'gzipNoHeader') return { body: zipped, headers: {} };
  if (how === 'brokenGzip') zipped[flip % zipped.length]! ^= 0xff;
  return { body: zipped, headers: { 'content-encoding': 'gzip' } };
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/vnd.api+json',
  'multipart/form-data',
  'application/x-www-form-urlencoded',
  '',
  'garbage',
];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'FOO'];

// Headers beside the ones each request is built with: the upstream source header (agreeing or
// not), 100-continue, odd accept and forwarding headers, a repeated content type.
const extraHeaders: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.dictionary(
      fc.constantFrom(
        'x-trifle-source-id',
        'expect',
        'accept',
        'accept-encoding',
        'x-forwarded-for',
        'cookie',
        'origin',
        'range',
        'if-none-match',
      ),
      fc.oneof(
        fc.constantFrom(
          '100-continue',
          'gzip',
          '*/*',
          'not-a-uuid',
          '00000000-0000-4000-8000-000000000000',
          '1.2.3.4, 5.6.7.8',
          'bytes=0-1',
        ),
        fc.uuid(),
        fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
      ),
      { maxKeys: 3 },
    ),
  },
);

const auth = fc.constantFrom<AuthChoice>(
  'user',
  'user',
  'rw',
  'rw',
  'ro',
  'wo',
  'noFlags',
  'minted',
  'otherUser',
  'none',
  'junk',
);
const sourceChoice = fc.constantFrom<SourceChoice>('own', 'own', 'none', 'other', 'junk', 'upper');
const junkAuth = fc.oneof(
  fc.constantFrom('Bearer ', 'Bearer svc_uat_', 'Basic dXNlcjpwYXNz', `Bearer svc_sat_${'A'.repeat(43)}`),
  fc.string({ maxLength: 60 }).map((s) => `Bearer ${s.replace(/[^\x21-\x7e]/g, 'x')}`),
);

function queryString(query: Record<string, string> | undefined, m: Mutation | null): string {
  if (!query) return '';
  const mutated = m ? (applyMutation(query, m) as Record<string, unknown>) : query;
  if (typeof mutated !== 'object' || mutated === null) return `?${encodeURIComponent(String(mutated))}`;
  const parts = Object.entries(mutated).map(
    ([k, v]) =>
      `${encodeURIComponent(k)}=${encodeURIComponent(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''))}`,
  );
  return `?${parts.join('&')}`;
}

/** A valid request of an endpoint, mutated or not. */
const endpointRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    endpoint: fc.constantFrom(...ENDPOINTS),
    mutations: fc.array(
      mutation(['key', 'values', 'name', 'payload', 'segments', 'points', 'source_id', 'email', 'password']),
      { maxLength: 3 },
    ),
    depth: fc.integer({ min: 2_000, max: 50_000 }),
    edit: textEdit,
    encoding,
    flip: fc.nat(),
    auth,
    junkAuth,
    source: sourceChoice,
    method: fc.oneof(
      { weight: 12, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
    ),
    extra: extraHeaders,
    contentType: fc.oneof(
      { weight: 12, arbitrary: fc.constant('application/json') },
      { weight: 1, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
    ),
  })
  .map((r) => {
    const e = r.endpoint;
    const mutated = r.mutations.reduce<unknown>((body, m) => applyMutation(body, m), e.body);
    const headers: Record<string, string> = { ...r.extra };
    let body: Buffer | undefined;
    if (e.body !== undefined) {
      const encoded = encode(Buffer.from(editText(bodyText(mutated, r.depth), r.edit)), r.encoding, r.flip);
      body = encoded.body;
      Object.assign(headers, encoded.headers);
      if (r.contentType !== '') headers['content-type'] = r.contentType;
    }
    const path = e.path + queryString(e.query, r.mutations[0] ?? null);
    return {
      kind: `${e.method} ${e.path}`,
      method: r.method ?? e.method,
      path,
      auth: r.auth,
      junkAuth: r.junkAuth,
      source: r.source,
      headers,
      body,
    };
  });

const JUNK_PATHS = [
  '/',
  '/api',
  '/api/v1',
  '/api/v1/',
  '/api/v2/health',
  '/api/v1/dashboards/nope',
  '/api/v1/dashboards/%ZZ',
  '/api/v1//dashboards',
  '/api/v1/metrics/../dashboards',
  '/api/v1/bootstrap/databases/x/setup',
  '/assets/app.js',
  '/favicon.ico',
];

/** Random method, path and bytes. */
const randomRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.constantFrom(...METHODS),
    path: fc.oneof(
      fc.constantFrom(...JUNK_PATHS),
      fc.string({ maxLength: 80 }).map((s) => `/api/v1/${encodeURIComponent(s)}`),
      fc.constant(`/api/v1/${'a'.repeat(5000)}`),
    ),
    bytes: fc.uint8Array({ maxLength: 4096 }),
    contentType: fc.constantFrom(...CONTENT_TYPES),
    encoding,
    flip: fc.nat(),
    auth,
    junkAuth,
    source: sourceChoice,
    extra: extraHeaders,
  })
  .map((r) => {
    const encoded = encode(Buffer.from(r.bytes), r.encoding, r.flip);
    const headers = {
      ...r.extra,
      ...encoded.headers,
      ...(r.contentType ? { 'content-type': r.contentType } : {}),
    };
    return {
      kind: 'random',
      method: r.method,
      path: r.path,
      auth: r.auth,
      junkAuth: r.junkAuth,
      source: r.source,
      headers,
      body: encoded.body,
    };
  });

/** Issue 9, the SQLite-source developer's part: the temp file keeps the client's extension. */
export const LONG_EXTENSION =
  'an upload whose file name has a 300-character extension answers 500 (ENAMETOOLONG)';

const FILE_NAMES = [
  'store.sqlite',
  'store.db',
  'store.sqlite3',
  'store.txt',
  '../../escape.db',
  `${'a'.repeat(300)}.db`,
  `x.${'a'.repeat(300)}`,
  '',
  'app.db-wal',
  'noext',
];

/** A multipart upload of a SQLite-ish file to POST /bootstrap/databases. */
function uploadRequest(seeds: SeedFile[]): fc.Arbitrary<FuzzRequest> {
  return fc
    .record({
      file: sqliteFile(seeds),
      name: fc.oneof(
        fc.constantFrom(...FILE_NAMES),
        fc.string({ maxLength: 30 }).map((s) => s.replace(/["\r\n\\]/g, '_')),
      ),
      field: fc.constantFrom('sqlite_file', 'sqlite_file', 'sqlite_file', 'file', 'other'),
      twoFiles: fc.boolean(),
      display: fc.constantFrom('Upload', '', 'x'.repeat(300)),
      driver: fc.constantFrom('sqlite', 'sqlite', 'sqlite', 'postgres', 'nope'),
      truncate: fc.oneof({ weight: 8, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.nat() }),
      auth: fc.constantFrom<AuthChoice>('user', 'user', 'user', 'rw', 'none'),
    })
    .map((r) => {
      const boundary = 'fuzzboundary7MA4YWxkTrZu0gW';
      const field = (name: string, value: string) =>
        `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
      const filePart = (name: string) =>
        Buffer.concat([
          Buffer.from(
            `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${r.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
          ),
          r.file,
          Buffer.from('\r\n'),
        ]);
      const parts = [
        Buffer.from(field('display_name', r.display) + field('driver', r.driver)),
        filePart(r.field),
      ];
      if (r.twoFiles) parts.push(filePart('sqlite_file'));
      parts.push(Buffer.from(`--${boundary}--\r\n`));
      let body = Buffer.concat(parts);
      if (r.truncate !== null) body = body.subarray(0, r.truncate % body.length);
      const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` };
      const extension = /\.([^.]*)$/.exec(r.name)?.[1] ?? '';
      const known = extension.length > 200 ? LONG_EXTENSION : undefined;
      return {
        kind: 'upload',
        method: 'POST',
        path: '/api/v1/bootstrap/databases',
        auth: r.auth,
        junkAuth: '',
        source: 'none' as const,
        headers,
        body,
        known,
      };
    });
}

export function fuzzRequests(seeds: SeedFile[]): fc.Arbitrary<FuzzRequest> {
  return fc.oneof(
    { weight: 14, arbitrary: endpointRequest },
    { weight: 3, arbitrary: randomRequest },
    { weight: 2, arbitrary: uploadRequest(seeds) },
  );
}
