// A start's replay of the write log for one wide key: records of one point each, in one bucket,
// every record bringing new leaf names, so that the key's row ends up with BENCH_PATHS leaves.
// The log is written with the appender, then a metric writer is opened on it (its constructor
// replays every record into one window and folds it), timed; then the stored row is checked.
// Run: node --import tsx bench/replay-wide.ts
//   BENCH_PATHS=1000,10000     leaves the key ends up with (one run each)
//   BENCH_NEW=10               new leaf names per record (records = paths / new)
//   BENCH_REPEAT=0             >0: leaf names repeat every that many records (as the full-disk
//                              test writes: 300 new names per record, repeating every 8)
// Prints per run: records, leaves, the merge into a window alone (ms), the whole replay (ms).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parsePoint } from '../src/domain/metrics/ingest/points';
import { LogAppender } from '../src/drivers/embedded/log';
import { MetricWriter, logHead } from '../src/drivers/embedded/metric-writer';
import { encodePoints, wireToParts } from '../src/model/point-wire';
import { PlanCache } from '../src/model/plan';
import { IngestWindow } from '../src/model/window/window';
import { openDatabase } from '../src/storage/db';
import { migrate } from '../src/storage/migrations';
import { fmt } from './helpers';

const PATHS = (process.env.BENCH_PATHS ?? '1000,10000').split(',').map(Number);
const NEW = Number(process.env.BENCH_NEW ?? 10);
const REPEAT = Number(process.env.BENCH_REPEAT ?? 0);
const settings = {
  id: 'bench',
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'],
};
const at = '2026-01-24T10:00:00Z';

function wires(paths: number) {
  const records = Math.ceil(paths / NEW);
  return Array.from({ length: records }, (_, i) => {
    const group = REPEAT > 0 ? i % REPEAT : i;
    const values: Record<string, number> = { n: 1 };
    for (let j = 0; j < NEW; j++) values[`pad_${String(group).padStart(5, '0')}_${j}`] = j;
    return encodePoints([parsePoint({ key: 'wide', at, values })]);
  });
}

function run(paths: number): void {
  const list = wires(paths);
  const plans = new PlanCache();
  let t = performance.now();
  const window = new IngestWindow();
  for (const wire of list) window.add(plans.get(settings), wire);
  window.spreadAll();
  for (let r = 0; r < window.rows.count; r++) window.rows.delta(r);
  const merge = performance.now() - t;

  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-replay-'));
  const db = openDatabase(path.join(dir, 'service.db'));
  try {
    migrate(db);
    const appender = new LogAppender(dir, 0);
    for (const wire of list) appender.append([{ head: logHead(settings), body: wireToParts(wire) }]);
    appender.close();
    t = performance.now();
    const writer = new MetricWriter({ db });
    const replay = performance.now() - t;
    void writer.close();
    const row = db
      .prepare(
        `SELECT b.data FROM metric_buckets b JOIN metric_series s ON s.id = b.series_id
         WHERE s.key = 'wide' AND s.granularity = '1h'`,
      )
      .pluck()
      .get() as string;
    const stored = JSON.parse(row) as Record<string, number>;
    const leaves = Object.keys(stored).length;
    if (stored.n !== list.length) throw new Error(`n is ${stored.n}, not ${list.length}`);
    console.log(
      `records ${fmt(list.length).padStart(7)}  leaves ${fmt(leaves).padStart(7)}  merge ${fmt(merge).padStart(8)} ms  replay ${fmt(replay).padStart(9)} ms`,
    );
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const paths of PATHS) run(paths);
