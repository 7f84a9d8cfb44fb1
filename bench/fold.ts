// The write path's CPU cost without HTTP, to choose the fold window: the workloads merged
// and applied to the embedded store (temp database, WAL, the service's pragmas) with N requests of
// 1,000 points per fold, N = 1 being the earlier design (every group commit rewrites its buckets).
// Run: node --import tsx bench/fold.ts        (BENCH_REQUESTS=100 requests per setting)
// Prints, per workload and window, the time per point for merging and for folding (median of
// BENCH_REPEATS=1 runs on fresh databases); relative figures are what counts on a shared machine.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBatch } from '../src/domain/metrics/ingest';
import { finishMerging, mergeIntoPending, planFor } from '../src/domain/metrics/merge';
import { createEmbeddedStore } from '../src/drivers/embedded';
import { emptyWriteSet } from '../src/drivers/types';
import { openDatabase } from '../src/storage/db';
import { migrate } from '../src/storage/migrations';
import { fmt, seeded } from './helpers';
import { WORKLOADS } from './workloads';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 100);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 1);
const WINDOWS = (process.env.BENCH_WINDOWS ?? '1,10,100').split(',').map(Number);
const PARTS = new Set((process.env.BENCH_PART ?? 'narrow,live,wide').split(','));
// BENCH_CACHE_TEXT=8000000 sizes the parsed-bucket cache (JSON text bytes) for a comparison
const CACHE = process.env.BENCH_CACHE_TEXT ? { entries: 500_000, textLength: Number(process.env.BENCH_CACHE_TEXT) } : undefined;
const plan = planFor({ id: 'bench', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'] });

interface Cost {
  merge: number;
  fold: number;
  longestFold: number;
}

async function run(requests: ReturnType<typeof parseBatch>[], perFold: number): Promise<Cost> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-fold-'));
  const db = openDatabase(path.join(dir, 'service.db'));
  migrate(db);
  const store = createEmbeddedStore(db, CACHE);
  const cost: Cost = { merge: 0, fold: 0, longestFold: 0 };
  try {
    for (let r = 0; r < REQUESTS; r += perFold) {
      const writes = emptyWriteSet();
      let t = performance.now();
      for (let i = r; i < Math.min(r + perFold, REQUESTS); i++) mergeIntoPending(writes, plan, requests[i % requests.length]!);
      finishMerging(writes);
      cost.merge += performance.now() - t;
      t = performance.now();
      await store.apply(writes);
      const took = performance.now() - t;
      cost.fold += took;
      cost.longestFold = Math.max(cost.longestFold, took);
    }
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return cost;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const w of WORKLOADS.filter((x) => PARTS.has(x.name))) {
  const requests = w.bodies(seeded(42)).map((body) => parseBatch(JSON.parse(body)));
  for (const perFold of WINDOWS) {
    const runs: Cost[] = [];
    for (let k = 0; k < REPEATS; k++) runs.push(await run(requests, perFold));
    const points = REQUESTS * 1000;
    const merge = median(runs.map((c) => c.merge));
    const fold = median(runs.map((c) => c.fold));
    console.log(
      `${w.name}, ${perFold} request(s) per fold: merge ${fmt((merge / points) * 1000, 2)} µs/point, fold ${fmt((fold / points) * 1000, 2)} µs/point, ` +
        `total ${fmt(((merge + fold) / points) * 1000, 2)} µs/point = ${fmt((points * 3) / ((merge + fold) / 1000))} leaf values/s on one core; ` +
        `longest fold ${fmt(median(runs.map((c) => c.longestFold)), 1)} ms`,
    );
  }
}
