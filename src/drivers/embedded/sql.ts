// The embedded store's statements (tables of migrations 002, 005 and 006) and its multi-row upserts.
import type { Statement } from 'better-sqlite3';
import type { Db } from '../../storage/db';

/** metric_fold_state: where the folds of the write log stand (migration 006). */
export interface FoldState {
  /** the last log record whose points are in the buckets */
  foldedUpTo: number;
  /** the last log record of a fold that began and has not finished, else null */
  foldingUpTo: number | null;
  /** the number of the latest fold begun; rows it wrote carry it in their `fold` column */
  foldNumber: number;
  /** raised by every commit of a fold */
  stamp: number;
}

export function statements(db: Db) {
  return {
    findSeries: db
      .prepare<[string, string, string], number>(
        'SELECT id FROM metric_series WHERE source_id = ? AND key = ? AND granularity = ?',
      )
      .pluck(),
    addSeries: db.prepare('INSERT INTO metric_series (source_id, key, granularity) VALUES (?, ?, ?)'),
    getBucket: db
      .prepare<[number, number], [string, number]>(
        'SELECT data, fold FROM metric_buckets WHERE series_id = ? AND bucket = ?',
      )
      .raw(true),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    // One string per row, the bucket's digits then its JSON (which starts with `{`): a year of
    // hourly rows reads in about half the time of [bucket, data] rows (an array per row).
    readRange: db
      .prepare<[number, number, number], string>(
        'SELECT bucket || data FROM metric_buckets WHERE series_id = ? AND bucket BETWEEN ? AND ? ORDER BY bucket',
      )
      .pluck(),
    readKeyCounts: db
      .prepare<[number, number, number], [number, string, number]>(
        'SELECT bucket, key, count FROM metric_key_counts WHERE series_id = ? AND bucket BETWEEN ? AND ? ORDER BY bucket, key',
      )
      .raw(true),
    foldState: db.prepare<[], FoldState>(
      'SELECT folded_up_to AS foldedUpTo, folding_up_to AS foldingUpTo, fold_number AS foldNumber, stamp FROM metric_fold_state WHERE id = 1',
    ),
    stamp: db.prepare<[], number>('SELECT stamp FROM metric_fold_state WHERE id = 1').pluck(),
    startFold: db.prepare<[number, number, number]>(
      'UPDATE metric_fold_state SET folding_up_to = ?, fold_number = ?, stamp = ? WHERE id = 1',
    ),
    setStamp: db.prepare<[number]>('UPDATE metric_fold_state SET stamp = ? WHERE id = 1'),
    finishFold: db.prepare<[number, number]>(
      'UPDATE metric_fold_state SET folded_up_to = ?, folding_up_to = NULL, stamp = ? WHERE id = 1',
    ),
  };
}

/** Rows per multi-row upsert: one statement per 32 rows costs about half of 32 single ones. */
const UPSERT_ROWS = 32;

/**
 * Rows of one transaction written UPSERT_ROWS at a time through `INSERT ... VALUES (...), (...)
 * <onConflict>`. The caller never adds one row twice between flushes (a write set holds each
 * bucket and key once), so no row of a statement conflicts with another of the same statement.
 */
export class MultiRowUpsert {
  /** statements by row count, prepared on first use (at most UPSERT_ROWS of them) */
  private readonly bySize = new Map<number, Statement<unknown[]>>();
  private readonly params: unknown[] = [];

  constructor(
    private readonly db: Db,
    private readonly insert: string,
    private readonly columns: number,
    private readonly onConflict: string,
  ) {}

  /** Drops rows left by a transaction that failed before its last flush. */
  begin(): void {
    this.params.length = 0;
  }

  add(...row: unknown[]): void {
    for (const value of row) this.params.push(value);
    if (this.params.length === UPSERT_ROWS * this.columns) this.flush();
  }

  flush(): void {
    const rows = this.params.length / this.columns;
    if (rows === 0) return;
    let statement = this.bySize.get(rows);
    if (!statement) this.bySize.set(rows, (statement = this.db.prepare<unknown[]>(this.sql(rows))));
    statement.run(this.params);
    this.params.length = 0;
  }

  private sql(rows: number): string {
    const row = `(${new Array<string>(this.columns).fill('?').join(', ')})`;
    return `${this.insert} VALUES ${new Array<string>(rows).fill(row).join(', ')} ${this.onConflict}`;
  }
}

/** Rows (series_id, bucket, data, fold): a fold writes each bucket it changed whole. */
export function bucketUpserts(db: Db): MultiRowUpsert {
  return new MultiRowUpsert(
    db,
    'INSERT INTO metric_buckets (series_id, bucket, data, fold)',
    4,
    'ON CONFLICT (series_id, bucket) DO UPDATE SET data = excluded.data, fold = excluded.fold',
  );
}

/**
 * Blind additions to the system key's per-key counts (series_id, bucket, key, count, fold): no
 * read of the stored count, and none twice by one fold (a replayed fold skips what it added).
 */
export function keyCountUpserts(db: Db): MultiRowUpsert {
  return new MultiRowUpsert(
    db,
    'INSERT INTO metric_key_counts (series_id, bucket, key, count, fold)',
    5,
    'ON CONFLICT (series_id, bucket, key) DO UPDATE SET count = count + excluded.count, fold = excluded.fold ' +
      'WHERE metric_key_counts.fold < excluded.fold',
  );
}
