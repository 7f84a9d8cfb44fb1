// Embedded store, second layout (docs/storage.md "The write log and the fold"):
// - metric_fold_state: the sequence number of the last write-log record folded into the buckets
//   (the log itself is a file beside this database, src/drivers/embedded/log.ts). A fold sets it in
//   the transaction that applies the records, so a record is replayed after a crash only if its
//   fold did not commit.
// - metric_key_counts: the system key's per-key counts (`keys.<metric key>`), one row per series,
//   bucket and key, so a write adds to its own key's row instead of rewriting one JSON row that
//   holds every key ever written in the bucket. The system key's metric_buckets rows keep `count`.
// - metric_large_leaves: leaves that took a value of magnitude 2^990 or more (any store). Writes to
//   them are checked against the stored value before they are accepted, so a track whose sum
//   would leave the finite range of a double is refused (SPEC 5.2); all other writes skip that check.
// Existing system-key rows move their `keys` here.
import type { Db } from '../db';
import { SYSTEM_KEY } from '../../model/write-set';

const SCHEMA = `
CREATE TABLE metric_fold_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  folded_up_to INTEGER NOT NULL
);

CREATE TABLE metric_key_counts (
  series_id INTEGER NOT NULL,
  bucket INTEGER NOT NULL,
  key TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (series_id, bucket, key)
) WITHOUT ROWID;

CREATE TABLE metric_large_leaves (
  source_id TEXT NOT NULL,
  key TEXT NOT NULL,
  path TEXT NOT NULL,
  PRIMARY KEY (source_id, key, path)
) WITHOUT ROWID;
`;

/** Dot paths of the numeric leaves under a nested map. */
function leaves(node: unknown, prefix: string, out: Array<[string, number]>): void {
  if (typeof node === 'number') out.push([prefix, node]);
  else if (typeof node === 'object' && node !== null && !Array.isArray(node)) {
    for (const [name, child] of Object.entries(node))
      leaves(child, prefix === '' ? name : `${prefix}.${name}`, out);
  }
}

export function migrateMetricLog(db: Db): void {
  db.exec(SCHEMA);
  const rows = db
    .prepare<[string], { series_id: number; bucket: number; data: string }>(
      `SELECT b.series_id, b.bucket, b.data FROM metric_buckets b JOIN metric_series s ON s.id = b.series_id
     WHERE s.key = ?`,
    )
    .all(SYSTEM_KEY);
  const addCount = db.prepare(
    'INSERT INTO metric_key_counts (series_id, bucket, key, count) VALUES (?, ?, ?, ?)',
  );
  const rewrite = db.prepare('UPDATE metric_buckets SET data = ? WHERE series_id = ? AND bucket = ?');
  for (const row of rows) {
    const tree = JSON.parse(row.data) as Record<string, unknown>;
    if (!('keys' in tree)) continue;
    const counts: Array<[string, number]> = [];
    leaves(tree.keys, '', counts);
    for (const [key, count] of counts) addCount.run(row.series_id, row.bucket, key, count);
    delete tree.keys;
    rewrite.run(JSON.stringify(tree), row.series_id, row.bucket);
  }
}
