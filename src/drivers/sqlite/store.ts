// A database source backed by a SQLite file in the Trifle::Stats 2.x layout (sqlite/layout.ts), so
// stores written by the Trifle::Stats libraries read back here and the other way round.
//
// The file is untrusted input: every operation on it runs through the sqlite pool (sqlite/pool.ts,
// worker threads with a deadline) on a handle opened with the checks of sqlite/file.ts. Until the
// file exists with a trifle_stats table, reads see empty buckets and writes are refused with 409
// (run setup first); a table that is not exactly the layout of the identifier mode is 409.
import { AppError } from '../../errors';
import type { IdentifierMode } from './setup';
import { createSqlitePool, type SqlitePool } from './pool';
import type { SeriesRef, SetupResult, WriteSet, WriteSetStore } from '../types';
import { PathSplitter } from '../../model/leaves';
import { libraryRowPlan } from '../library-rows';
import { foldRows } from '../network/store';

export interface SqliteStoreOptions {
  file: string;
  mode: IdentifierMode;
  /** the registry's pool; without one the store runs its file inline (tests of the store) */
  pool?: SqlitePool;
  nativeBinding?: unknown;
  /** ms to wait for another writer of the file before giving up with 503 */
  busyTimeoutMs?: number;
  /** the source's zone: reads also find rows the libraries floored with the event's offset */
  timeZone?: string;
}

/**
 * 503 for a file another process holds locked; everything else is rethrown as is. (The write
 * queue's translation for every store; the sqlite store's own errors arrive translated already.)
 */
export function translateSqliteError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new AppError('unavailable', 'The database source is busy, retry later', { retryAfter: 1 });
  }
  return err;
}

export function createSqliteStore(options: SqliteStoreOptions): WriteSetStore {
  const ref = { file: options.file, mode: options.mode, busyTimeoutMs: options.busyTimeoutMs };
  const splitter = new PathSplitter();
  const ownPool = options.pool
    ? null
    : createSqlitePool({ workers: 0, nativeBinding: options.nativeBinding });
  const pool = options.pool ?? ownPool!;

  return {
    kind: 'sqlite',

    async setup(): Promise<SetupResult> {
      return { status: 'ready', message: (await pool.run({ op: 'setup', ...ref })) as string };
    },

    async apply(writes: WriteSet): Promise<void> {
      await pool.run({ op: 'apply', sources: writes.sources, ...ref });
    },

    async read(series: SeriesRef, starts: readonly number[]): Promise<string[]> {
      if (starts.length === 0) return [];
      // library-rows.ts: also the instants the libraries floored with the event's offset (DST)
      const plan = libraryRowPlan(starts, series.granularity, options.timeZone ?? 'UTC');
      const op = {
        op: 'read' as const,
        key: series.key,
        granularity: series.granularity,
        starts: plan.lookups,
        ...ref,
      };
      const texts = ((await pool.run(op)) as string).split('\n');
      if (plan.lookups.length === starts.length) return texts; // no other instants to look at: the starts themselves
      const located: Array<[number, Record<string, unknown>]> = [];
      plan.lookups.forEach((ms, i) => {
        const text = texts[i];
        if (text && text !== '{}') located.push([ms, JSON.parse(text) as Record<string, unknown>]);
      });
      return foldRows(plan, starts.length, located, splitter);
    },

    async close(): Promise<void> {
      await pool.run({ op: 'close', ...ref }).catch(() => undefined);
      await ownPool?.close();
    },
  };
}
