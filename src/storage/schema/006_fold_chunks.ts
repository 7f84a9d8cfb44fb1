// Embedded store, third step (docs/storage.md "The write path"): the metric writer folds a window
// in several short transactions instead of one, so the service's other writes never wait long
// for the database's write lock. Every row a fold writes records the fold's number (`fold`); a
// fold interrupted by a crash is replayed from the write log after the restart and skips the rows
// that already carry its number, so each point still lands exactly once.
// - metric_fold_state.folding_up_to: the last log record of the fold in progress (NULL between
//   folds); fold_number: the number of the latest fold started; stamp: raised by every commit of
//   a fold, so a read can tell whether the pending points it was lent are still pending.
export const FOLD_CHUNKS_SCHEMA = `
ALTER TABLE metric_buckets ADD COLUMN fold INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metric_key_counts ADD COLUMN fold INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metric_fold_state ADD COLUMN folding_up_to INTEGER;
ALTER TABLE metric_fold_state ADD COLUMN fold_number INTEGER NOT NULL DEFAULT 0;
ALTER TABLE metric_fold_state ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0;
INSERT OR IGNORE INTO metric_fold_state (id, folded_up_to) VALUES (1, 0);
`;
