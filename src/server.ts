// startServer(config) -> { url, close }: open storage, migrate, build deps, listen.
// Used by main.ts and by the tests, which start as many servers as they like in one process.
import { mkdirSync, statfsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { Socket } from 'node:net';
import type { Config } from './config';
import type { Deps } from './deps';
import { createApp } from './app';
import {
  answerExpectationFailed,
  applyConnectionLimits,
  connectionOptions,
  trackConnections,
} from './http/connection-limits';
import { createLogger, type Logger } from './lib/log';
import { LAST_RESORT_CHECKPOINT_PAGES, openDatabase } from './storage/db';
import { securePrivateDatabase, securePrivateDirectory } from './storage/file-modes';
import { migrate } from './storage/migrations';
import { createAccountsRepo } from './storage/accounts';
import { createSourcesRepo } from './storage/sources';
import { createDashboardsRepo } from './storage/dashboards';
import { createSharesRepo } from './storage/shares';
import { createSessionsRepo } from './storage/sessions';
import { createLoginThrottle } from './domain/login-throttle';
import { createMetricsEngine, type MetricsEngineOptions } from './domain/metrics/engine';
import { migrateSqliteSources } from './domain/sqlite-migration';
import { createSecretBox, loadSecretKey } from './lib/secrets';
import { encryptStoredSecrets } from './storage/source-secrets';
import { OpsStats } from './ops/stats';
import { createRetentionSweeper } from './ops/retention-sweeper';
import { backgroundJobs, createJobKeeper, pgJobsLease } from './ops/jobs';
import { removePidFile, writePidFile } from './ops/pid-file';
import { SERVER_VERSION } from './version';
import { startListeners, type Listeners } from './intake/listeners';
import { createMonitorsRepo } from './storage/monitors';
import { createOutboxRepo } from './storage/outbox';
import { createChannelsRepo } from './storage/channels';
import { createTranspondersRepo } from './storage/transponders';
import { createEvaluator } from './domain/alerts/evaluator';
import { createReporter } from './domain/alerts/reports';
import { createOutboxWorker } from './domain/alerts/outbox';
import type { ChannelSender } from './domain/alerts/delivery-port';
import { createChannelSender } from './domain/alerts/channels/sender';
import type { OutboxOptions } from './domain/alerts/outbox';
import { createPgStore, type PgStore } from './storage/pg/client';
import { migratePostgres } from './storage/pg/migrations';
import { createPgRepos } from './storage/pg/index';
import { createPgRuleSources } from './storage/pg/retention';
import { createPgEnabledTransponders } from './storage/pg/transponders';
import { displayUrl } from './ops/migrate-common';
import { newNodeId } from './ops/node-id';

/** The info-level summary of requests, points and errors (SPEC section 11). */
const SUMMARY_INTERVAL_MS = 60_000;
/** A stop waits this long for slow connections before cutting them. */
const STOP_DEADLINE_MS = 10_000;
/**
 * A stop first goes on accepting until no connection or request has come for STOP_QUIET_MS (at
 * most STOP_DRAIN_MAX_MS), so that what clients sent before it is read and answered (503 +
 * `Connection: close`) rather than reset by a closed listener or a closed idle connection.
 */
const STOP_QUIET_MS = 100;
const STOP_DRAIN_MAX_MS = 1_000;
/** How long a stop waits for the retention sweep, then for the metric writer's fold. */
const STOP_FOLD_MS = 1_500;

/** Waits for `work`, STOP_FOLD_MS at most (then `onLate`); its failure is its own business. */
async function within(work: Promise<unknown>, ms: number, onLate: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      onLate();
      resolve();
    }, ms);
  });
  try {
    await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** While stopping, idle connections are looked for this often. */
const STOP_SWEEP_MS = 25;

/** Resolves once the server has seen no new connection or request for STOP_QUIET_MS. */
async function quietened(server: http.Server): Promise<void> {
  let last = performance.now();
  const seen = () => (last = performance.now());
  server.on('connection', seen);
  server.on('request', seen);
  const until = last + STOP_DRAIN_MAX_MS;
  try {
    for (let now = last; now < until && now - last < STOP_QUIET_MS; now = performance.now()) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(STOP_QUIET_MS - (now - last), until - now) + 1),
      );
      // after the poll phase of this turn: connections the kernel holds have been taken in
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    server.off('connection', seen);
    server.off('request', seen);
  }
}

export interface StartOptions {
  log?: Logger;
  /** better-sqlite3 native binding (the single executable loads it itself) */
  nativeBinding?: unknown;
  /** the file that binding was loaded from, for worker threads to load it too */
  nativeBindingPath?: string;
  /** the allocator settings the process applied (src/sea/memory.ts), for the start-up line */
  allocator?: string;
  /** the clock of deps.now and the retention sweep (tests move it) */
  now?: () => number;
  /** run the retention sweep on its timer (default true; tests call deps.ops.sweeper.sweep()) */
  sweepTimer?: boolean;
  /**
   * run alert evaluation and the outbox on their timers (default true; tests call
   * deps.ops.alerts.evaluator.round() and deps.ops.alerts.outbox.drain() with their own clock)
   */
  alertsTimer?: boolean;
  /** the channels' sender of alert notifications (tests pass their own) */
  channelSender?: ChannelSender;
  /** the outbox worker's timeout, retries and back-off (tests shorten them) */
  outbox?: Partial<
    Pick<OutboxOptions, 'timeoutMs' | 'maxAttempts' | 'baseDelayMs' | 'maxDelayMs' | 'random'>
  >;
  /** the metric writer's settings (tests: e.g. a fold window that does not close by itself) */
  writer?: MetricsEngineOptions['writer'];
  /** this node's id (GET /metrics, leases); default `hostname:pid:random` (ops/node-id.ts) */
  nodeId?: string;
}

export interface RunningServer {
  url: string;
  port: number;
  deps: Deps;
  /** cluster mode (storage.url): the pool of the service's tables in PostgreSQL; null on one node */
  store: PgStore | null;
  /** stop accepting, finish in-flight requests, flush pending writes, close the database */
  close(): Promise<void>;
}

const CLIENT_ERROR_BODIES: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large'],
  HPE_URI_TOO_LONG: [431, 'Request line too long'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout: headers or body not received in time'],
};
const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

// Malformed or oversized request lines/headers never reach Koa: answer them with the JSON error body.
function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  // A time-out can hit a request that was already answered (a 413 or 503 while its body drains).
  const answered =
    (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (!socket.writable || answered) {
    socket.destroy();
    return;
  }
  const [status, detail] = CLIENT_ERROR_BODIES[err.code ?? ''] ?? [400, 'Bad request'];
  const body = JSON.stringify({ errors: { detail } });
  const reason = REASONS[status] ?? 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const DISK_FULL = new Set(['SQLITE_FULL', 'ENOSPC', 'EDQUOT']);
/** Below this much free space, a start-up failure that touched the disk is put down to a full disk. */
const NEARLY_FULL_BYTES = 1024 * 1024;

/**
 * Whether a start-up failure comes from a full disk: the error says so, or the file system of the
 * data directory has next to no room left (SQLite may report that as a plain I/O error).
 */
export function diskFull(err: unknown, dataDir: string): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && DISK_FULL.has(code)) return true;
  if (typeof code !== 'string' || !/^(SQLITE_IOERR|SQLITE_CANTOPEN|EIO)/.test(code)) return false;
  try {
    const fs = statfsSync(dataDir);
    return fs.bavail * fs.bsize < NEARLY_FULL_BYTES;
  } catch {
    return false;
  }
}

/** The start-up failure line for a full disk. */
export const diskFullLine = (err: unknown, dataDir: string, what: string) =>
  `the disk holding the data directory ${dataDir} is full (${(err as Error)?.message ?? String(err)}): ${what}; free some space and start again`;

/** One line for a metric writer that did not start: a full disk is named as such. */
function writerStartFailure(err: unknown, dataDir: string): string {
  if (diskFull(err, dataDir))
    return diskFullLine(err, dataDir, 'the metric writer cannot replay its write log');
  return `the metric writer did not start: ${(err as Error)?.message ?? String(err)}`;
}

/** How long a start waits for storage.url's database to accept the migration's connection. */
const MIGRATION_CONNECT_MS = 10_000;

/**
 * Cluster mode (storage.url, docs/cluster.md part 3): the service's tables are brought to this
 * build's version under the migrations' advisory lock, then one pool serves the repositories. A
 * database that cannot be reached or is newer than this build stops the start with one line.
 */
async function openControlPlane(url: string, config: Config, nodeId: string): Promise<PgStore> {
  try {
    // a database that does not answer (a dropped packet, not a refusal) must not hang the start
    await migratePostgres(url, { connect: { connectionTimeoutMillis: MIGRATION_CONNECT_MS } });
  } catch (err) {
    const message = ((err as Error)?.message ?? String(err)).split('\n')[0];
    throw new Error(`storage.url ${displayUrl(url)}: ${message}`);
  }
  return createPgStore(url, {
    statementTimeoutMs: config.network?.timeoutMs,
    applicationName: `trifle-service ${nodeId}`.slice(0, 63),
  });
}

/** How long GET /api/v1/health waits for the database of cluster mode. */
const HEALTH_PING_MS = 2_000;

/** One round trip to the database, HEALTH_PING_MS at most: resolves with its milliseconds. */
async function pingDatabase(store: PgStore): Promise<number> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      store.one('SELECT 1'),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('no answer in time')), HEALTH_PING_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
  return performance.now() - started;
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.log.level);
  const nodeId = options.nodeId ?? newNodeId();
  const clusterUrl = config.storage.url;
  const store = clusterUrl === null ? null : await openControlPlane(clusterUrl, config, nodeId);
  let db: ReturnType<typeof openDatabase>;
  try {
    securePrivateDirectory(config.storage.dataDir);
    mkdirSync(path.join(config.sources.sqliteRoot, '.uploads'), { recursive: true });
    securePrivateDatabase(path.join(config.storage.dataDir, 'service.db'));
    // In cluster mode service.db is this node's scratch: the embedded store's tables (unused by
    // projects, which are all on metrics clusters), the write log, the intake's key-limit store.
    db = openDatabase(path.join(config.storage.dataDir, 'service.db'), {
      nativeBinding: options.nativeBinding,
    });
    migrate(db);
  } catch (err) {
    await store?.close().catch(() => undefined);
    throw err;
  }
  const dbFile = path.join(config.storage.dataDir, 'service.db');
  const secrets = createSecretBox(loadSecretKey(config.secrets.key, config.storage.dataDir));
  if (store === null) {
    const migrated = encryptStoredSecrets(db, secrets);
    if (migrated > 0) log.info('encrypted stored database source secrets', { sources: migrated });
  }
  const pg = store === null ? null : createPgRepos(store);
  const now = options.now ?? (() => Date.now());
  const stats = new OpsStats();
  const sweeper = createRetentionSweeper({
    open: () =>
      openDatabase(dbFile, {
        nativeBinding: options.nativeBinding,
        checkpointPages: LAST_RESORT_CHECKPOINT_PAGES,
      }),
    now,
    log,
    intervalMs: options.sweepTimer === false ? 0 : config.retention.sweepIntervalSeconds * 1000,
    beforeSweep: () => deps.metrics.flush(),
    onDeleted: () => deps.metrics.forgetAnswers(),
    expireElsewhere: async (sourceId, cutoffMs) => {
      const source = await deps.sources.byId(sourceId);
      return (source && deps.metrics.cluster(source)?.expire(cutoffMs)) ?? 0;
    },
    ruleSources: store === null ? undefined : createPgRuleSources(store),
  });
  const sources = pg?.sources ?? createSourcesRepo(db);
  const monitors = pg?.monitors ?? createMonitorsRepo(db);
  const outbox = pg?.outbox ?? createOutboxRepo(db);
  const channels = pg?.channels ?? createChannelsRepo(db);
  const outboxWorker = createOutboxWorker({
    outbox,
    sender: options.channelSender ?? createChannelSender({ channels, secrets, config, log }),
    now,
    log,
    ...options.outbox,
  });
  const dashboards = pg?.dashboards ?? createDashboardsRepo(db);
  const evaluator = createEvaluator({
    monitors,
    outbox,
    sources,
    metrics: {
      readSeries: (source, params) => deps.metrics.readSeries(source, params),
      readSeriesMany: (source, keys, params) => deps.metrics.readSeriesMany(source, keys, params),
    },
    now,
    log,
    onQueued: () => outboxWorker.kick(),
    reports: createReporter({
      monitors,
      outbox,
      sources,
      dashboards,
      metrics: { readSeries: (source, params) => deps.metrics.readSeries(source, params) },
      log,
    }),
  });
  const deps: Deps = {
    config,
    db,
    log,
    now,
    accounts: pg?.accounts ?? createAccountsRepo(db),
    sources,
    dashboards,
    shares: pg?.shares ?? createSharesRepo(db),
    sessions: pg?.sessions ?? createSessionsRepo(db),
    monitors,
    outbox,
    channels,
    transponders: pg?.transponders ?? createTranspondersRepo(db),
    loginThrottle: pg?.loginThrottle ?? createLoginThrottle(),
    metrics: createMetricsEngine({
      db,
      config,
      log,
      nativeBinding: options.nativeBinding,
      nativeBindingPath: options.nativeBindingPath,
      secrets,
      onCommitted: (points, leaves, seconds) => stats.committed(points, leaves, seconds),
      writer: options.writer,
      // cluster mode: read from PostgreSQL, kept 2 s (another node's change), cleared by this node's writes
      enabledTransponders: store === null ? undefined : createPgEnabledTransponders(store),
    }),
    ops: {
      stats,
      sweeper,
      stopping: false,
      alerts: { evaluator, outbox: outboxWorker },
      nodeId,
      database: store === null ? undefined : { ping: () => pingDatabase(store) },
    },
    nativeBinding: options.nativeBinding,
    secrets,
  };
  try {
    // A writer that cannot replay its log (e.g. no room on the disk to fold it) is a start-up
    // failure, not a server that answers 503 to every metrics call.
    await deps.metrics.writerStarted();
  } catch (err) {
    await deps.metrics.close().catch(() => undefined);
    db.close();
    await store?.close().catch(() => undefined);
    throw new Error(writerStartFailure(err, config.storage.dataDir));
  }
  // files of sqlite sources into per-organization folders; staging cleared (none in cluster mode)
  if (store === null) await migrateSqliteSources(deps);
  const app = createApp(deps);
  const server = http.createServer(connectionOptions(config), app.callback());
  applyConnectionLimits(server, config);
  const connections = trackConnections(server);
  server.on('clientError', answerClientError);
  server.on('checkExpectation', answerExpectationFailed);
  let listeners: Listeners;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.server.port, config.server.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    listeners = await startListeners(deps, config.intake.listeners);
  } catch (err) {
    // e.g. the port is in use: release what was opened, the caller reports the error
    if (server.listening) server.close();
    await deps.metrics.close();
    db.close();
    await store?.close().catch(() => undefined);
    throw err;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const url = `http://${host}:${port}`;
  writePidFile(config.storage.dataDir, { pid: process.pid, url });
  // The sweep, the alert rounds and the outbox sender: always here on one node; in cluster mode
  // while this node holds the jobs' lease (src/ops/jobs.ts).
  const alertsIntervalMs = options.alertsTimer !== false ? config.alerts.intervalMs : 0;
  const jobs = backgroundJobs({ sweeper, evaluator, outbox: outboxWorker, alertsIntervalMs });
  const lease = config.storage.url ? pgJobsLease(config.storage.url, config.cluster.leaseMs) : null;
  const keeper = createJobKeeper({ lease, ttlMs: config.cluster.leaseMs, jobs, log, holder: nodeId });
  deps.ops.jobs = keeper;
  keeper.start();
  const summary = setInterval(
    () => log.info('summary', { interval_s: SUMMARY_INTERVAL_MS / 1000, ...stats.takeWindow() }),
    SUMMARY_INTERVAL_MS,
  );
  summary.unref();
  log.info('service started', {
    version: SERVER_VERSION,
    url,
    data_dir: config.storage.dataDir,
    pid: process.pid,
    ...(clusterUrl === null ? {} : { storage_url: displayUrl(clusterUrl), node_id: nodeId }),
    ...(options.allocator ? { allocator: options.allocator } : {}),
  });

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      deps.ops.stopping = true; // answers from now on close their connections
      clearInterval(summary);
      // Connections the kernel has accepted and requests already sent on idle keep-alive
      // connections are taken in first (and answered 503 with `Connection: close`): closing the
      // listener or an idle connection at once would reset them.
      await quietened(server);
      await new Promise<void>((resolve) => {
        const deadline = setTimeout(() => server.closeAllConnections(), STOP_DEADLINE_MS);
        // Idle connections close as they turn idle (their last answer sent), but never one that
        // holds part of a request: http.Server#close would close every idle one at once, so only
        // the listener is closed here.
        const idle = setInterval(() => connections.closeIdle(), STOP_SWEEP_MS);
        net.Server.prototype.close.call(server, () => {
          clearTimeout(deadline);
          clearInterval(idle);
          resolve();
        });
        connections.closeIdle();
      });
      await listeners.close(); // StatsD holdings are written before the engine closes
      // Both wait for folds of the metric writer, which cannot finish on a full disk: a stop
      // does not wait for them past STOP_FOLD_MS, since every acknowledged point is in the
      // write log, which the next start replays.
      const late = (what: string) => () =>
        log.warn(
          `${what} did not finish; stopping without it (the write log keeps every acknowledged point)`,
          { waited_ms: STOP_FOLD_MS },
        );
      await within(keeper.close(), STOP_FOLD_MS, late('background jobs')); // stops them, then releases the lease
      await within(evaluator.close(), STOP_FOLD_MS, late('alert evaluation'));
      await outboxWorker.close(); // attempts in flight are aborted; their rows resume at the next start
      await within(sweeper.close(), STOP_FOLD_MS, late('retention sweep'));
      await within(deps.metrics.close(), STOP_FOLD_MS, late('metric writer')); // commits pending writes, closes source files
      db.close();
      await store
        ?.close()
        .catch((err) => log.warn('closing the database pool failed', { error: String(err) }));
      removePidFile(config.storage.dataDir, process.pid);
      log.info('service stopped', { ...stats.takeWindow() });
    })());
  return { url, port, deps, store, close };
}
