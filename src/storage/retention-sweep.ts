// The retention sweep's SQL on the embedded store's tables (metric_series, metric_buckets from
// migration 002, and metric_key_counts, the system key's per-key counts, from migration 005). It runs on its own connection: the embedded store notices other connections'
// commits through `PRAGMA data_version` and drops its cached bucket trees, so a deleted bucket is
// never written back from the cache. Each call to deleteBatch is one short IMMEDIATE transaction.
import type { Db } from './db';

export interface RuleSourceRow {
  id: string;
  time_zone: string;
  expire_after: number | null;
  retention: string | null;
}

export interface SeriesRow {
  id: number;
  key: string;
  granularity: string;
}

export interface ExpiredRange {
  seriesId: number;
  /** bucket starts (epoch seconds) below this go */
  beforeSec: number;
}

export interface BatchResult {
  deleted: number;
  /** ranges emptied in this batch (the rest still hold expired rows) */
  finished: number;
}

export const SERIES_PAGE = 500;

export function createRetentionSql(db: Db) {
  const q = {
    ruleSources: db.prepare<[], RuleSourceRow>(
      `SELECT id, time_zone, expire_after, retention FROM sources
       WHERE type = 'project' AND (expire_after IS NOT NULL OR retention IS NOT NULL)`,
    ),
    // Pages through a source's series along the (source_id, key, granularity) unique index.
    seriesPage: db.prepare<[string, string, string, number], SeriesRow>(
      `SELECT id, key, granularity FROM metric_series
       WHERE source_id = ? AND (key, granularity) > (?, ?) ORDER BY key, granularity LIMIT ?`,
    ),
    // The oldest `limit` expired rows of one series, found along the primary key.
    deleteOldest: db.prepare<[{ series: number; before: number; limit: number }]>(
      `DELETE FROM metric_buckets WHERE series_id = @series AND bucket IN
        (SELECT bucket FROM metric_buckets WHERE series_id = @series AND bucket < @before ORDER BY bucket LIMIT @limit)`,
    ),
    // The same for the per-key counts of a system-key series (none for other series).
    deleteOldestCounts: db.prepare<[{ series: number; before: number; limit: number }]>(
      `DELETE FROM metric_key_counts WHERE series_id = @series AND (bucket, key) IN
        (SELECT bucket, key FROM metric_key_counts WHERE series_id = @series AND bucket < @before ORDER BY bucket, key LIMIT @limit)`,
    ),
    // A removed source's leftovers, once its buckets are gone (removeSource in the sweeper).
    deleteSeries: db.prepare<[string]>(
      `DELETE FROM metric_series WHERE source_id = ? AND NOT EXISTS
        (SELECT 1 FROM metric_buckets b WHERE b.series_id = metric_series.id)
        AND NOT EXISTS (SELECT 1 FROM metric_key_counts c WHERE c.series_id = metric_series.id)`,
    ),
    deleteLargeLeaves: db.prepare<[string]>('DELETE FROM metric_large_leaves WHERE source_id = ?'),
  };

  /**
   * Deletes expired rows of `ranges` (from the front) in one transaction, `chunk` rows per
   * statement, until `budgetMs` has passed or the ranges are done.
   */
  const deleteBatch = db.transaction(
    (ranges: readonly ExpiredRange[], chunk: number, budgetMs: number): BatchResult => {
      const started = performance.now();
      let deleted = 0;
      let finished = 0;
      while (finished < ranges.length) {
        const range = ranges[finished]!;
        const bounds = { series: range.seriesId, before: range.beforeSec, limit: chunk };
        const buckets = q.deleteOldest.run(bounds).changes;
        const counts = q.deleteOldestCounts.run(bounds).changes;
        deleted += buckets + counts;
        if (buckets < chunk && counts < chunk) finished++;
        if (performance.now() - started >= budgetMs) break;
      }
      return { deleted, finished };
    },
  );

  return {
    ruleSources: () => q.ruleSources.all(),
    seriesPage: (sourceId: string, after: { key: string; granularity: string }) =>
      q.seriesPage.all(sourceId, after.key, after.granularity, SERIES_PAGE),
    deleteBatch: (ranges: readonly ExpiredRange[], chunk: number, budgetMs: number) =>
      deleteBatch.immediate(ranges, chunk, budgetMs),
    /** After every bucket of a removed source is gone: its series names and large-leaf marks. */
    forgetSource: db.transaction((sourceId: string): void => {
      q.deleteSeries.run(sourceId);
      q.deleteLargeLeaves.run(sourceId);
    }),
  };
}

export type RetentionSql = ReturnType<typeof createRetentionSql>;
