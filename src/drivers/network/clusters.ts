// Metrics clusters (SPEC 14, docs/cluster.md): PostgreSQL databases named in the configuration
// (`[[clusters]] id, url`) that hold the metrics of the projects created with that
// `project_cluster_id`. Each project gets a schema of its own in the cluster's database,
// `svc_project_<id without dashes>`, holding the Trifle::Stats layout in `separated` identifier
// mode (key, granularity, at): the PostgreSQL driver of database sources (postgres.ts) writes and
// reads it, so a project's buckets are written by the same atomic upserts, in the same lock order,
// with the same retries. The schema keeps projects apart without a prefix on every key (a metric
// key may use all 255 characters of the column), and removing a project is one DROP SCHEMA.
//
// What a project needs beyond a database source is here: the schema made at creation, whether it
// holds data (its zone may change only while it holds none), the retention sweep's deletes and the
// removal of everything when the project goes. The stores of a cluster's projects share one pool.
// The configuration is the operator's, so the cluster is reached whatever network.outbound says.
import type pg from 'pg';
import { unavailable } from '../../errors';
import type { ClusterConfig } from '../../config-clusters';
import { ANY_OUTBOUND } from '../../lib/outbound';
import { RETRY_AFTER_S } from './store';
import { createGuardedPool, createPostgresStore, type GuardedPool } from './postgres';
import type { WriteSetStore } from '../types';
import { SYSTEM_KEY, SYSTEM_KEYS_PREFIX } from '../../model/write-set';
import { UNTRACKED_KEY } from '../../model/window/window';

/** connections of one node to one cluster, shared by the cluster's projects */
export const CLUSTER_POOL_SIZE = 10;
/** rows one retention DELETE removes; the sweep repeats it until fewer go */
export const EXPIRE_CHUNK_ROWS = 1000;

export interface MetricClusters {
  has(clusterId: string): boolean;
  /** The cluster's merge window (`merge_window_ms`): how long the write queue gathers its projects' writes. */
  mergeWindowMs(clusterId: string): number;
  /** The layout of a project's buckets on its cluster (the registry gives it the write door). */
  layout(clusterId: string, projectId: string, timeZone: string): WriteSetStore;
  /** Whether the project's schema holds a bucket (false when it was never set up). */
  holdsData(clusterId: string, projectId: string): Promise<boolean>;
  /** The distinct metric keys stored, the system key left out (0 when never set up). */
  keyCount(clusterId: string, projectId: string): Promise<number>;
  /**
   * Deletes the project's buckets of `granularity` that start before `beforeMs`, in chunks of
   * EXPIRE_CHUNK_ROWS rows (one short transaction each); resolves with the rows deleted.
   */
  expire(clusterId: string, projectId: string, granularity: string, beforeMs: number): Promise<number>;
  /**
   * The distinct keys the system key's rows of `granularity` list (`keys.<key>` leaves), from the
   * rows of buckets starting at `sinceMs` or later (null: every row); none when never set up.
   */
  keys(clusterId: string, projectId: string, granularity: string, sinceMs: number | null): Promise<string[]>;
  /** Drops the project's schema with every bucket in it. */
  drop(clusterId: string, projectId: string): Promise<void>;
  close(): Promise<void>;
}

/** The schema of a project: the id's hex digits, so it needs no quoting beyond the statement's. */
export function projectSchema(projectId: string): string {
  const hex = projectId.toLowerCase().replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/.test(hex)) throw new Error('a project id is a UUID');
  return `svc_project_${hex}`;
}

/** What a metrics call answers when the cluster cannot be used now (never the driver's message). */
export function clusterUnavailable(cause: unknown): Error {
  const err = unavailable('The metrics cluster is unavailable, retry later', RETRY_AFTER_S);
  (err as { cause?: unknown }).cause = cause;
  return err;
}

const UNDEFINED_TABLE = '42P01';
const missingTable = (err: unknown) => (err as { code?: string }).code === UNDEFINED_TABLE;

export function createMetricClusters(
  clusters: readonly ClusterConfig[],
  options: { timeoutMs?: number } = {},
): MetricClusters {
  const pools = new Map<string, GuardedPool>();
  const urls = new Map(clusters.map((c) => [c.id, c.url]));
  const windows = new Map(clusters.map((c) => [c.id, c.mergeWindowMs]));

  function poolOf(clusterId: string): GuardedPool {
    const url = urls.get(clusterId);
    if (url === undefined) throw unavailable(`Metrics cluster ${clusterId} is not configured`, RETRY_AFTER_S);
    let pool = pools.get(clusterId);
    if (!pool) {
      pool = createGuardedPool(
        { url, policy: ANY_OUTBOUND, timeoutMs: options.timeoutMs },
        CLUSTER_POOL_SIZE,
      );
      pools.set(clusterId, pool);
    }
    return pool;
  }

  async function run<T>(clusterId: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
    const pool = poolOf(clusterId);
    try {
      return await work(await pool.get());
    } catch (err) {
      throw clusterUnavailable(err);
    }
  }

  return {
    has: (clusterId) => urls.has(clusterId),
    mergeWindowMs: (clusterId) => windows.get(clusterId) ?? 0,

    layout(clusterId, projectId, timeZone) {
      return createPostgresStore({
        mode: 'separated',
        timeZone,
        schema: projectSchema(projectId),
        pool: poolOf(clusterId),
        timeoutMs: options.timeoutMs,
      });
    },

    async holdsData(clusterId, projectId) {
      const table = `"${projectSchema(projectId)}".trifle_stats`;
      return run(clusterId, async (pool) => {
        try {
          return (await pool.query(`SELECT 1 FROM ${table} LIMIT 1`)).rowCount! > 0;
        } catch (err) {
          if (missingTable(err)) return false;
          throw err;
        }
      });
    },

    async keyCount(clusterId, projectId) {
      const table = `"${projectSchema(projectId)}".trifle_stats`;
      return run(clusterId, async (pool) => {
        try {
          const { rows } = await pool.query<{ n: string }>(
            `SELECT count(DISTINCT key)::text AS n FROM ${table} WHERE key <> $1`,
            [SYSTEM_KEY],
          );
          return Number(rows[0]!.n);
        } catch (err) {
          if (missingTable(err)) return 0;
          throw err;
        }
      });
    },

    async expire(clusterId, projectId, granularity, beforeMs) {
      const table = `"${projectSchema(projectId)}".trifle_stats`;
      const sql =
        `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} ` +
        'WHERE granularity = $1 AND at < $2 LIMIT $3))';
      return run(clusterId, async (pool) => {
        let deleted = 0;
        for (;;) {
          let count: number;
          try {
            count =
              (await pool.query(sql, [granularity, new Date(beforeMs), EXPIRE_CHUNK_ROWS])).rowCount ?? 0;
          } catch (err) {
            if (missingTable(err)) return deleted;
            throw err;
          }
          deleted += count;
          if (count < EXPIRE_CHUNK_ROWS) return deleted;
        }
      });
    },

    async keys(clusterId, projectId, granularity, sinceMs) {
      const table = `"${projectSchema(projectId)}".trifle_stats`;
      // One query over the rows of one granularity of one key: the primary key (key, granularity,
      // at) finds them; each row's leaves are read from its jsonb (bench/cluster-keys.ts).
      const sql =
        `SELECT DISTINCT substr(k, ${SYSTEM_KEYS_PREFIX.length + 1}) AS key ` +
        `FROM ${table} t, jsonb_object_keys(t.data) k ` +
        'WHERE t.key = $1 AND t.granularity = $2 AND t.at >= $3 AND left(k, $4) = $5 AND k <> $6';
      const since = sinceMs === null ? '-infinity' : new Date(sinceMs);
      return run(clusterId, async (pool) => {
        try {
          const { rows } = await pool.query<{ key: string }>(sql, [
            SYSTEM_KEY,
            granularity,
            since,
            SYSTEM_KEYS_PREFIX.length,
            SYSTEM_KEYS_PREFIX,
            SYSTEM_KEYS_PREFIX + UNTRACKED_KEY,
          ]);
          return rows.map((r) => r.key);
        } catch (err) {
          if (missingTable(err)) return [];
          throw err;
        }
      });
    },

    async drop(clusterId, projectId) {
      const schema = projectSchema(projectId);
      await run(clusterId, (pool) => pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`));
    },

    async close() {
      const open = [...pools.values()];
      pools.clear();
      await Promise.all(open.map((p) => p.close()));
    },
  };
}
