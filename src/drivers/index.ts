// The registry: the one place that picks a source's metric store. Projects share the embedded
// store (in service.db, written by the engine's metric writer, which builds it), except a project
// created on a metrics cluster (`config.cluster_id`, network/clusters.ts), whose buckets live in
// its schema of the cluster's PostgreSQL; a database source gets the layout of its driver. Layouts
// are opened on first use and cached per source until their settings change or the registry
// closes. Adding a driver is one line in STORE_FACTORIES.
//
// Every store is written by one door, `commit(entries)` (types.ts). A driver's layout applies
// merged write sets; the registry gives it the door: merge the commit's points into one write set
// with the engine's merger (`merge`, passed in so that drivers need nothing of the domain), then
// apply it in one transaction.
import { conflict } from '../errors';
import type { Db } from '../storage/db';
import type { Source } from '../model/source';
import { IDENTIFIER_MODES, type IdentifierMode } from './sqlite/setup';
import { createSqliteStore } from './sqlite/store';
import { createSqlitePool, type SqlitePool, type SqlitePoolOptions } from './sqlite/pool';
import { createPostgresStore } from './network/postgres';
import { createMysqlStore } from './network/mysql';
import { createRedisStore } from './network/redis';
import { createMongoStore } from './network/mongo';
import type { NetworkSettings } from './network/store';
import type { NetworkPolicy } from '../lib/outbound';
import type { SecretBox } from '../lib/secrets';
import type { LoggedPoints, MergeEntries, MetricStore, WriteSetStore } from './types';
import { clusterUnavailable, type MetricClusters } from './network/clusters';
import { AppError } from '../errors';

export interface DriverContext {
  /** the service's own database, home of the embedded store */
  db: Db;
  /** the store of every project */
  embedded: MetricStore;
  /** merges a commit's points into one write set, for the layouts of database sources */
  merge: MergeEntries;
  /** better-sqlite3 native binding for the single executable */
  nativeBinding?: unknown;
  /** the file it was loaded from, for the sqlite workers' threads */
  nativeBindingPath?: string;
  /** the configured metrics clusters, home of the projects created on one */
  clusters?: MetricClusters;
  /**
   * Cluster mode (storage.url): the metrics cluster of every project that names none
   * (DEFAULT_CLUSTER_ID, storage.url itself); SQLite database sources are refused. null or
   * absent: one node, such projects on the embedded store.
   */
  defaultCluster?: string | null;
  /** time limit, idle close and workers of sqlite source files (sqlite/pool.ts) */
  sqlite?: SqlitePoolOptions;
  /** decrypts the secrets of database sources (passwords, URLs) kept encrypted at rest */
  secrets?: SecretBox;
  /** network.outbound and the time limit of network stores (config [network]) */
  network?: NetworkPolicy & { timeoutMs?: number };
}

/** What a factory gets: the context plus the shared resources the registry owns. */
export interface FactoryContext extends DriverContext {
  sqlitePool(): SqlitePool;
}

/** Opens the layout of a database source from its recorded settings (no I/O needed to construct). */
export type StoreFactory = (source: Source, ctx: FactoryContext) => WriteSetStore;

export function identifierMode(source: Source): IdentifierMode {
  const mode = source.config.identifier_mode;
  return IDENTIFIER_MODES.find((m) => m === mode) ?? 'full';
}

function sqliteFile(source: Source): string {
  const file = source.config.file_path;
  if (typeof file !== 'string' || file === '') throw conflict('The database source has no file_path');
  return file;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;
const int = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isInteger(value) ? value : undefined;

/** The connection settings of a network source, its secrets decrypted. */
function networkSettings(source: Source, ctx: DriverContext): NetworkSettings & { timeZone: string } {
  const c = source.config;
  const secret = (value: unknown) => {
    const stored = text(value);
    return stored !== undefined && ctx.secrets ? ctx.secrets.decrypt(stored) : stored;
  };
  return {
    url: secret(c.url),
    host: text(c.host),
    port: int(c.port),
    database: text(c.database_name),
    username: text(c.username),
    password: secret(c.password),
    ssl: c.ssl === true,
    db: int(c.database),
    prefix: text(c.prefix),
    authSource: text(c.auth_source),
    timeZone: source.timeZone,
    policy: ctx.network,
    timeoutMs: ctx.network?.timeoutMs,
  };
}

const STORE_FACTORIES: Partial<Record<string, StoreFactory>> = {
  sqlite: (source, ctx) =>
    createSqliteStore({
      file: sqliteFile(source),
      mode: identifierMode(source),
      pool: ctx.sqlitePool(),
      timeZone: source.timeZone,
    }),
  postgres: (source, ctx) =>
    createPostgresStore({ ...networkSettings(source, ctx), mode: identifierMode(source) }),
  mysql: (source, ctx) => createMysqlStore({ ...networkSettings(source, ctx), mode: identifierMode(source) }),
  redis: (source, ctx) => createRedisStore(networkSettings(source, ctx)),
  mongo: (source, ctx) =>
    createMongoStore({
      ...networkSettings(source, ctx),
      mode: identifierMode(source),
      expireAfter: source.expireAfter,
    }),
};

/**
 * The metrics cluster a project's buckets live on (set at creation, never changed), or null. In
 * cluster mode `fallback` is the default metrics cluster: a project recorded without one (created
 * on the default cluster, or copied by `service migrate`) keeps its buckets there.
 */
export function projectClusterOf(source: Source, fallback: string | null = null): string | null {
  if (source.type !== 'project') return null;
  const id = source.config.cluster_id;
  return typeof id === 'string' ? id : fallback;
}

/** What a SQLite database source answers in cluster mode: its file is on one node's disk. */
export const SQLITE_IN_CLUSTER_MODE =
  'SQLite database sources are not available in cluster mode (storage.url): the file would be on one node only; use a PostgreSQL, MySQL, Redis or Mongo source';

/** A failure of a cluster project's store as the client sees it: the cluster, not a database source. */
function asCluster(err: unknown): unknown {
  return err instanceof AppError && err.kind === 'unavailable' ? clusterUnavailable(err) : err;
}

/** The door of a project on a metrics cluster: the layout's, its unavailability named for the cluster. */
function clusterProjectStore(layout: WriteSetStore, merge: MergeEntries, mergeWindowMs: number): MetricStore {
  const store = committing(layout, merge);
  return {
    ...store,
    mergeWindowMs,
    setup: () => store.setup().catch((err) => Promise.reject(clusterUnavailable(err))),
    commit: (entries) => store.commit(entries).catch((err) => Promise.reject(asCluster(err))),
    read: (series, starts) => store.read(series, starts).catch((err) => Promise.reject(asCluster(err))),
  };
}

export interface DriverRegistry {
  /** The store of a source; throws 409 for a driver without a store. */
  storeFor(source: Source): MetricStore;
  /** Closes and forgets the store of a source (a removed database source). */
  release(sourceId: string): Promise<void>;
  close(): Promise<void>;
}

interface Cached {
  /** the settings the store was opened with: a change reopens it */
  fingerprint: string;
  store: MetricStore;
}

function openStore(source: Source, ctx: FactoryContext): MetricStore {
  if (source.driver === 'sqlite' && ctx.defaultCluster) throw conflict(SQLITE_IN_CLUSTER_MODE);
  const factory = source.driver ? STORE_FACTORIES[source.driver] : undefined;
  if (!factory) throw conflict(`driver ${source.driver ?? 'unknown'} is not yet supported`);
  return committing(factory(source, ctx), ctx.merge);
}

/** A layout's door: a commit's points merged into one write set, applied in one transaction. */
export function committing(layout: WriteSetStore, merge: MergeEntries): MetricStore {
  return {
    kind: layout.kind,
    setup: () => layout.setup(),
    commit: async (entries: readonly LoggedPoints[]) => layout.apply(merge(entries)),
    settle: async () => undefined, // applied at once
    read: (series, starts) => layout.read(series, starts),
    close: () => layout.close(),
  };
}

export function createDriverRegistry(ctx: DriverContext): DriverRegistry {
  const embedded = ctx.embedded;
  const stores = new Map<string, Cached>();
  let pool: SqlitePool | null = null;
  const factoryCtx: FactoryContext = {
    ...ctx,
    sqlitePool: () =>
      (pool ??= createSqlitePool({
        nativeBinding: ctx.nativeBinding,
        nativeBindingPath: ctx.nativeBindingPath,
        ...ctx.sqlite,
      })),
  };

  function openClusterStore(source: Source, cluster: string): MetricStore {
    if (!ctx.clusters?.has(cluster))
      throw clusterUnavailable(new Error(`metrics cluster ${cluster} is not configured`));
    return clusterProjectStore(
      ctx.clusters.layout(cluster, source.id, source.timeZone),
      ctx.merge,
      ctx.clusters.mergeWindowMs(cluster),
    );
  }

  return {
    storeFor(source) {
      const cluster = projectClusterOf(source, ctx.defaultCluster ?? null);
      if (source.type === 'project' && cluster === null) return embedded;
      const fingerprint =
        cluster === null
          ? `${source.driver}\u0000${JSON.stringify(source.config)}`
          : `cluster\u0000${cluster}\u0000${source.timeZone}`;
      const cached = stores.get(source.id);
      if (cached && cached.fingerprint === fingerprint) return cached.store;
      const store = cluster === null ? openStore(source, factoryCtx) : openClusterStore(source, cluster);
      if (cached) void cached.store.close().catch(() => undefined);
      stores.set(source.id, { fingerprint, store });
      return store;
    },
    async release(sourceId) {
      const cached = stores.get(sourceId);
      stores.delete(sourceId);
      await cached?.store.close().catch(() => undefined);
    },
    async close() {
      const open = [...stores.values()].map(({ store }) => store.close().catch(() => undefined));
      stores.clear();
      await Promise.all(open);
      await pool?.close();
      pool = null;
      await ctx.clusters?.close();
      await embedded.close();
    },
  };
}
