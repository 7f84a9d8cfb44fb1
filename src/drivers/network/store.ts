// What the network stores (postgres, mysql, redis, mongo) share: their connection settings, the
// 5 s limit on connecting and on every operation, closing idle connections, turning driver
// failures into the service's errors, and folding fetched rows into buckets.
//
// Failures never show the client a driver message: on metrics calls they become 503 with
// Retry-After (the cause rides along on the error for the log); on setup the failure's class only
// ("could not connect", "not a PostgreSQL server", "authentication failed", "timed out"), never
// the remote's text, a credential, the host or a local path.
//
// A source's connection is its host, port, database, user, password and TLS on/off, nothing
// else: a URL is parsed into those fields (connectionTarget) and never handed to a client library,
// so no unix socket, file path or client option is reachable from a tenant's input; every client
// connects through the source's relay (network/wire-guard.ts), which applies network.outbound.
import { AppError, conflict } from '../../errors';
import { OutboundRefused, isHostName, bareHost, type NetworkPolicy } from '../../lib/outbound';
import type { WireGuard } from './wire-guard';
import { PathSplitter, nestLeaves } from '../../model/leaves';
import { flattenLeaves, isMap } from '../../model/paths';
import { addLeaves, libraryRowPlan, type LibraryRowPlan } from '../library-rows';
import type { IdentifierMode } from '../sqlite/setup';
import { SYSTEM_KEY } from '../../model/write-set';
import type { SeriesRef, WriteSet } from '../types';

export const OPERATION_TIMEOUT_MS = 5_000;
/** connections unused this long are closed; the next call opens them again */
export const IDLE_CLOSE_MS = 30_000;
/** connections per source and service instance */
export const POOL_SIZE = 4;
export const RETRY_AFTER_S = 5;

/** Connection settings of a database source, credentials already decrypted. */
export interface NetworkSettings {
  /** a whole connection URL, used instead of the separate fields when given */
  url?: string;
  host?: string;
  port?: number;
  database?: string;
  username?: string;
  password?: string;
  ssl?: boolean;
  /** redis: logical database 0..15 */
  db?: number;
  /** redis: key prefix (default `trfl`) */
  prefix?: string;
  /** mongo: authentication database */
  authSource?: string;
  /** ms; tests shorten it */
  timeoutMs?: number;
  /** where the store may connect (network.outbound); `any` when left out */
  policy?: NetworkPolicy;
  idleMs?: number;
}

/** The error a metrics call answers when the store cannot be used now: 503 + Retry-After. */
export function storeUnavailable(kind: string, cause: unknown): AppError {
  if (cause instanceof AppError) return cause;
  const err = new AppError('unavailable', `The ${kind} database source is unavailable, retry later`, {
    retryAfter: RETRY_AFTER_S,
  });
  (err as { cause?: unknown }).cause = cause;
  return err;
}

class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/** Rejects when `work` takes longer than `ms` (the work itself is left to its own clean-up). */
export function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} timed out after ${ms / 1000} s`)), ms);
    timer.unref();
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

/** An existing trifle_stats whose columns are not the identifier mode's layout (its message is the client's). */
class LayoutMismatch extends Error {}

/** Setup's check of an existing table: exactly the identifier columns of the mode, then `data`. */
export function assertLayoutColumns(
  found: readonly string[],
  identifiers: readonly string[],
  mode: string,
): void {
  const wanted = [...identifiers, 'data'];
  if (found.join(',') === wanted.join(',')) return;
  throw new LayoutMismatch(
    `table trifle_stats has columns (${found.join(', ')}), not the ${mode} identifier layout (${wanted.join(', ')})`,
  );
}

/** The server each driver speaks to, as setup names it. */
const SERVER_NAMES: Record<string, string> = {
  postgres: 'a PostgreSQL server',
  mysql: 'a MySQL or MariaDB server',
  redis: 'a Redis server',
  mongo: 'a MongoDB server',
};

const AUTH = /^(28P01|28000|1045|1044|1698|18|WRONGPASS|NOAUTH)$/;
const AUTH_TEXT =
  /password authentication failed|authentication failed|access denied|WRONGPASS|NOAUTH|invalid username-password|auth(entication)? error|requires a password/i;
const NO_DATABASE = /^(3D000|1049)$/;
const NO_PERMISSION = /^(42501|1142|1044|13|CommandNotFound)$/;

/**
 * What setup answers for a failure: `<kind>: <class>`. The relay's record decides first (the
 * policy refused the address; the remote does not speak the protocol; no valid frame came back at
 * all: "could not connect", whether the port was closed, filtered or silent); then the error's code.
 */
export function setupFailure(
  kind: string,
  err: unknown,
  _settings: NetworkSettings,
  guard?: WireGuard,
): Error {
  if (err instanceof LayoutMismatch) return err;
  return new Error(`${kind}: ${setupClass(kind, err, guard)}`);
}

/** The failure class of a setup error (no remote text ever). */
export function setupClass(kind: string, err: unknown, guard?: WireGuard): string {
  if (err instanceof OutboundRefused) return err.message;
  const state = guard?.state();
  if (state?.failure === 'refused')
    return 'the host is not allowed by network.outbound ("public" refuses internal addresses)';
  if (state?.failure === 'protocol') return `not ${SERVER_NAMES[kind] ?? 'the expected server'}`;
  if (state && !state.confirmed) return 'could not connect to the server';
  const e = (err ?? {}) as { code?: unknown; errno?: unknown; message?: unknown; codeName?: unknown };
  const codes = [e.code, e.errno, e.codeName]
    .filter((c) => typeof c === 'string' || typeof c === 'number')
    .map(String);
  const text = typeof e.message === 'string' ? e.message : '';
  if (err instanceof TimeoutError || codes.includes('ETIMEDOUT') || /timed? ?out|timeout/i.test(text))
    return 'timed out';
  if (codes.some((c) => AUTH.test(c)) || AUTH_TEXT.test(text)) return 'authentication failed';
  if (codes.some((c) => NO_DATABASE.test(c))) return 'the database does not exist';
  if (
    codes.some((c) => NO_PERMISSION.test(c)) ||
    /permission denied|not authorized|command denied/i.test(text)
  )
    return 'permission denied';
  if (
    codes.some((c) =>
      /^(ECONNREFUSED|ECONNRESET|EPIPE|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)$/.test(c),
    )
  ) {
    return 'could not connect to the server';
  }
  return 'the server refused the setup';
}

/** A setup failure as a message for the client (the class only). */
export function setupMessage(
  kind: string,
  err: unknown,
  settings: NetworkSettings,
  guard?: WireGuard,
): string {
  return setupFailure(kind, err, settings, guard).message;
}

/** The connection a source names: only these fields ever reach a client library. */
export interface ConnectionTarget {
  host: string;
  port: number;
  database?: string;
  username?: string;
  password?: string;
  ssl: boolean;
  /** redis: logical database */
  db?: number;
  /** mongo: authentication database */
  authSource?: string;
}

const URL_PROTOCOLS: Record<string, readonly string[]> = {
  postgres: ['postgres:', 'postgresql:'],
  mysql: ['mysql:'],
  redis: ['redis:', 'rediss:'],
  mongo: ['mongodb:'],
};

export const DEFAULT_PORTS: Record<string, number> = {
  postgres: 5432,
  mysql: 3306,
  redis: 6379,
  mongo: 27017,
};

const decode = (text: string): string | undefined => {
  if (text === '') return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
};

/**
 * A URL parsed into the connection fields and nothing else: its host (a DNS name or IP literal),
 * port, user, password, database (redis: the db number) and, for mongo, `authSource`; rediss:
 * turns TLS on. Every other query parameter is ignored. Throws OutboundRefused for a host that is
 * no host (a socket path, several hosts, an option smuggled into it).
 */
export function parseConnectionUrl(kind: string, text: string): ConnectionTarget {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new OutboundRefused('the url is not a connection URL');
  }
  if (!(URL_PROTOCOLS[kind] ?? []).includes(url.protocol))
    throw new OutboundRefused('the url has another scheme');
  const host = bareHost(url.hostname);
  if (!isHostName(host)) throw new OutboundRefused('the host must be a DNS name or an IP address');
  const path = decode(url.pathname.replace(/^\//, ''));
  const target: ConnectionTarget = {
    host,
    port: url.port ? Number(url.port) : DEFAULT_PORTS[kind]!,
    username: decode(url.username),
    password: decode(url.password),
    // TLS on/off is one of the fields: rediss:, or what an older version's stored URL asked for
    ssl:
      url.protocol === 'rediss:' ||
      ['require', 'verify-ca', 'verify-full'].includes(url.searchParams.get('sslmode') ?? '') ||
      ['true', '1'].includes(url.searchParams.get('ssl') ?? '') ||
      ['true', '1'].includes(url.searchParams.get('tls') ?? ''),
  };
  if (kind === 'redis') {
    if (path !== undefined && /^\d{1,2}$/.test(path)) target.db = Number(path);
  } else if (path !== undefined) target.database = path;
  if (kind === 'mongo') {
    // as the driver would: the URL's database authenticates unless authSource names another
    const authSource = url.searchParams.get('authSource') || path;
    if (authSource) target.authSource = authSource;
  }
  return target;
}

/** The connection fields of a source: its URL parsed (parseConnectionUrl) or its separate fields. */
export function connectionTarget(kind: string, settings: NetworkSettings): ConnectionTarget {
  if (settings.url) {
    const parsed = parseConnectionUrl(kind, settings.url);
    if (settings.ssl) parsed.ssl = true;
    if (settings.db !== undefined) parsed.db = settings.db;
    if (settings.database && kind === 'mongo') parsed.database = settings.database;
    if (settings.authSource) parsed.authSource = settings.authSource;
    return parsed;
  }
  const host = settings.host ?? '';
  if (!isHostName(host)) throw new OutboundRefused('the host must be a DNS name or an IP address');
  return {
    host: bareHost(host),
    port: settings.port ?? DEFAULT_PORTS[kind]!,
    database: settings.database,
    username: settings.username,
    password: settings.password,
    ssl: settings.ssl === true,
    db: settings.db,
    authSource: settings.authSource,
  };
}

/** Closes a resource after a quiet spell; touch() on every use, pause() while work is running. */
export function idleCloser(ms: number, close: () => void): { touch(): void; cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  return {
    touch() {
      clearTimeout(timer);
      timer = setTimeout(close, ms);
      timer.unref();
    },
    cancel() {
      clearTimeout(timer);
    },
  };
}

/** Stored row data: a JSON object (pg, mongo), JSON text (mysql on MariaDB) or a hash (redis). */
export function rowObject(data: unknown): Record<string, unknown> {
  if (typeof data === 'string') {
    try {
      const parsed: unknown = JSON.parse(data);
      return isMap(parsed) ? parsed : {};
    } catch {
      return {};
    }
  }
  return isMap(data) ? data : {};
}

/**
 * Folds rows (instant of the row, its data) into the buckets of `plan`: each bucket's JSON text,
 * rows of one bucket (a zone-correct one and a library-shifted one) adding up.
 */
export function foldRows(
  plan: LibraryRowPlan,
  bucketCount: number,
  rows: Iterable<[number, Record<string, unknown>]>,
  splitter: PathSplitter,
): string[] {
  const merged = new Array<Map<string, number> | undefined>(bucketCount);
  for (const [at, data] of rows) {
    const i = plan.indexOf(at);
    if (i === undefined) continue;
    const leaves = flattenLeaves(data);
    const into = merged[i];
    if (into) addLeaves(into, leaves);
    else merged[i] = leaves;
  }
  const out = new Array<string>(bucketCount);
  for (let i = 0; i < bucketCount; i++) {
    const leaves = merged[i];
    out[i] = leaves && leaves.size > 0 ? JSON.stringify(nestLeaves(leaves, splitter)) : '{}';
  }
  return out;
}

/** Hash fields of redis arrive as text: numbers parsed, anything else left out. */
export function numericFields(hash: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, text] of Object.entries(hash)) {
    const n = Number(text);
    if (text.trim() !== '' && Number.isFinite(n)) out[field] = n;
  }
  return out;
}

/** The pending operation of a leaf: a set value (assert) or an amount to add (track). */
export interface LeafOp {
  path: string;
  value: number;
  set: boolean;
}

/** One bucket's operations as leaf ops; an assert then a track of one leaf sets their sum. */
export function leafOps(ops: { add: Map<string, number>; set: Map<string, number> | null }): LeafOp[] {
  const out: LeafOp[] = [];
  const set = ops.set ?? new Map<string, number>();
  for (const [path, value] of set) out.push({ path, value: value + (ops.add.get(path) ?? 0), set: true });
  for (const [path, value] of ops.add) if (!set.has(path)) out.push({ path, value, set: false });
  return out;
}

export interface BucketWrite {
  key: string;
  granularity: string;
  startMs: number;
  ops: LeafOp[];
}

/**
 * Every bucket of a write set, in the order the Trifle::Stats libraries take their row locks, so
 * that the service and the libraries (and two service instances) writing one store at once never
 * deadlock. A library track is one transaction that, for each configured granularity in its order,
 * upserts the key's row and then the system key's row of that granularity's bucket. The service
 * takes the same order over many keys and buckets at once: granularity (in the source's configured
 * order), bucket start, the metric keys' rows (by key) and then the system key's row last.
 *
 * The source's order is the order in which the write set first holds each granularity: the merge
 * (src/domain/metrics/merge.ts) fills every key's granularities in the order the source lists them.
 */
export function bucketWrites(writes: WriteSet): BucketWrite[] {
  const out: BucketWrite[] = [];
  const rank = new Map<string, number>();
  for (const keys of writes.sources.values()) {
    for (const [key, granularities] of keys) {
      for (const [granularity, buckets] of granularities) {
        if (!rank.has(granularity)) rank.set(granularity, rank.size);
        for (const [startMs, ops] of buckets) {
          const leaves = leafOps(ops);
          if (leaves.length > 0) out.push({ key, granularity, startMs, ops: leaves });
        }
      }
    }
  }
  return out.sort((a, b) => lockOrder(a, b, rank));
}

/** The lock order of bucketWrites: granularity rank, bucket start, metric keys by key, system key last. */
function lockOrder(a: BucketWrite, b: BucketWrite, rank: ReadonlyMap<string, number>): number {
  if (a.granularity !== b.granularity) return rank.get(a.granularity)! - rank.get(b.granularity)!;
  if (a.startMs !== b.startMs) return a.startMs - b.startMs;
  const aSystem = a.key === SYSTEM_KEY;
  if (aSystem !== (b.key === SYSTEM_KEY)) return aSystem ? 1 : -1;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** `<key>::<granularity>::<unix seconds>`, the libraries' joined identifier. */
export function fullKey(key: string, granularity: string, startMs: number): string {
  return `${key}${SEPARATOR}${granularity}${SEPARATOR}${Math.floor(startMs / 1000)}`;
}

export const SEPARATOR = '::';

/**
 * A client library loaded on first use. Loading pg, mysql2, ioredis and mongodb at start cost
 * about 250 ms of the executable's start-up, and most services never open a network store.
 */
export function lazyModule<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | null = null;
  return () => (loaded ??= load());
}

/** attempts of a write set in all when the server reports a transient lock conflict */
export const WRITE_ATTEMPTS = 6;
/** the back-off before retry n (1-based) is a random wait in [0, RETRY_BASE_MS * 2^(n-1)) */
export const RETRY_BASE_MS = 10;

/**
 * A SQL store's write of one write set, retried when the server reports a transient lock conflict
 * (deadlock, serialization failure, lock wait time-out) at most `attempts` times in all, after a
 * short random back-off that doubles each time (10, 20, 40, 80, 160 ms at most), so the writers
 * that collided do not collide again in step. Other failures, or a conflict on the last attempt:
 * a missing table is 409 (set up first), anything else 503 (storeUnavailable).
 */
export async function writeWithRetries(
  kind: string,
  write: () => Promise<void>,
  failure: { retryable(err: unknown): boolean; missingTable(err: unknown): boolean },
  attempts = WRITE_ATTEMPTS,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (failure.retryable(err) && attempt < attempts) {
        await new Promise((resolve) =>
          setTimeout(resolve, Math.random() * RETRY_BASE_MS * 2 ** (attempt - 1)),
        );
        continue;
      }
      if (failure.missingTable(err)) throw conflict('The database source is not set up: run its setup first');
      throw storeUnavailable(kind, err);
    }
  }
}

/**
 * What a SQL read of one series asks for: the joined keys of `full` mode (each mapped back to its
 * instant), or the key (`partial`: with the granularity) and the first and last instant to look at.
 */
export function sqlReadRange(mode: IdentifierMode, ref: SeriesRef, lookups: readonly number[]) {
  const byKey = new Map<string, number>();
  if (mode === 'full') for (const ms of lookups) byKey.set(fullKey(ref.key, ref.granularity, ms), ms);
  const first = new Date(lookups[0]!);
  const last = new Date(lookups[lookups.length - 1]!);
  const params: unknown[] =
    mode === 'full'
      ? [[...byKey.keys()]]
      : mode === 'partial'
        ? [`${ref.key}${SEPARATOR}${ref.granularity}`, first, last]
        : [ref.key, ref.granularity, first, last];
  return { params, byKey };
}

/** A row of a SQL read: the full key (`full` mode) or the instant in `at`, and the row's `data`. */
export interface SqlRow {
  id: string | Date;
  data: unknown;
}

export interface SqlSeriesRead {
  kind: string;
  mode: IdentifierMode;
  timeZone: string;
  splitter: PathSplitter;
  /** runs the mode's read statement with these parameters */
  query(params: unknown[]): Promise<SqlRow[]>;
  /** the error says trifle_stats does not exist (not set up yet: every bucket reads empty) */
  missingTable(err: unknown): boolean;
}

/**
 * One series of a postgres or mysql store: the rows of the bucket starts and of the instants the
 * libraries floor with the event's offset (library-rows.ts), folded into the requested buckets.
 */
export async function readSqlSeries(
  read: SqlSeriesRead,
  ref: SeriesRef,
  starts: readonly number[],
): Promise<string[]> {
  if (starts.length === 0) return [];
  const plan = libraryRowPlan(starts, ref.granularity, read.timeZone);
  const { params, byKey } = sqlReadRange(read.mode, ref, plan.lookups);
  let rows: SqlRow[];
  try {
    rows = await read.query(params);
  } catch (err) {
    if (read.missingTable(err)) return new Array<string>(starts.length).fill('{}');
    throw storeUnavailable(read.kind, err);
  }
  const located = rows.map((r): [number, Record<string, unknown>] => [
    r.id instanceof Date ? r.id.getTime() : (byKey.get(r.id) ?? NaN),
    rowObject(r.data),
  ]);
  return foldRows(plan, starts.length, located, read.splitter);
}
