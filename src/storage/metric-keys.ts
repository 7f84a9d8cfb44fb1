// The distinct metric keys a project source holds in the embedded store (metric_series), read in
// pages along its (source_id, key, granularity) unique index. The intake's cardinality limit
// (src/intake/key-limit.ts) counts a source's keys from here once per start.
import type { Db } from './db';
import { SYSTEM_KEY } from '../model/write-set';

export interface MetricKeysRepo {
  /** up to `limit` keys of the source after `after` (key order), the system key left out */
  page(sourceId: string, after: string, limit: number): string[];
}

export function createMetricKeysRepo(db: Db): MetricKeysRepo {
  const page = db.prepare<[string, string, string, number], { key: string }>(
    `SELECT DISTINCT key FROM metric_series WHERE source_id = ? AND key > ? AND key <> ?
     ORDER BY key LIMIT ?`,
  );
  return {
    page: (sourceId, after, limit) => page.all(sourceId, after, SYSTEM_KEY, limit).map((r) => r.key),
  };
}
