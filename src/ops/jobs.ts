// The background jobs run on one node at a time (SPEC 14, docs/cluster.md "Jobs run once"): the
// retention sweep, the alert rounds (their reports included) and the outbox sender. One node, on
// service.db: they always run there. Cluster mode: each node keeps a JobKeeper, which takes or
// renews the lease row `jobs` (src/storage/pg/leases.ts) every ttl / 3 and runs the jobs only while
// it holds it:
//
// - a renewal answered "another node holds it": the jobs stop at once;
// - renewals failing (the database unreachable, a statement timing out): the jobs go on until
//   `ttl - margin` after the last renewal that succeeded was *sent* (by this node's monotonic
//   clock), then stop, so they have stopped before the database counts the lease as expired and
//   lets another node take it;
// - a clean stop (close) stops the jobs, then deletes the row: another node takes over at its next
//   attempt instead of after the expiry.
//
// One lease for all the jobs rather than one per job: they share their inputs and their failure
// (one database, one event loop), the outbox sender is kicked by the rounds that queue
// notifications, and one holder is simpler to see (`GET /metrics`) and to reason about; the jobs
// are light next to a node's requests, so spreading them over nodes would buy nothing.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../lib/log';
import { createPgStore, type Sql } from '../storage/pg/client';
import { createPgLeases, JOBS_LEASE } from '../storage/pg/leases';

/** What the keeper starts while it holds the lease and stops when it loses it (restartable). */
export interface Jobs {
  start(): void;
  /** stops the timers and the work in progress (at its next step), resolving when it has ended */
  stop(): Promise<void>;
}

/** The lease of the jobs, as the keeper uses it. */
export interface JobsLease {
  /** takes or renews the lease for ttlMs: false while another node holds it; throws when unreachable */
  acquire(holder: string, ttlMs: number): Promise<boolean>;
  release(holder: string): Promise<void>;
  /** closes what the lease opened (its pool) */
  close?(): Promise<void>;
}

/** The lease `jobs` over statements of `sql` (a pool, a node's store). */
export function jobsLeaseOn(sql: Sql, close?: () => Promise<void>): JobsLease {
  const leases = createPgLeases(sql);
  return {
    acquire: async (holder, ttlMs) => (await leases.acquire(JOBS_LEASE, holder, ttlMs)) !== null,
    release: async (holder) => void (await leases.release(JOBS_LEASE, holder)),
    close,
  };
}

/**
 * The lease `jobs` on `storage.url`, over a pool of its own (one connection): a renewal never waits
 * behind requests that hold the node's other connections. Each call gives up after a renewal
 * interval, so the next attempt is not held up by it: a connection that gets no answer at all (the
 * network dropping packets, where neither `statement_timeout` nor an error ends the wait) is left
 * to itself and the next attempt opens a new pool.
 */
export function pgJobsLease(url: string, ttlMs: number): JobsLease {
  const waitMs = Math.max(50, Math.round(ttlMs / 3));
  const open = () =>
    createPgStore(url, {
      max: 1,
      connectTimeoutMs: waitMs,
      statementTimeoutMs: waitMs,
      applicationName: 'trifle-service-lease',
    });
  let store = open();
  let lease = jobsLeaseOn(store);
  async function bounded<T>(call: (l: JobsLease) => Promise<T>): Promise<T> {
    const current = store;
    try {
      return await answerWithin(call(lease), waitMs);
    } catch (err) {
      if (err instanceof NoAnswer && store === current) {
        store = open();
        lease = jobsLeaseOn(store);
        void current.close().catch(() => undefined); // ends once its hung connection does
      }
      throw err;
    }
  }
  return {
    acquire: (holder, ttl) => bounded((l) => l.acquire(holder, ttl)),
    release: (holder) => bounded((l) => l.release(holder)),
    // a pool whose connection hangs would never end: the stop does not wait for it
    close: () => answerWithin(store.close(), waitMs).catch(() => undefined),
  };
}

class NoAnswer extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

/** What `work` settles with, or NoAnswer after `ms` (the work goes on, unwatched). */
async function answerWithin<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new NoAnswer(ms)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** This process's name in the lease row: host, pid and a random part (a restart is a new holder). */
export function nodeId(): string {
  return `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
}

export interface JobKeeperOptions {
  /** null: one node on service.db, the lease is always held */
  lease: JobsLease | null;
  /** the lease's length (config cluster.lease_ms) */
  ttlMs: number;
  jobs: Jobs;
  log: Logger;
  holder?: string;
  /** between renewals (default ttl / 3) */
  renewMs?: number;
  /** the jobs stop this long before a lease not renewed would expire (default ttl / 5) */
  marginMs?: number;
}

export interface JobKeeperStats {
  /** times this node took the lease (not its renewals) */
  acquired: number;
  /** times it stopped its jobs because it lost the lease or could not renew it in time */
  lost: number;
  /** renewals that failed (the database unreachable, a statement timing out) */
  failures: number;
}

export interface JobKeeper {
  /** this node's name in the lease row */
  readonly holder: string;
  /** whether this node holds the lease and runs the jobs (or is starting them) */
  readonly held: boolean;
  readonly stats: Readonly<JobKeeperStats>;
  start(): void;
  /** stops renewing, stops the jobs, then gives the lease up (another node takes it over at once) */
  close(): Promise<void>;
}

export function createJobKeeper(options: JobKeeperOptions): JobKeeper {
  const { lease, ttlMs, jobs, log } = options;
  const holder = options.holder ?? nodeId();
  const renewMs = options.renewMs ?? Math.max(1, Math.floor(ttlMs / 3));
  const marginMs = options.marginMs ?? Math.floor(ttlMs / 5);
  const stats: JobKeeperStats = { acquired: 0, lost: 0, failures: 0 };
  let held = false;
  let closed = false;
  let started = false;
  let closing: Promise<void> | null = null;
  let renewTimer: NodeJS.Timeout | null = null;
  let stopTimer: NodeJS.Timeout | null = null;
  let attempt: Promise<void> | null = null;
  let failing = false;
  /** whether jobs.start() was called without a stop since; changed only inside `switching` */
  let running = false;
  /** the starts and stops of the jobs, one after the other (a start never overlaps a stop) */
  let switching: Promise<void> = Promise.resolve();

  /** Brings the jobs to what `held` says, after the switches asked for before. */
  function sync(): Promise<void> {
    switching = switching.then(async () => {
      while (running !== (held && !closed)) {
        if (running) {
          running = false;
          await jobs.stop().catch((err: unknown) =>
            log.warn('background jobs did not stop cleanly', {
              error: (err as Error)?.message ?? String(err),
            }),
          );
        } else {
          running = true;
          jobs.start();
        }
      }
    });
    return switching;
  }

  function lose(why: string): void {
    if (stopTimer) clearTimeout(stopTimer);
    stopTimer = null;
    if (!held) return;
    held = false;
    stats.lost++;
    log.warn('jobs lease lost: stopping the background jobs', { holder, reason: why });
    void sync();
  }

  async function renew(): Promise<void> {
    const sent = performance.now();
    let granted: boolean;
    try {
      // An attempt that gets no answer within a renewal interval counts as failed, so that the next
      // one is made (the lease's own timeouts may not end it: a connection whose packets are lost).
      granted = await answerWithin(lease!.acquire(holder, ttlMs), renewMs);
    } catch (err) {
      stats.failures++;
      if (!failing)
        log.warn('jobs lease renewal failed', {
          holder,
          held,
          error: (err as Error)?.message ?? String(err),
        });
      failing = true;
      return; // the stop timer stops the jobs if no renewal succeeds in time
    }
    failing = false;
    if (closed) return;
    if (!granted) return lose('another node holds it');
    // The database's expiry is at least `sent + ttl` (its clock read the statement after it was sent).
    const left = sent + ttlMs - marginMs - performance.now();
    if (left <= 0) return lose('renewed too late');
    if (stopTimer) clearTimeout(stopTimer);
    stopTimer = setTimeout(() => lose('not renewed in time'), left);
    stopTimer.unref();
    if (!held) {
      held = true;
      stats.acquired++;
      log.info('jobs lease taken: running the background jobs', { holder });
      void sync();
    }
  }

  function schedule(delayMs: number): void {
    renewTimer = setTimeout(() => {
      renewTimer = null;
      attempt = renew().finally(() => {
        attempt = null;
        if (!closed) schedule(renewMs);
      });
    }, delayMs);
    renewTimer.unref();
  }

  return {
    holder,
    get held() {
      return held;
    },
    stats,
    start() {
      if (started || closed) return;
      started = true;
      if (!lease) {
        // One node: the jobs start now, as they always did.
        held = true;
        running = true;
        jobs.start();
        return;
      }
      schedule(0);
    },
    close() {
      closing ??= (async () => {
        closed = true;
        if (renewTimer) clearTimeout(renewTimer);
        if (stopTimer) clearTimeout(stopTimer);
        await attempt;
        held = false;
        await sync();
        if (lease) {
          // Only after the jobs have stopped: the next holder never overlaps them.
          await answerWithin(lease.release(holder), renewMs).catch((err: unknown) =>
            log.warn('jobs lease not released (another node takes it over when it expires)', {
              holder,
              error: (err as Error)?.message ?? String(err),
            }),
          );
          await answerWithin(lease.close?.() ?? Promise.resolve(), renewMs).catch(() => undefined);
        }
      })();
      return closing;
    },
  };
}

/** The service's background jobs as one `Jobs` (server.ts). */
export function backgroundJobs(parts: {
  sweeper: { start(): void; stop(): Promise<void> };
  evaluator: { start(intervalMs: number): void; stop(): Promise<void> };
  outbox: { start(pollMs?: number): void; stop(): Promise<void> };
  /** alert rounds every this many ms; 0: no timers (tests call round() and drain() themselves) */
  alertsIntervalMs: number;
}): Jobs {
  return {
    start() {
      parts.sweeper.start();
      if (parts.alertsIntervalMs > 0) {
        parts.evaluator.start(parts.alertsIntervalMs);
        parts.outbox.start();
      } else parts.outbox.start(0);
    },
    async stop() {
      await Promise.all([parts.evaluator.stop(), parts.outbox.stop(), parts.sweeper.stop()]);
    },
  };
}
