// The InfluxDB-compatible endpoints (SPEC 12, docs/intake.md): writes on /api/v2/write and /write,
// the probes /health, /ping and /query. A write is authenticated by a source token (Token, Bearer,
// Basic password or `p=`), read with the body limits of every other endpoint (gzip inflated under
// limits.max_body_bytes), parsed and mapped whole, and only then written: line protocol as the
// write path's wire form (line-wire.ts, the engine's ingestWire), the other formats through the
// same entry point as POST /api/v1/metrics/batch. Errors answer InfluxDB's body `{"code","message"}` (plus
// `error`, the field 1.x clients read, on the 1.x paths), since these clients show that message.
import type { Context, Middleware, Next } from 'koa';
import { AppError, forbidden, payloadTooLarge, toHttp, unauthorized, unsupportedMediaType } from '../errors';
import type { Deps } from '../deps';
import type { Source } from '../domain/types';
import { hashToken, tokenKind } from '../lib/tokens';
import { SERVER_VERSION } from '../version';
import type { BodyBudget } from '../http/middleware/body-budget';
import { readRawBody } from '../http/middleware/body';
import { validate } from '../http/middleware/validate';
import {
  LineProtocolError,
  parseLineProtocol,
  parseLineProtocolSliced,
  parsePrecision,
} from './line-protocol';
import { OtlpError, mapOtlpJson } from './otlp';
import { EXPORT_RESPONSE, decodeOtlpProtobuf, statusProtobuf } from './otlp-proto';
import { parseJsonText } from '../lib/json';
import { MappingError, type IntakePoint } from './mapping';
import { type MappedWire, mapLineWire, mapLineWireSliced } from './line-wire';
import { mapLineBodyDirect } from './line-direct';
import { mapLineBodyWasm } from './line-wasm';
import type { Precision } from '../config-listeners';
import { intakeCountersOf } from './stats';
import { RemoteWriteError, mapRemoteWriteWire, mapRemoteWriteWireSliced } from './remote-write';
import { SLICED_ABOVE } from './slices';
import { SnappyError, snappyUncompress } from './snappy';
import { KeyLimitError, keyLimitOf } from './key-limit';

/** Points per call of the batch entry point (its limit is 10,000 points). */
const POINTS_PER_BATCH = 10_000;
/** The most a /query form body may hold. */
const QUERY_BODY_LIMIT = 64 * 1024;

const INFLUX_CODES: Record<number, string> = {
  400: 'invalid',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not found',
  405: 'method not allowed',
  413: 'request too large',
  415: 'unsupported media type',
  429: 'too many requests',
  503: 'unavailable',
  507: 'unavailable',
};

const NO_TOKEN =
  'Bad token: send a source token as "Authorization: Token <token>", as the password of HTTP Basic, or as p=<token>';

/** The query as Koa parsed it (a name given twice is an array). */
type Query = Record<string, string | string[] | undefined>;

/** The source token of a request: Token/Bearer scheme, Basic password, or `p=` (1.x) of its query. */
function tokenOf(ctx: Context, query: Query): string | null {
  const header = ctx.get('authorization').trim();
  const scheme = /^(Token|Bearer|Basic)\s+(\S+)$/i.exec(header);
  if (scheme) {
    const kind = scheme[1]!.toLowerCase();
    let value = scheme[2]!;
    if (kind === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon === -1) return null;
      value = decoded.slice(colon + 1);
    } else if (kind === 'token' && value.includes(':')) {
      value = value.slice(value.indexOf(':') + 1); // InfluxDB 1.8's `Token user:password`
    }
    return value;
  }
  const p = query.p;
  return typeof p === 'string' && p !== '' ? p : null;
}

/** The source a request may write to: 401 without a known source token, 403 without `write`. */
async function writableSource(ctx: Context, query: Query, deps: Deps): Promise<Source> {
  const value = tokenOf(ctx, query);
  const kind = value ? tokenKind(value) : null;
  if (!value || !kind) throw unauthorized(NO_TOKEN);
  if (kind === 'user')
    throw forbidden('Forbidden: a user API token cannot write metrics; use a source token');
  const token = await deps.sources.tokenByHash(hashToken(value));
  if (!token) throw unauthorized(NO_TOKEN);
  if (token.can_write !== 1) throw forbidden('Forbidden: the source token has no write permission');
  const source = await deps.sources.cachedById(token.source_id);
  if (!source) throw unauthorized(NO_TOKEN);
  return source;
}

function hasBody(ctx: Context): boolean {
  const length = ctx.get('content-length');
  if (length !== '') return Number(length) > 0;
  return ctx.get('transfer-encoding') !== '';
}

/** gRPC status codes of OTLP's error body (google.rpc.Status), by HTTP status. */
const GRPC_CODES: Record<number, number> = {
  400: 3,
  401: 16,
  403: 7,
  404: 5,
  405: 12,
  413: 8,
  415: 3,
  429: 8,
  503: 14,
  507: 14,
};

type Flavour = 'v1' | 'v2' | 'otlp' | 'prom';

/** An error as InfluxDB's JSON body (OTLP's Status on /v1/metrics); 5xx faults of the server go on to the error handler. */
function answerError(ctx: Context, err: unknown, flavour: Flavour): void {
  let status: number;
  let message: string;
  const headers: Record<string, string> = {};
  if (
    err instanceof LineProtocolError ||
    err instanceof MappingError ||
    err instanceof OtlpError ||
    err instanceof RemoteWriteError ||
    err instanceof SnappyError ||
    err instanceof KeyLimitError
  ) {
    status = 400;
    message = err.message;
  } else {
    const http = toHttp(err);
    if (http.status === 500) throw err;
    status = http.status === 422 ? 400 : http.status; // a readable body whose points break a rule
    Object.assign(headers, http.headers);
    const errors = http.body.errors;
    message =
      err instanceof AppError && err.kind !== 'validation'
        ? err.message
        : typeof errors.detail === 'string'
          ? errors.detail
          : Object.entries(errors)
              .map(
                ([field, messages]) =>
                  `${field}: ${Array.isArray(messages) ? messages.join(', ') : String(messages)}`,
              )
              .join('; ');
  }
  ctx.status = status;
  ctx.set(headers);
  if (flavour === 'otlp' && ctx.request.type === 'application/x-protobuf') {
    ctx.type = 'application/x-protobuf'; // a protobuf request gets its Status in protobuf
    ctx.body = statusProtobuf(GRPC_CODES[status] ?? 3, message);
  } else if (flavour === 'otlp') ctx.body = { code: GRPC_CODES[status] ?? 3, message };
  else if (flavour === 'prom') {
    ctx.type = 'text/plain';
    ctx.body = `${message}\n`; // what Prometheus and vmagent log of a refused write
  } else
    ctx.body = {
      code: INFLUX_CODES[status] ?? 'invalid',
      message,
      ...(flavour === 'v1' ? { error: message } : {}),
    };
}

function badParameter(message: string): AppError {
  return new AppError('bad_request', message);
}

/** A line-protocol write's query: the writable source (`p=` may carry its token), then `precision`. */
async function lineProtocolQuery(ctx: Context, query: Query, deps: Deps, api: 1 | 2) {
  const source = await writableSource(ctx, query, deps);
  const rawPrecision = query.precision;
  // given twice (an array) is as wrong as an unknown name
  const precision = Array.isArray(rawPrecision) ? null : parsePrecision(rawPrecision, api);
  if (!precision) {
    throw badParameter(
      api === 2 ? 'precision must be one of ns, us, ms, s' : 'precision must be one of n, u, ms, s, m, h',
    );
  }
  return { source, precision };
}

/**
 * The query parameters of the intake paths, read at the edge (validate.ts) in each path's order:
 * the token (a header or `p=`) before `precision`; on /query, sent credentials before `q`.
 */
function intakeInput(deps: Deps) {
  return {
    writeV2: validate({ query: (query, ctx) => lineProtocolQuery(ctx, query, deps, 2) }),
    writeV1: validate({ query: (query, ctx) => lineProtocolQuery(ctx, query, deps, 1) }),
    otlp: validate({ query: (query, ctx) => writableSource(ctx, query, deps) }),
    remoteWrite: validate({ query: (query, ctx) => writableSource(ctx, query, deps) }),
    query: validate({
      query: async (query, ctx) => {
        // Credentials are optional here; sent ones must be good, so a client learns at start-up.
        if (tokenOf(ctx, query) !== null) await checkAnySourceToken(ctx, query, deps);
        return typeof query.q === 'string' ? query.q : '';
      },
    }),
  };
}

export function intakeRoutes(deps: Deps, budget?: BodyBudget) {
  const limit = deps.config.limits.maxBodyBytes;
  const counters = intakeCountersOf(deps);
  const input = intakeInput(deps);
  const keyLimit = keyLimitOf(deps);

  /**
   * Reads the body and runs `use` on it; the bytes stay charged to the server-wide budget until
   * `use` is done (what they parse into is held as long).
   */
  async function withBody<T>(ctx: Context, max: number, use: (body: Buffer) => Promise<T> | T): Promise<T> {
    if (!hasBody(ctx)) return use(Buffer.alloc(0));
    const charge = budget?.open();
    try {
      return await use(await readRawBody(ctx, max, charge));
    } finally {
      charge?.close();
    }
  }

  async function write(source: Source, points: IntakePoint[]): Promise<void> {
    try {
      await keyLimit.admitAll(source, points); // new keys past the limit refuse the whole body
    } catch (err) {
      if (err instanceof KeyLimitError) counters.overKeyLimit += points.length;
      throw err;
    }
    // Everything was checked before this point, so parts are refused only by the write path itself
    // (overload, a full disk), never half for a bad line.
    for (let from = 0; from < points.length; from += POINTS_PER_BATCH) {
      await deps.metrics.ingestBatch(source, { points: points.slice(from, from + POINTS_PER_BATCH) });
    }
  }

  /** A line protocol body's points, already in the write path's form (line-wire.ts). */
  async function writeWires(source: Source, mapped: MappedWire): Promise<void> {
    const hashes = mapped.keyHashes;
    try {
      const one = mapped.wires.length === 1;
      await keyLimit.admitKeys(
        source,
        one ? mapped.wires[0]!.keys : mapped.wires.flatMap((w) => w.keys),
        hashes === undefined ? undefined : one ? hashes[0] : hashes.flat(),
      );
    } catch (err) {
      if (err instanceof KeyLimitError) counters.overKeyLimit += mapped.points;
      throw err;
    }
    for (let i = 0; i < mapped.wires.length; i++) {
      const wire = mapped.wires[i]!;
      if (hashes !== undefined) wire.keyHashes = hashes[i];
      await deps.metrics.ingestWire(source, wire);
    }
  }

  /** A body's wires from its text: line-direct.ts, else the parser and mapping. */
  async function fromText(text: string, precision: Precision, nowMs: number): Promise<MappedWire> {
    if (text.length > SLICED_ABOVE)
      return mapLineWireSliced(await parseLineProtocolSliced(text, { precision }), { nowMs });
    return (
      mapLineBodyDirect(text, precision, nowMs) ??
      mapLineWire(parseLineProtocol(text, { precision }), { nowMs })
    );
  }

  async function lineProtocolWrite(ctx: Context, api: 1 | 2): Promise<void> {
    const { source, precision } = (api === 2 ? input.writeV2 : input.writeV1).query(ctx);
    await withBody(ctx, limit, async (body) => {
      if (body.length === 0) return;
      const nowMs = deps.now();
      // the usual body read from its bytes into wires (line-wasm.ts), else from its text
      // (line-direct.ts), else parsed, then mapped; a large body is parsed and mapped in slices,
      // the event loop free between them
      const mapped =
        (body.length <= SLICED_ABOVE ? mapLineBodyWasm(body, precision, nowMs) : null) ??
        (await fromText(body.toString('utf8'), precision, nowMs));
      counters.add('influx', { ...mapped, points: { length: mapped.points } });
      if (mapped.points > 0) await writeWires(source, mapped);
    });
    ctx.status = 204;
  }

  return {
    input,
    writeV2: (ctx: Context) => lineProtocolWrite(ctx, 2),
    writeV1: (ctx: Context) => lineProtocolWrite(ctx, 1),

    health(ctx: Context): void {
      ctx.set('X-Influxdb-Version', SERVER_VERSION);
      ctx.body = {
        name: 'trifle-service',
        message: 'ready for queries and writes',
        status: 'pass',
        checks: [],
        version: SERVER_VERSION,
      };
    },

    async otlp(ctx: Context): Promise<void> {
      const source = input.otlp.query(ctx);
      const type = ctx.request.type;
      const protobuf = type === 'application/x-protobuf';
      if (!protobuf && type !== '' && type !== 'application/json') {
        throw unsupportedMediaType(
          `Unsupported Content-Type: ${type.slice(0, 60)} (use application/x-protobuf or application/json)`,
        );
      }
      await withBody(ctx, limit, async (body) => {
        const request = body.length === 0 ? {} : protobuf ? decodeOtlpProtobuf(body) : parseJsonText(body);
        const mapped = mapOtlpJson(request, { nowMs: deps.now() });
        counters.add('otlp', mapped);
        if (mapped.points.length > 0) await write(source, mapped.points);
      });
      ctx.status = 200;
      // ExportMetricsServiceResponse: everything accepted, in the request's encoding
      if (protobuf) {
        ctx.type = 'application/x-protobuf';
        ctx.body = EXPORT_RESPONSE;
      } else ctx.body = {};
    },

    async remoteWrite(ctx: Context): Promise<void> {
      const source = input.remoteWrite.query(ctx);
      const type = ctx.request.type;
      if (type !== '' && type !== 'application/x-protobuf') {
        throw unsupportedMediaType(
          `Unsupported Content-Type: ${type.slice(0, 60)} (remote write 1.0 sends application/x-protobuf)`,
        );
      }
      const encoding = ctx.get('content-encoding').trim().toLowerCase();
      if (encoding !== 'snappy') {
        throw unsupportedMediaType(
          `Unsupported Content-Encoding: ${encoding.slice(0, 40) || 'none'} (remote write 1.0 sends snappy)`,
        );
      }
      // The body is read as it came (snappy is not an encoding the body reader knows), then inflated here.
      delete ctx.req.headers['content-encoding'];
      if (!hasBody(ctx)) {
        ctx.status = 204;
        return;
      }
      const charge = budget?.open();
      try {
        const compressed = await readRawBody(ctx, limit, charge);
        // A snappy block declares its length first: a bomb is refused before anything is inflated.
        const body = snappyUncompress(compressed, limit, (declared) =>
          payloadTooLarge(`Request body inflates to ${declared} bytes, over the limit of ${limit} bytes`),
        );
        charge?.take(body.length);
        // in the write path's wire form, as line protocol (remote-write.ts mapRemoteWriteWire)
        const mapped =
          body.length <= SLICED_ABOVE ? mapRemoteWriteWire(body) : await mapRemoteWriteWireSliced(body);
        counters.add('prometheus', { ...mapped, points: { length: mapped.points } });
        if (mapped.points > 0) await writeWires(source, mapped);
      } finally {
        charge?.close();
      }
      ctx.status = 204;
    },

    ping(ctx: Context): void {
      ctx.set('X-Influxdb-Version', SERVER_VERSION);
      ctx.set('X-Influxdb-Build', 'trifle-service');
      ctx.status = 204;
    },

    async query(ctx: Context): Promise<void> {
      let q = input.query.query(ctx);
      if (ctx.method === 'POST' && ctx.request.type === 'application/x-www-form-urlencoded') {
        const form = await withBody(
          ctx,
          QUERY_BODY_LIMIT,
          (body) => new URLSearchParams(body.toString('utf8')),
        );
        q = form.get('q') ?? q;
      }
      const statements = q
        .split(';')
        .map((s) => s.trim())
        .filter((s) => s !== '');
      if (statements.length === 0) throw badParameter('missing query: q');
      for (const statement of statements) {
        if (!/^(CREATE\s+DATABASE\b|SHOW\s+DATABASES$)/i.test(statement)) {
          throw badParameter(
            `Queries are not supported here, only writes (CREATE DATABASE and SHOW DATABASES are answered for clients that send them). ` +
              `Read the data through the Trifle API: GET /api/v1/metrics or POST /api/v1/metrics/query.`,
          );
        }
      }
      ctx.body = { results: statements.map((_, i) => ({ statement_id: i })) };
    },
  };
}

/** /query with credentials: any token of the source (read or write) will do. */
async function checkAnySourceToken(ctx: Context, query: Query, deps: Deps): Promise<void> {
  const value = tokenOf(ctx, query);
  const kind = value ? tokenKind(value) : null;
  if (!value || kind !== 'source' || !(await deps.sources.tokenByHash(hashToken(value))))
    throw unauthorized(NO_TOKEN);
}

type Handler = (ctx: Context) => unknown;

/** A handler behind its query validator. */
function validated(validator: (ctx: Context, next: Next) => Promise<void>, handler: Handler): Handler {
  return (ctx) =>
    validator(ctx, async () => {
      await handler(ctx);
    });
}

/**
 * The InfluxDB paths in front of the service's other routes: a request on one of them is answered
 * here (wrong method 405), every other request goes on to `routes` untouched.
 */
export function withIntake(routes: Middleware, deps: Deps, budget?: BodyBudget): Middleware {
  const h = intakeRoutes(deps, budget);
  const table = new Map<string, { flavour: Flavour; methods: Map<string, Handler> }>([
    ['/api/v2/write', { flavour: 'v2', methods: new Map([['POST', validated(h.input.writeV2, h.writeV2)]]) }],
    ['/write', { flavour: 'v1', methods: new Map([['POST', validated(h.input.writeV1, h.writeV1)]]) }],
    [
      '/health',
      {
        flavour: 'v2',
        methods: new Map([
          ['GET', h.health],
          ['HEAD', h.health],
        ]),
      },
    ],
    [
      '/ping',
      {
        flavour: 'v1',
        methods: new Map([
          ['GET', h.ping],
          ['HEAD', h.ping],
        ]),
      },
    ],
    [
      '/query',
      {
        flavour: 'v1',
        methods: new Map([
          ['GET', validated(h.input.query, h.query)],
          ['POST', validated(h.input.query, h.query)],
        ]),
      },
    ],
    ['/v1/metrics', { flavour: 'otlp', methods: new Map([['POST', validated(h.input.otlp, h.otlp)]]) }],
    [
      '/api/v1/write',
      { flavour: 'prom', methods: new Map([['POST', validated(h.input.remoteWrite, h.remoteWrite)]]) },
    ],
  ]);
  return async function intakeOrRoutes(ctx: Context, next: Next): Promise<void> {
    const route = table.get(ctx.path);
    if (!route) return routes(ctx, next);
    (ctx as { _matchedRoute?: string })._matchedRoute = ctx.path; // the request log's label
    const handler = route.methods.get(ctx.method);
    const allow = [...route.methods.keys()].join(', ');
    if (!handler) {
      if (ctx.method === 'OPTIONS') {
        ctx.set('Allow', allow);
        ctx.status = 204;
        return;
      }
      throw new AppError('method_not_allowed', 'Method not allowed', { headers: { Allow: allow } });
    }
    try {
      await handler(ctx);
    } catch (err) {
      answerError(ctx, err, route.flavour);
    }
  };
}
