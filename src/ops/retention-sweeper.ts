// The background retention sweep (SPEC section 11). Every interval it walks the projects that have
// expire_after or a retention map, finds each series' expired bucket range and deletes it in short
// transactions: each stops after `budgetMs` (a few ms) and the sweep then yields to the event loop
// for a tick, so ingest (same thread, same database file) is never held for longer than that.
import type { Logger } from '../lib/log';
import type { Db } from '../storage/db';
import {
  createRetentionSql,
  SERIES_PAGE,
  type ExpiredRange,
  type RetentionSql,
  type RuleSourceRow,
} from '../storage/retention-sweep';
import { expiryCutoffMs, type RetentionRules } from '../domain/retention';

export interface SweeperOptions {
  /** opens the sweep's own connection to the service database (closed by close()) */
  open: () => Db;
  now: () => number;
  log: Logger;
  /** between sweeps; 0 disables the timer (tests call sweep() themselves) */
  intervalMs: number;
  /** first sweep after start (default min(interval, 5 s)) */
  initialDelayMs?: number;
  /** time one transaction may take before it commits (default 4 ms) */
  budgetMs?: number;
  /** rows per DELETE statement (default 128) */
  chunkRows?: number;
  /**
   * Runs before each sweep: folds the points the embedded store holds in its write window, so the
   * sweep sees (and deletes) every acknowledged bucket rather than one a later fold writes back.
   */
  beforeSweep?: () => Promise<void>;
  /** Told after each transaction that deleted rows (kept answers of reads are forgotten). */
  onDeleted?: () => void;
  /**
   * Deletes the expired buckets a project keeps outside the service database (a project on a
   * metrics cluster, docs/cluster.md), given each granularity's cutoff; resolves with the rows.
   */
  expireElsewhere?: (sourceId: string, cutoffMs: (granularity: string) => number | null) => Promise<number>;
  /**
   * The projects with retention rules, where the sources table is not the service database's
   * (cluster mode: PostgreSQL). Default: read from the sweep's own connection.
   */
  ruleSources?: () => Promise<RuleSourceRow[]>;
}

/** Upper bounds (ms) of the transaction duration histogram. */
export const SWEEP_TX_BOUNDS_MS = [1, 2, 5, 10, 20, 50, 100, 250] as const;

export interface SweepStats {
  sweeps: number;
  deletedBuckets: number;
  transactions: number;
  /** longest single sweep transaction, commit included, since start */
  maxTransactionMs: number;
  /** CPU time of the process during the longest-CPU transaction: wall time minus preemption by
   *  other processes on a shared machine (the process's other threads are idle meanwhile) */
  maxTransactionCpuMs: number;
  /** cumulative transaction counts per bound of SWEEP_TX_BOUNDS_MS */
  transactionBuckets: number[];
  transactionSumMs: number;
  lastSweepMs: number;
  failures: number;
}

export interface RetentionSweeper {
  /** Runs one full sweep now (or joins the one running); resolves with the buckets deleted. */
  sweep(): Promise<number>;
  /**
   * Deletes every stored bucket of a source that was just removed (its row is gone, so no new
   * point arrives), in the sweep's short transactions; resolves with the rows deleted.
   */
  removeSource(sourceId: string): Promise<number>;
  start(): void;
  /**
   * Stops the timer and lets a running sweep end at its next page, resolving once it has; start()
   * sweeps again (the node took the jobs' lease back, src/ops/jobs.ts). removeSource is not stopped.
   */
  stop(): Promise<void>;
  /** Stops the timer, lets a running sweep end at its next yield, closes the connection. */
  close(): Promise<void>;
  readonly stats: Readonly<SweepStats>;
}

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

function rulesOf(row: {
  time_zone: string;
  expire_after: number | null;
  retention: string | null;
}): RetentionRules {
  return {
    timeZone: row.time_zone,
    expireAfter: row.expire_after,
    retention: row.retention ? JSON.parse(row.retention) : null,
  };
}

export function createRetentionSweeper(options: SweeperOptions): RetentionSweeper {
  const budgetMs = options.budgetMs ?? 4;
  const chunkRows = options.chunkRows ?? 128;
  const stats: SweepStats = {
    sweeps: 0,
    deletedBuckets: 0,
    transactions: 0,
    maxTransactionMs: 0,
    maxTransactionCpuMs: 0,
    transactionBuckets: SWEEP_TX_BOUNDS_MS.map(() => 0),
    transactionSumMs: 0,
    lastSweepMs: 0,
    failures: 0,
  };

  function timed(ms: number, cpuMs: number): void {
    stats.transactions++;
    stats.maxTransactionCpuMs = Math.max(stats.maxTransactionCpuMs, cpuMs);
    stats.transactionSumMs += ms;
    stats.maxTransactionMs = Math.max(stats.maxTransactionMs, ms);
    SWEEP_TX_BOUNDS_MS.forEach((bound, i) => {
      if (ms <= bound) stats.transactionBuckets[i]!++;
    });
  }
  let db: Db | null = null;
  let sql: RetentionSql | null = null;
  let running: Promise<number> | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  /** stop() was called since the last start(): the sweep in progress ends at its next page */
  let halted = false;

  function connection(): RetentionSql {
    if (!sql) {
      db = options.open();
      // Never wait long for the write lock on the event loop: a busy database fails this batch
      // and the next sweep tries again.
      db.pragma('busy_timeout = 20');
      // Its commits never run a checkpoint (copying the WAL into the database, with an fsync,
      // took up to ~90 ms here): the server's own connection checkpoints as it does for ingest.
      db.pragma('wal_autocheckpoint = 0');
      sql = createRetentionSql(db);
    }
    return sql;
  }

  /** Deletes the expired rows of `ranges`, one budgeted transaction per tick. */
  async function deleteRanges(s: RetentionSql, ranges: ExpiredRange[], retry = false): Promise<number> {
    let deleted = 0;
    let next = 0;
    let busy = 0;
    while (next < ranges.length && !closed) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      let result;
      try {
        result = s.deleteBatch(ranges.slice(next), chunkRows, budgetMs);
      } catch (err) {
        // A removal must finish: a busy database (the fold holds the lock) is tried again.
        if (!retry || (err as { code?: string }).code !== 'SQLITE_BUSY' || ++busy > 500) throw err;
        await tick();
        continue;
      }
      const used = process.cpuUsage(cpu);
      timed(performance.now() - started, (used.user + used.system) / 1000);
      stats.deletedBuckets += result.deleted;
      deleted += result.deleted;
      if (result.deleted > 0) options.onDeleted?.();
      next += result.finished;
      await tick();
    }
    return deleted;
  }

  /** A cluster being unreachable fails its projects' part of the sweep only (the next retries). */
  async function expireElsewhere(sourceId: string, rules: RetentionRules, nowMs: number): Promise<number> {
    if (!options.expireElsewhere) return 0;
    try {
      const deleted = await options.expireElsewhere(sourceId, (g) => expiryCutoffMs(rules, g, nowMs));
      stats.deletedBuckets += deleted;
      return deleted;
    } catch (err) {
      stats.failures++;
      options.log.warn('retention sweep failed', { source_id: sourceId, error: String(err) });
      return 0;
    }
  }

  async function sweepAll(): Promise<number> {
    const started = performance.now();
    await options.beforeSweep?.();
    const s = connection();
    const nowMs = options.now();
    let deleted = 0;
    const rows = options.ruleSources ? await options.ruleSources() : s.ruleSources();
    for (const row of rows) {
      const rules = rulesOf(row);
      deleted += await expireElsewhere(row.id, rules, nowMs);
      let after = { key: '', granularity: '' };
      for (;;) {
        if (closed || halted) return deleted;
        const page = s.seriesPage(row.id, after);
        const ranges: ExpiredRange[] = [];
        for (const series of page) {
          const cutoff = expiryCutoffMs(rules, series.granularity, nowMs);
          if (cutoff !== null) ranges.push({ seriesId: series.id, beforeSec: Math.ceil(cutoff / 1000) });
        }
        deleted += await deleteRanges(s, ranges);
        if (page.length < SERIES_PAGE) break;
        after = page[page.length - 1]!;
        await tick();
      }
    }
    stats.sweeps++;
    stats.lastSweepMs = performance.now() - started;
    if (deleted > 0)
      options.log.info('retention sweep', { deleted_buckets: deleted, ms: Math.round(stats.lastSweepMs) });
    return deleted;
  }

  async function removeSource(sourceId: string): Promise<number> {
    await options.beforeSweep?.(); // points acknowledged before the removal are folded first
    const s = connection();
    let deleted = 0;
    let after = { key: '', granularity: '' };
    for (;;) {
      if (closed) return deleted;
      const page = s.seriesPage(sourceId, after);
      const ranges = page.map((series) => ({ seriesId: series.id, beforeSec: Number.MAX_SAFE_INTEGER }));
      deleted += await deleteRanges(s, ranges, true);
      if (page.length < SERIES_PAGE) break;
      after = page[page.length - 1]!;
      await tick();
    }
    for (let busy = 0; ; busy++) {
      try {
        s.forgetSource(sourceId);
        break;
      } catch (err) {
        if ((err as { code?: string }).code !== 'SQLITE_BUSY' || busy > 500) throw err;
        await tick();
      }
    }
    if (deleted > 0) options.log.info('source data removed', { source_id: sourceId, deleted_rows: deleted });
    return deleted;
  }

  function sweep(): Promise<number> {
    running ??= sweepAll()
      .catch((err) => {
        stats.failures++;
        options.log.warn('retention sweep failed', { error: String(err) });
        return 0;
      })
      .finally(() => {
        running = null;
      });
    return running;
  }

  function schedule(delayMs: number): void {
    if (closed || halted || options.intervalMs <= 0) return;
    if (timer) clearTimeout(timer); // one timer, whatever the starts and stops before
    timer = setTimeout(() => {
      void sweep().then(() => schedule(options.intervalMs));
    }, delayMs);
    timer.unref();
  }

  return {
    sweep,
    removeSource,
    start() {
      halted = false;
      schedule(options.initialDelayMs ?? Math.min(options.intervalMs, 5_000));
    },
    async stop() {
      halted = true;
      if (timer) clearTimeout(timer);
      await running;
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await running;
      db?.close();
      db = null;
      sql = null;
    },
    stats,
  };
}
