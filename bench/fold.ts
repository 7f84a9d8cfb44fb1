// The metric writer's CPU cost without HTTP or threads, to choose the fold window: the issue's
// workloads appended (write log + merge into the window) and folded into the embedded store (temp
// database, WAL, the service's pragmas), with N requests of 1,000 points per fold.
// Run: node --import tsx bench/fold.ts        (BENCH_REQUESTS=200 requests per setting)
// Prints, per workload and window, the CPU time per point for appending and for folding (process
// CPU time, which other work on a shared machine disturbs less than wall time), after a first round
// that creates the series (BENCH_WINDOWS=1,10,100 requests per fold).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseBatch } from '../src/domain/metrics/ingest/points';
import { MetricWriter } from '../src/drivers/embedded/metric-writer';
import { encodePoints } from '../src/model/point-wire';
import { openDatabase } from '../src/storage/db';
import { migrate } from '../src/storage/migrations';
import { fmt, seeded } from './helpers';
import { WORKLOADS } from './workloads';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const WINDOWS = (process.env.BENCH_WINDOWS ?? '1,10,100').split(',').map(Number);
const PARTS = new Set((process.env.BENCH_PART ?? 'narrow,live,wide').split(','));
// BENCH_CHUNK_MS=8 cuts folds into transactions of that much work, as the service does (default: one)
const CHUNK_MS = Number(process.env.BENCH_CHUNK_MS ?? 1_000_000);
// BENCH_CACHE_BYTES=8000000 sizes the writer's bucket cache (estimated bytes) for a comparison
const CACHE = process.env.BENCH_CACHE_BYTES
  ? { entries: 1_000_000, bytes: Number(process.env.BENCH_CACHE_BYTES) }
  : undefined;
const settings = {
  id: 'bench',
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'],
};

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

interface Cost {
  append: number;
  fold: number;
  longestFold: number;
}

async function run(bodies: string[], perFold: number): Promise<Cost> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-fold-'));
  const db = openDatabase(path.join(dir, 'service.db'));
  migrate(db);
  const writer = new MetricWriter({
    db,
    foldAfterMs: 3_600_000,
    foldAtBytes: Number.MAX_SAFE_INTEGER,
    maxWindowBytes: Number.MAX_SAFE_INTEGER,
    chunkMs: CHUNK_MS,
    cacheLimits: CACHE,
  });
  const wire = (i: number) => encodePoints(parseBatch(JSON.parse(bodies[i % bodies.length]!)));
  const cost: Cost = { append: 0, fold: 0, longestFold: 0 };
  try {
    for (let i = 0; i < bodies.length; i++) await writer.append([{ settings, wire: wire(i) }]); // creates the series
    await writer.settle();
    for (let r = 0; r < REQUESTS; r += perFold) {
      const wires = Array.from({ length: Math.min(perFold, REQUESTS - r) }, (_, k) => wire(r + k));
      let t = cpuMs();
      for (const w of wires) await writer.append([{ settings, wire: w }]);
      cost.append += cpuMs() - t;
      t = cpuMs();
      await writer.settle();
      const took = cpuMs() - t;
      cost.fold += took;
      cost.longestFold = Math.max(cost.longestFold, took);
    }
  } finally {
    await writer.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return cost;
}

for (const w of WORKLOADS.filter((x) => PARTS.has(x.name))) {
  const bodies = w.bodies(seeded(42));
  for (const perFold of WINDOWS) {
    const c = await run(bodies, perFold);
    const points = REQUESTS * 1000;
    console.log(
      `${w.name}, ${perFold} request(s) per fold: append ${fmt((c.append / points) * 1000, 2)} µs/point, fold ${fmt((c.fold / points) * 1000, 2)} µs/point, ` +
        `total ${fmt(((c.append + c.fold) / points) * 1000, 2)} µs/point = ${fmt((points * 3) / ((c.append + c.fold) / 1000))} leaf values/s on one core; ` +
        `longest fold ${fmt(c.longestFold, 1)} ms CPU`,
    );
  }
}
