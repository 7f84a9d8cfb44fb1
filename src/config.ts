// Configuration: defaults -> TOML file -> SERVICE_* environment -> CLI flags, validated once into
// one frozen object. A bad value throws ConfigError naming the key; main.ts turns that into an exit.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { parseSecretKey } from './lib/secrets';
import { parseListeners, type ListenerConfig } from './config-listeners';
import { parseClusters, postgresUrlProblem, type ClusterConfig } from './config-clusters';
import { checkAllowedHosts, isHostName } from './lib/outbound';

export interface Config {
  readonly server: {
    readonly host: string;
    readonly port: number;
    /** a request's headers must arrive within this (then 408 and the connection is closed) */
    readonly headersTimeoutMs: number;
    /** the whole request, body included, must arrive within this */
    readonly requestTimeoutMs: number;
    /** an idle keep-alive connection is closed after this */
    readonly keepAliveTimeoutMs: number;
    /** request-body bytes held in memory at once, over all requests (then 503) */
    readonly bodyBytesInFlight: number;
    /** the client address is the last X-Forwarded-For entry (behind one reverse proxy) */
    readonly trustProxy: boolean;
  };
  readonly storage: {
    readonly dataDir: string;
    /** bytes of recent series answers kept while their series is unchanged (0: none kept) */
    readonly answerCacheBytes: number;
    /**
     * `storage.url`: cluster mode (SPEC 14, docs/cluster.md). Every table of service.db lives in
     * this PostgreSQL database and every project without a named metrics cluster keeps its
     * buckets there (the default metrics cluster). null: one node on service.db, as always.
     */
    readonly url: string | null;
  };
  /**
   * Cluster mode's lease of the background jobs (docs/cluster.md "Jobs run once"): the node holding
   * it runs the retention sweep, alert rounds and the outbox sender; it renews every leaseMs / 3,
   * and another node takes over within leaseMs + leaseMs / 3 of a holder that died.
   */
  readonly cluster: { readonly leaseMs: number };
  readonly deployment: { readonly mode: 'self_hosted' | 'saas' };
  readonly features: { readonly projectsEnabled: boolean; readonly registrationEnabled: boolean };
  readonly limits: {
    readonly maxBodyBytes: number;
    readonly sqliteUploadMaxBytes: number;
    readonly writeQueueMaxPoints: number;
    /** ms an operation on a sqlite source file may take before 503 (optional: 5000 when left out) */
    readonly sqliteSourceTimeoutMs?: number;
    /** ms after which an unused sqlite source file is closed (optional: 60000 when left out) */
    readonly sqliteIdleCloseMs?: number;
  };
  readonly sources: { readonly sqliteRoot: string };
  readonly log: { readonly level: LogLevel };
  /** key for secrets at rest (database source passwords); null: the data directory's key file */
  readonly secrets: { readonly key: string | null };
  /** GET /metrics (Prometheus text); token null: no authentication (docs/operations.md) */
  readonly metrics: { readonly enabled: boolean; readonly token: string | null };
  readonly retention: { readonly sweepIntervalSeconds: number };
  /** monitors are evaluated every `intervalMs` (SPEC 13, `[alerts] interval`, default 60 s) */
  readonly alerts: { readonly intervalMs: number };
  /**
   * The web interface's sign-in sessions (docs/interface.md): a session unused for
   * `session.idle_timeout_seconds`, or older than `session.max_lifetime_seconds`, is ended by the
   * server and its cookie stops working.
   */
  readonly session: { readonly idleTimeoutSeconds: number; readonly maxLifetimeSeconds: number };
  /** TCP/UDP listeners of the intake formats, each bound to one source (docs/intake.md); none by default */
  readonly intake: {
    readonly listeners: readonly ListenerConfig[];
    /** distinct keys one source may hold through the intake (SPEC 12); new keys past it are refused */
    readonly maxKeysPerSource: number;
  };
  /** connections made for tenants: database sources (and alert channels), SPEC 13 */
  readonly network: {
    /** `any`: every address; `public`: no loopback, private, link-local, CGNAT or metadata address */
    readonly outbound: 'any' | 'public';
    /** exceptions to `public`: host names, IP addresses or CIDRs */
    readonly allowedHosts: readonly string[];
    /** ms to connect and for every operation of a database source; a failed setup answers no sooner */
    readonly timeoutMs: number;
    /** network database sources (postgres, mysql, redis, mongo) one organization may have */
    readonly maxDatabaseSources: number;
    /** setups of database sources one organization may start per minute */
    readonly setupsPerMinute: number;
  };
  /**
   * Metrics clusters a project may name by `project_cluster_id` (`[[clusters]]`, SPEC 14,
   * docs/cluster.md); none by default.
   */
  readonly clusters: readonly ClusterConfig[];
  /** the SMTP server that sends e-mail channels' alerts (docs/alerts-channels.md); host null: no e-mail */
  readonly smtp: {
    readonly host: string | null;
    readonly port: number;
    /** `starttls` (required, usually port 587), `tls` (implicit, usually 465) or `none` (a local relay) */
    readonly tls: 'starttls' | 'tls' | 'none';
    readonly username: string | null;
    readonly password: string | null;
    /** the From address: `alerts@example.com` or `Alerts <alerts@example.com>` */
    readonly from: string | null;
  };
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export class ConfigError extends Error {}

type Kind = 'string' | 'port' | 'bool' | 'size' | 'enum' | 'key' | 'listeners' | 'list' | 'interval';
interface KeyDef {
  key: string; // TOML dotted key
  env: string;
  kind: Kind;
  values?: readonly string[];
  min?: number;
  max?: number;
}

/** Every key the service reads; config.example.toml documents the same list. */
export const CONFIG_KEYS: readonly KeyDef[] = [
  { key: 'server.host', env: 'SERVICE_HOST', kind: 'string' },
  { key: 'server.port', env: 'SERVICE_PORT', kind: 'port' },
  { key: 'server.headers_timeout_ms', env: 'SERVICE_HEADERS_TIMEOUT_MS', kind: 'size', min: 100 },
  { key: 'server.request_timeout_ms', env: 'SERVICE_REQUEST_TIMEOUT_MS', kind: 'size', min: 100 },
  { key: 'server.keep_alive_timeout_ms', env: 'SERVICE_KEEP_ALIVE_TIMEOUT_MS', kind: 'size', min: 100 },
  { key: 'server.body_bytes_in_flight', env: 'SERVICE_BODY_BYTES_IN_FLIGHT', kind: 'size', min: 65536 },
  { key: 'server.trust_proxy', env: 'SERVICE_TRUST_PROXY', kind: 'bool' },
  { key: 'storage.data_dir', env: 'SERVICE_DATA_DIR', kind: 'string' },
  // Obsolete (the write log is always on): still accepted so that older configuration files load.
  { key: 'storage.write_log', env: 'SERVICE_WRITE_LOG', kind: 'bool' },
  { key: 'storage.answer_cache_bytes', env: 'SERVICE_ANSWER_CACHE_BYTES', kind: 'size', min: 0 },
  { key: 'storage.url', env: 'SERVICE_STORAGE_URL', kind: 'string' },
  // at most 45 s: a dead holder's jobs are taken over within 4/3 of it, under SPEC 14's minute
  { key: 'cluster.lease_ms', env: 'SERVICE_CLUSTER_LEASE_MS', kind: 'size', min: 100, max: 45_000 },
  { key: 'deployment.mode', env: 'SERVICE_DEPLOYMENT_MODE', kind: 'enum', values: ['self_hosted', 'saas'] },
  { key: 'features.projects_enabled', env: 'SERVICE_PROJECTS_ENABLED', kind: 'bool' },
  { key: 'features.registration_enabled', env: 'SERVICE_REGISTRATION_ENABLED', kind: 'bool' },
  { key: 'limits.max_body_bytes', env: 'SERVICE_MAX_BODY_BYTES', kind: 'size', min: 1024 },
  { key: 'limits.sqlite_upload_max_bytes', env: 'SERVICE_SQLITE_UPLOAD_MAX_BYTES', kind: 'size', min: 1024 },
  { key: 'limits.write_queue_max_points', env: 'SERVICE_WRITE_QUEUE_MAX_POINTS', kind: 'size', min: 1 },
  { key: 'limits.sqlite_source_timeout_ms', env: 'SERVICE_SQLITE_SOURCE_TIMEOUT_MS', kind: 'size', min: 10 },
  { key: 'limits.sqlite_idle_close_ms', env: 'SERVICE_SQLITE_IDLE_CLOSE_MS', kind: 'size', min: 100 },
  { key: 'sources.sqlite_root', env: 'SERVICE_SQLITE_ROOT', kind: 'string' },
  {
    key: 'log.level',
    env: 'SERVICE_LOG_LEVEL',
    kind: 'enum',
    values: ['debug', 'info', 'warn', 'error', 'silent'],
  },
  { key: 'secrets.key', env: 'SERVICE_SECRET_KEY', kind: 'key' },
  { key: 'metrics.enabled', env: 'SERVICE_METRICS_ENABLED', kind: 'bool' },
  { key: 'metrics.token', env: 'SERVICE_METRICS_TOKEN', kind: 'string' },
  {
    key: 'retention.sweep_interval_seconds',
    env: 'SERVICE_RETENTION_SWEEP_INTERVAL_SECONDS',
    kind: 'size',
    min: 1,
  },
  { key: 'alerts.interval', env: 'SERVICE_ALERTS_INTERVAL', kind: 'interval' },
  { key: 'session.idle_timeout_seconds', env: 'SERVICE_SESSION_IDLE_TIMEOUT_SECONDS', kind: 'size', min: 60 },
  { key: 'session.max_lifetime_seconds', env: 'SERVICE_SESSION_MAX_LIFETIME_SECONDS', kind: 'size', min: 60 },
  { key: 'intake.listeners', env: 'SERVICE_INTAKE_LISTENERS', kind: 'listeners' },
  {
    key: 'intake.max_keys_per_source',
    env: 'SERVICE_INTAKE_MAX_KEYS_PER_SOURCE',
    kind: 'size',
    min: 1,
    max: 1_000_000, // a source's keys are held in memory (about 40 bytes a key)
  },
  { key: 'network.outbound', env: 'SERVICE_NETWORK_OUTBOUND', kind: 'enum', values: ['any', 'public'] },
  { key: 'network.allowed_hosts', env: 'SERVICE_NETWORK_ALLOWED_HOSTS', kind: 'list' },
  { key: 'network.timeout_ms', env: 'SERVICE_NETWORK_TIMEOUT_MS', kind: 'size', min: 100 },
  { key: 'network.max_database_sources', env: 'SERVICE_NETWORK_MAX_DATABASE_SOURCES', kind: 'size', min: 1 },
  { key: 'network.setups_per_minute', env: 'SERVICE_NETWORK_SETUPS_PER_MINUTE', kind: 'size', min: 1 },
  { key: 'smtp.host', env: 'SERVICE_SMTP_HOST', kind: 'string' },
  { key: 'smtp.port', env: 'SERVICE_SMTP_PORT', kind: 'port' },
  { key: 'smtp.tls', env: 'SERVICE_SMTP_TLS', kind: 'enum', values: ['starttls', 'tls', 'none'] },
  { key: 'smtp.username', env: 'SERVICE_SMTP_USERNAME', kind: 'string' },
  { key: 'smtp.password', env: 'SERVICE_SMTP_PASSWORD', kind: 'string' },
  { key: 'smtp.from', env: 'SERVICE_SMTP_FROM', kind: 'string' },
];

const DEFAULTS: Record<string, unknown> = {
  'server.host': '127.0.0.1',
  'server.port': 4000,
  'server.headers_timeout_ms': 10_000,
  'server.request_timeout_ms': 30_000,
  'server.keep_alive_timeout_ms': 5_000,
  'server.body_bytes_in_flight': 8_388_608,
  'server.trust_proxy': false,
  'storage.data_dir': './data',
  'storage.write_log': true,
  'storage.answer_cache_bytes': 33_554_432,
  'storage.url': null, // one node on service.db
  'cluster.lease_ms': 30_000,
  'deployment.mode': 'self_hosted',
  'features.projects_enabled': true,
  'features.registration_enabled': true,
  'limits.max_body_bytes': 1_048_576,
  'limits.sqlite_upload_max_bytes': 104_857_600,
  'limits.write_queue_max_points': 100_000,
  'limits.sqlite_source_timeout_ms': 5000,
  'limits.sqlite_idle_close_ms': 60_000,
  'sources.sqlite_root': null, // <data_dir>/sources
  'log.level': 'info',
  'secrets.key': null, // <data_dir>/secret.key
  'metrics.enabled': true,
  'metrics.token': null,
  'retention.sweep_interval_seconds': 60,
  'alerts.interval': '60s',
  'session.idle_timeout_seconds': 604_800, // 7 days
  'session.max_lifetime_seconds': 2_592_000, // 30 days
  'intake.listeners': [],
  'intake.max_keys_per_source': 100_000,
  'network.outbound': null, // any (self_hosted), public (saas)
  'network.allowed_hosts': [],
  'network.timeout_ms': 5000,
  'network.max_database_sources': 50,
  'network.setups_per_minute': 10,
  'smtp.host': null, // no e-mail channels
  'smtp.port': 587,
  'smtp.tls': 'starttls',
  'smtp.username': null,
  'smtp.password': null,
  'smtp.from': null,
};

export interface ConfigInput {
  /** values from CLI flags, by TOML key */
  flags?: Record<string, string>;
  /** explicit --config file; otherwise ./config.toml when present */
  configFile?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** `[[clusters]]` in TOML, SERVICE_CLUSTERS (a JSON array) in the environment; no flag. */
const CLUSTERS_KEY = 'clusters';
const CLUSTERS_ENV = 'SERVICE_CLUSTERS';

function clustersOf(raw: unknown, origin: string): ClusterConfig[] {
  const clusters = parseClusters(raw);
  if (typeof clusters === 'string')
    throw new ConfigError(`invalid value for ${CLUSTERS_KEY} (${origin}): ${clusters}`);
  return clusters;
}

const TRUE = new Set(['1', 'true', 'yes', 'on']);
const FALSE = new Set(['0', 'false', 'no', 'off']);

function coerce(def: KeyDef, raw: unknown, origin: string): unknown {
  const fail = (why: string): never => {
    throw new ConfigError(`invalid value for ${def.key} (${origin}): ${why}, got ${describe(raw)}`);
  };
  switch (def.kind) {
    case 'string':
      if (typeof raw !== 'string' || raw.trim() === '') fail('expected a non-empty string');
      return raw;
    case 'listeners': {
      const listeners = parseListeners(raw);
      return typeof listeners === 'string' ? fail(listeners) : listeners;
    }
    case 'interval': {
      const ms = typeof raw === 'string' ? intervalMs(raw) : null;
      if (ms === null || ms < 1000 || ms > 86_400_000)
        fail('expected a count and a unit from 1s to 24h, such as 60s or 5m');
      return raw;
    }
    case 'key':
      if (typeof raw !== 'string' || !parseSecretKey(raw))
        fail('expected 32 bytes as 64 hex digits or base64 (openssl rand -base64 32)');
      return raw;
    case 'bool':
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'string' && TRUE.has(raw.trim().toLowerCase())) return true;
      if (typeof raw === 'string' && FALSE.has(raw.trim().toLowerCase())) return false;
      return fail('expected true/false (1,true,yes,on / 0,false,no,off)');
    case 'list': {
      // a TOML array of strings, or one comma-separated string (environment, flags)
      const items =
        typeof raw === 'string'
          ? raw
              .split(',')
              .map((x) => x.trim())
              .filter((x) => x !== '')
          : raw;
      if (!Array.isArray(items) || items.some((x) => typeof x !== 'string'))
        return fail('expected a list of strings');
      const wrong = checkAllowedHosts(items as string[]);
      if (wrong) fail(wrong);
      return items;
    }
    case 'enum':
      if (typeof raw !== 'string' || !def.values!.includes(raw))
        fail(`expected one of ${def.values!.join(', ')}`);
      return raw;
    case 'port':
    case 'size': {
      const n = typeof raw === 'string' && /^\d+$/.test(raw.trim()) ? Number(raw) : raw;
      if (typeof n !== 'number' && typeof n !== 'bigint') return fail('expected a whole number');
      const v = Number(n);
      if (!Number.isSafeInteger(v)) return fail('expected a whole number');
      if (def.kind === 'port' && (v < 0 || v > 65535)) fail('expected a port number 0..65535');
      if (def.kind === 'size' && v < (def.min ?? 0)) fail(`expected at least ${def.min}`);
      if (def.kind === 'size' && def.max !== undefined && v > def.max) fail(`expected at most ${def.max}`);
      return v;
    }
  }
}

/** What a config value was, for messages: `a string ("abc")`, `a number (3)`. */
function describe(raw: unknown): string {
  const shown = JSON.stringify(raw)?.slice(0, 40) ?? String(raw);
  if (typeof raw === 'string') return `a string (${shown})`;
  if (typeof raw === 'number' || typeof raw === 'bigint') return `a number (${String(raw)})`;
  if (typeof raw === 'boolean') return `a boolean (${shown})`;
  if (Array.isArray(raw)) return 'an array';
  if (raw instanceof Date) return 'a date';
  return typeof raw === 'object' && raw !== null ? 'a table' : String(raw);
}

const SECTIONS = new Set(CONFIG_KEYS.map((d) => d.key.split('.')[0]!));

function readToml(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${file}: ${(err as Error).message}`);
  }
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(text) as Record<string, unknown>;
  } catch (err) {
    throw new ConfigError(`config file ${file} is not valid TOML: ${(err as Error).message.split('\n')[0]}`);
  }
  const flat: Record<string, unknown> = {};
  for (const [section, table] of Object.entries(doc)) {
    // `[[clusters]]`: the one top-level array of tables (config-clusters.ts)
    if (section === CLUSTERS_KEY) {
      flat[CLUSTERS_KEY] = table;
      continue;
    }
    if (typeof table !== 'object' || table === null || Array.isArray(table) || table instanceof Date) {
      // `server = 3`: a known section written as a value says so, rather than "unknown key".
      if (SECTIONS.has(section)) {
        throw new ConfigError(
          `invalid value for ${section} in ${file}: expected a [${section}] table of settings, got ${describe(table)}`,
        );
      }
      throw new ConfigError(`unknown config key ${section} in ${file}`);
    }
    for (const [name, value] of Object.entries(table)) flat[`${section}.${name}`] = value;
  }
  const known = new Set([...CONFIG_KEYS.map((d) => d.key), CLUSTERS_KEY]);
  for (const key of Object.keys(flat)) {
    if (!known.has(key)) throw new ConfigError(`unknown config key ${key} in ${file}`);
  }
  return flat;
}

export function loadConfig(input: ConfigInput = {}): Config {
  const cwd = input.cwd ?? process.cwd();
  const env = input.env ?? process.env;
  const values: Record<string, unknown> = { ...DEFAULTS };
  const defaultFile = path.join(cwd, 'config.toml');
  const file = input.configFile
    ? path.resolve(cwd, input.configFile)
    : existsSync(defaultFile)
      ? defaultFile
      : null;
  const fromFile = file ? readToml(file) : {};
  for (const def of CONFIG_KEYS) {
    if (def.key in fromFile) values[def.key] = coerce(def, fromFile[def.key], `config file`);
    const envValue = env[def.env];
    if (envValue !== undefined && envValue !== '') values[def.key] = coerce(def, envValue, `env ${def.env}`);
    const flag = input.flags?.[def.key];
    if (flag !== undefined) values[def.key] = coerce(def, flag, 'flag');
  }
  // A body larger than the whole in-flight budget could never be accepted (503 for ever).
  if ((values['server.body_bytes_in_flight'] as number) < (values['limits.max_body_bytes'] as number)) {
    throw new ConfigError(
      `invalid value for server.body_bytes_in_flight: expected at least limits.max_body_bytes (${values['limits.max_body_bytes']})`,
    );
  }
  let clusters = CLUSTERS_KEY in fromFile ? clustersOf(fromFile[CLUSTERS_KEY], 'config file') : [];
  const clustersEnv = env[CLUSTERS_ENV];
  if (clustersEnv !== undefined && clustersEnv !== '')
    clusters = clustersOf(clustersEnv, `env ${CLUSTERS_ENV}`);
  const storageUrl = (values['storage.url'] as string | null) || null;
  if (storageUrl !== null) {
    const problem = postgresUrlProblem(storageUrl);
    if (problem)
      throw new ConfigError(
        `invalid value for storage.url (env SERVICE_STORAGE_URL or the config file): ${problem}`,
      );
  }
  const alertsIntervalMs = intervalMs(values['alerts.interval'] as string)!;
  const dataDir = path.resolve(cwd, values['storage.data_dir'] as string);
  const sqliteRoot = values['sources.sqlite_root']
    ? path.resolve(cwd, values['sources.sqlite_root'] as string)
    : path.join(dataDir, 'sources');
  const secretKey = (values['secrets.key'] as string | null) || null;
  const smtp = smtpConfig(values);
  return deepFreeze({
    server: {
      host: values['server.host'] as string,
      port: values['server.port'] as number,
      headersTimeoutMs: values['server.headers_timeout_ms'] as number,
      requestTimeoutMs: values['server.request_timeout_ms'] as number,
      keepAliveTimeoutMs: values['server.keep_alive_timeout_ms'] as number,
      bodyBytesInFlight: values['server.body_bytes_in_flight'] as number,
      trustProxy: values['server.trust_proxy'] as boolean,
    },
    storage: {
      dataDir,
      answerCacheBytes: values['storage.answer_cache_bytes'] as number,
      url: storageUrl,
    },
    cluster: { leaseMs: values['cluster.lease_ms'] as number },
    deployment: { mode: values['deployment.mode'] as Config['deployment']['mode'] },
    features: {
      projectsEnabled: values['features.projects_enabled'] as boolean,
      registrationEnabled: values['features.registration_enabled'] as boolean,
    },
    limits: {
      maxBodyBytes: values['limits.max_body_bytes'] as number,
      sqliteUploadMaxBytes: values['limits.sqlite_upload_max_bytes'] as number,
      writeQueueMaxPoints: values['limits.write_queue_max_points'] as number,
      sqliteSourceTimeoutMs: values['limits.sqlite_source_timeout_ms'] as number,
      sqliteIdleCloseMs: values['limits.sqlite_idle_close_ms'] as number,
    },
    sources: { sqliteRoot },
    log: { level: values['log.level'] as LogLevel },
    secrets: { key: secretKey },
    metrics: {
      enabled: values['metrics.enabled'] as boolean,
      token: (values['metrics.token'] as string | null) ?? null,
    },
    retention: { sweepIntervalSeconds: values['retention.sweep_interval_seconds'] as number },
    alerts: { intervalMs: alertsIntervalMs },
    session: {
      idleTimeoutSeconds: values['session.idle_timeout_seconds'] as number,
      maxLifetimeSeconds: values['session.max_lifetime_seconds'] as number,
    },
    intake: {
      listeners: values['intake.listeners'] as ListenerConfig[],
      maxKeysPerSource: values['intake.max_keys_per_source'] as number,
    },
    network: {
      outbound:
        (values['network.outbound'] as 'any' | 'public' | null) ??
        (values['deployment.mode'] === 'saas' ? 'public' : 'any'),
      allowedHosts: [...(values['network.allowed_hosts'] as string[])],
      timeoutMs: values['network.timeout_ms'] as number,
      maxDatabaseSources: values['network.max_database_sources'] as number,
      setupsPerMinute: values['network.setups_per_minute'] as number,
    },
    clusters,
    smtp,
  });
}

/** Milliseconds of `90s`, `5m`, `1h`; null when unreadable. */
function intervalMs(text: string): number | null {
  const m = /^(\d{1,6})(s|m|h)$/.exec(text.trim());
  return m ? Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 's' | 'm' | 'h'] : null;
}

const MAIL_ADDRESS = /^[^\s@<>,;:"()[\]\\]+@[^\s@<>,;:"()[\]\\]+$/;

/** `[smtp]` checked as a whole: a host needs a From address; a user name needs a password. */
function smtpConfig(values: Record<string, unknown>): Config['smtp'] {
  const host = (values['smtp.host'] as string | null) ?? null;
  const port = values['smtp.port'] as number;
  const username = (values['smtp.username'] as string | null) ?? null;
  const password = (values['smtp.password'] as string | null) ?? null;
  const from = (values['smtp.from'] as string | null) ?? null;
  if (host !== null) {
    const bare = host.trim();
    if (!isHostName(bare))
      throw new ConfigError(
        `invalid value for smtp.host (SERVICE_SMTP_HOST): expected a host name or IP address, got a string (${JSON.stringify(host).slice(0, 40)})`,
      );
    if (port === 0)
      throw new ConfigError(
        'invalid value for smtp.port (SERVICE_SMTP_PORT): expected a port number 1..65535 with a host, got a number (0)',
      );
    if (from === null)
      throw new ConfigError(
        'missing value for smtp.from (SERVICE_SMTP_FROM): e-mail needs a From address when smtp.host is set',
      );
  }
  if (from !== null) {
    const address = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from.trim();
    if (!MAIL_ADDRESS.test(address) || /[\r\n]/.test(from))
      throw new ConfigError(
        `invalid value for smtp.from (SERVICE_SMTP_FROM): expected an address such as alerts@example.com or "Alerts <alerts@example.com>", got a string (${JSON.stringify(from).slice(0, 40)})`,
      );
  }
  if ((username === null) !== (password === null))
    throw new ConfigError(
      'invalid value for smtp.username / smtp.password (SERVICE_SMTP_USERNAME / SERVICE_SMTP_PASSWORD): set both or neither',
    );
  return {
    host: host === null ? null : host.trim(),
    port,
    tls: values['smtp.tls'] as Config['smtp']['tls'],
    username,
    password,
    from,
  };
}

function deepFreeze<T extends object>(obj: T): T {
  for (const value of Object.values(obj)) if (typeof value === 'object' && value !== null) deepFreeze(value);
  return Object.freeze(obj);
}
