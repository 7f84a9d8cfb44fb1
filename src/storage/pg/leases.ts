// Lease rows in `node_leases` (cluster mode, docs/cluster.md "Jobs run once"): the node whose
// `holder` a row names, while its `expires_at` is ahead, is the one that runs what the lease
// covers (the background jobs: src/ops/jobs.ts); any node takes a row over once it has expired.
//
// Every time here is the database's clock (`now()` / `clock_timestamp()` in epoch ms), never a
// node's: whether a lease has expired is decided by the one clock every node's statement reads, so
// a node whose clock runs ahead or behind cannot take over a lease the database still counts as
// held, and two nodes cannot both be given it. Each node only measures durations with its own
// monotonic clock (the keeper stops its jobs `ttl - margin` after it *sent* the renewal that
// succeeded, which is never later than the expiry the database wrote).
import type { Sql } from './client';

/** The one lease of the background jobs. */
export const JOBS_LEASE = 'jobs';

/** The database's clock in epoch milliseconds (as the service's other times). */
const DB_NOW_MS = `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`;

export interface LeaseGrant {
  /** who holds it: always the caller, since only a granted lease is returned */
  holder: string;
  /** the database's time (ms) at which the lease runs out unless renewed */
  expiresAt: number;
  /** the database's time (ms) at which this holder took it (kept by renewals) */
  acquiredAt: number;
}

export interface LeaseRow {
  holder: string;
  expiresAt: number;
  acquiredAt: number;
  /** the database's time (ms) when read */
  now: number;
}

// One statement, so two nodes asking at once are ordered by the row lock and only one is given the
// lease: a new row is inserted, or the existing one is updated only while this holder has it or it
// has expired (the WHERE is checked again on the row's newest version by PostgreSQL after a wait).
// `acquired_at` is kept while the same holder renews an unexpired lease and reset otherwise.
const ACQUIRE = `INSERT INTO node_leases AS l (name, holder, expires_at, acquired_at)
SELECT $1::text, $2::text, t.ms + $3::bigint, t.ms FROM (SELECT ${DB_NOW_MS} AS ms) t
ON CONFLICT (name) DO UPDATE SET
  holder = EXCLUDED.holder,
  expires_at = EXCLUDED.expires_at,
  acquired_at = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at >= EXCLUDED.acquired_at
                     THEN l.acquired_at ELSE EXCLUDED.acquired_at END
WHERE l.holder = EXCLUDED.holder OR l.expires_at < EXCLUDED.acquired_at
RETURNING holder, expires_at, acquired_at`;

const RELEASE = `DELETE FROM node_leases WHERE name = $1 AND holder = $2`;

const READ = `SELECT holder, expires_at, acquired_at, ${DB_NOW_MS} AS now FROM node_leases WHERE name = $1`;

// The fence: inside a job's transaction, the lease is still this holder's and unexpired, and it
// stays so until that transaction ends: FOR SHARE conflicts with the row lock a takeover's
// `ON CONFLICT DO UPDATE` takes, so a takeover waits for the transaction to commit (and the new
// holder then reads what it wrote), or the transaction finds the lease gone and writes nothing.
const FENCE = `SELECT 1 AS held FROM node_leases
WHERE name = $1 AND holder = $2 AND expires_at > ${DB_NOW_MS} FOR SHARE`;

export interface PgLeases {
  /** Takes the lease or renews it for `ttlMs`: the grant, or null while another node holds it. */
  acquire(name: string, holder: string, ttlMs: number): Promise<LeaseGrant | null>;
  /** Gives the lease up (a clean stop): true when this holder had it. */
  release(name: string, holder: string): Promise<boolean>;
  /** The lease's row as stored, with the database's time. */
  read(name: string): Promise<LeaseRow | undefined>;
}

export function createPgLeases(sql: Sql): PgLeases {
  return {
    async acquire(name, holder, ttlMs) {
      const row = await sql.one<{ holder: string; expires_at: number; acquired_at: number }>(ACQUIRE, [
        name,
        holder,
        Math.round(ttlMs),
      ]);
      return row ? { holder: row.holder, expiresAt: row.expires_at, acquiredAt: row.acquired_at } : null;
    },
    async release(name, holder) {
      return (await sql.run(RELEASE, [name, holder])) > 0;
    },
    async read(name) {
      const row = await sql.one<{ holder: string; expires_at: number; acquired_at: number; now: number }>(
        READ,
        [name],
      );
      return row
        ? { holder: row.holder, expiresAt: row.expires_at, acquiredAt: row.acquired_at, now: row.now }
        : undefined;
    },
  };
}

/**
 * Whether `holder` still holds the lease `name`, called first inside a transaction (`store.tx`)
 * whose writes only its holder may make (an alert round's commit): when true, no other node can
 * take the lease over before that transaction ends; when false, the transaction must write nothing.
 */
export async function holdsLease(sql: Sql, name: string, holder: string): Promise<boolean> {
  return (await sql.one(FENCE, [name, holder])) !== undefined;
}

/**
 * The fence of the jobs' lease for this node (`holder`: the keeper's, src/ops/jobs.ts), for the
 * repositories whose writes only the jobs' holder may make: an alert round's commit and a report's
 * (docs/cluster.md "Jobs run once").
 */
export const jobsFence =
  (holder: string) =>
  (sql: Sql): Promise<boolean> =>
    holdsLease(sql, JOBS_LEASE, holder);
