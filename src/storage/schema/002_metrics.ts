// Embedded metric store for project sources (owned by the metrics engine; layout and the
// measurements behind it in docs/storage.md).
//
// metric_series names each series (source, metric key, granularity text) with a small integer, so
// bucket rows stay short. metric_buckets holds one row per bucket: `bucket` is the bucket start in
// epoch seconds and `data` the bucket's nested values as JSON text, exactly as GET serves them.
// The primary key puts time right after the series, so a range read is one index walk.
export const METRICS_SCHEMA = `
CREATE TABLE metric_series (
  id INTEGER PRIMARY KEY,
  source_id TEXT NOT NULL,
  key TEXT NOT NULL,
  granularity TEXT NOT NULL,
  UNIQUE (source_id, key, granularity)
);

CREATE TABLE metric_buckets (
  series_id INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  data TEXT NOT NULL,
  PRIMARY KEY (series_id, bucket)
) WITHOUT ROWID;
`;
