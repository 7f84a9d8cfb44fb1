// A database source backed by a SQLite file in the Trifle::Stats 2.x layout (sqlite-layout.ts), so
// stores written by the Trifle::Stats libraries read back here and the other way round.
//
// The file is opened lazily and kept open. Until it exists with a trifle_stats table of the source's
// identifier mode, reads see empty buckets and writes are refused with 409 (run setup first).
import { existsSync } from 'node:fs';
import type { Statement } from 'better-sqlite3';
import { AppError, conflict } from '../errors';
import { type Db, inTransaction, openDatabase } from '../storage/db';
import { type IdentifierMode, setupSqliteStore } from './sqlite-setup';
import { PathSplitter, parseTree } from '../model/leaves';
import { libraryRowPlan } from './library-rows';
import { foldRows } from './network-store';
import { parseTimestamp } from '../lib/time';
import type { BucketOps, MetricStore, SeriesRef, SetupResult, WriteSet } from './types';
import { MODES, bindNumber, flatPath, layoutColumns, leafStatements, nestedPath } from './sqlite-layout';

export interface SqliteStoreOptions {
  file: string;
  mode: IdentifierMode;
  nativeBinding?: unknown;
  /** ms to wait for another writer of the file before giving up with 503 */
  busyTimeoutMs?: number;
  /** the source's zone: reads also find rows the libraries floored with the event's offset */
  timeZone?: string;
}

interface Open {
  db: Db;
  add: Statement;
  set: Statement;
  range: Statement;
}

/** 503 for a file another process holds locked; everything else is rethrown as is. */
export function translateSqliteError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new AppError('unavailable', 'The database source is busy, retry later', { retryAfter: 1 });
  }
  return err;
}

function tableColumns(db: Db): string[] {
  return db
    .prepare<[], string>("SELECT name FROM pragma_table_info('trifle_stats') ORDER BY cid")
    .pluck()
    .all();
}

export function createSqliteStore(options: SqliteStoreOptions): MetricStore {
  const { file, mode } = options;
  const splitter = new PathSplitter();
  const sql = leafStatements(mode);
  let handle: Open | null = null;

  /** The open file with its table checked, or null while there is no table to use yet. */
  function open(): Open | null {
    if (handle) return handle;
    if (!existsSync(file)) return null;
    const db = openDatabase(file, { nativeBinding: options.nativeBinding });
    try {
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 1000}`);
      const columns = tableColumns(db);
      if (columns.length === 0) {
        db.close();
        return null;
      }
      if (columns.join(',') !== layoutColumns(mode).join(',')) {
        throw conflict(`table trifle_stats has columns (${columns.join(', ')}), not the ${mode} identifier layout`);
      }
      handle = { db, add: db.prepare(sql.add), set: db.prepare(sql.set), range: db.prepare(MODES[mode].range).raw(true) };
      return handle;
    } catch (err) {
      if (db.open) db.close();
      throw translateSqliteError(err);
    }
  }

  function writeLeaf(statement: Statement, identity: unknown[], path: string, value: number): void {
    const params: Record<string, unknown> = {
      leaf: path,
      flat: flatPath(path),
      nested: nestedPath(splitter.split(path)),
      value: bindNumber(value),
    };
    identity.forEach((v, i) => (params[`c${i}`] = v));
    statement.run(params);
  }

  function writeBucket(h: Open, identity: unknown[], ops: BucketOps): void {
    if (ops.set) for (const [path, value] of ops.set) writeLeaf(h.set, identity, path, value);
    for (const [path, amount] of ops.add) writeLeaf(h.add, identity, path, amount);
  }

  function readRows(h: Open, ref: SeriesRef, starts: readonly number[]): Array<[unknown, string | null]> {
    return h.range.all(...MODES[mode].rangeParams(ref.key, ref.granularity, starts)) as Array<[unknown, string | null]>;
  }

  /** Bucket index of a row: by its full key in `full` mode, else by the instant in `at`. */
  function indexer(ref: SeriesRef, starts: readonly number[]): (id: unknown) => number | undefined {
    const index = new Map<unknown, number>();
    if (mode === 'full') {
      starts.forEach((ms, i) => index.set(MODES.full.identity(ref.key, ref.granularity, ms)[0], i));
      return (id) => index.get(id);
    }
    starts.forEach((ms, i) => index.set(ms, i));
    return (at) => index.get(typeof at === 'number' ? at * 1000 : parseTimestamp(at));
  }

  return {
    kind: 'sqlite',

    async setup(): Promise<SetupResult> {
      closeHandle();
      return { status: 'ready', message: setupSqliteStore(file, mode, options.nativeBinding) };
    },

    async apply(writes: WriteSet): Promise<void> {
      const h = open();
      if (!h) throw conflict('The database source is not set up: run its setup first');
      const identity = MODES[mode].identity;
      try {
        inTransaction(h.db, () => {
          for (const keys of writes.sources.values()) {
            for (const [key, granularities] of keys) {
              for (const [granularity, buckets] of granularities) {
                for (const [startMs, ops] of buckets) writeBucket(h, identity(key, granularity, startMs), ops);
              }
            }
          }
        });
      } catch (err) {
        throw translateSqliteError(err);
      }
    },

    async read(ref: SeriesRef, starts: readonly number[]): Promise<string[]> {
      const out = new Array<string>(starts.length).fill('{}');
      const h = starts.length > 0 ? open() : null;
      if (!h) return out;
      // library-rows.ts: also the instants the libraries floored with the event's offset (DST)
      const plan = libraryRowPlan(starts, ref.granularity, options.timeZone ?? 'UTC');
      let rows: Array<[unknown, string | null]>;
      try {
        rows = readRows(h, ref, plan.lookups);
      } catch (err) {
        throw translateSqliteError(err);
      }
      const indexOf = indexer(ref, plan.lookups);
      const located = rows.map(([id, data]): [number, Record<string, unknown>] => [plan.lookups[indexOf(id) ?? -1] ?? NaN, parseTree(data)]);
      return foldRows(plan, starts.length, located, splitter);
    },

    async close(): Promise<void> {
      closeHandle();
    },
  };

  function closeHandle(): void {
    handle?.db.close();
    handle = null;
  }
}
