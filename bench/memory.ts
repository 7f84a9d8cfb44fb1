// Memory and disk use under sustained ingest, the service in a child process, wrk as the load.
// Run: node --import tsx bench/memory.ts        (BENCH_SECONDS=60 per workload by default;
//      BENCH_PART=narrow,live,wide picks workloads)
//
// Each workload of bench/workloads.ts (2 wrk threads, 8 connections) runs on a fresh server for the
// whole time while the child's RSS is sampled every second (target: under 250 MB throughout); the
// idle figure is read 2 s after start-up.
// After a graceful stop the database is checkpointed and its size divided by the stored leaves
// (every granularity's and the system key's, per-key counts included).
import { statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fmt, projectHeaders, rssBytes, seeded, serviceLabel, spawnService } from './helpers';
import { runWrk } from './wrk';
import { WORKLOADS } from './workloads';

console.log(serviceLabel());

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const PARTS = new Set((process.env.BENCH_PART ?? 'narrow,live,wide').split(','));
/** The idle figure is read this long after start-up: the executable has then handed back the pages
 *  start-up read (src/sea/memory.ts). */
const SETTLE_MS = 2000;
const MB = 1024 * 1024;

function countLeaves(node: unknown): number {
  if (typeof node === 'number') return 1;
  if (typeof node !== 'object' || node === null) return 0;
  let n = 0;
  for (const child of Object.values(node)) n += countLeaves(child);
  return n;
}

function diskPerLeaf(dataDir: string): { bytes: number; leaves: number } {
  const file = path.join(dataDir, 'service.db');
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    let leaves = db.prepare('SELECT count(*) FROM metric_key_counts').pluck().get() as number;
    for (const data of db.prepare('SELECT data FROM metric_buckets').pluck().iterate() as Iterable<string>) {
      leaves += countLeaves(JSON.parse(data));
    }
    return { bytes: statSync(file).size, leaves };
  } finally {
    db.close();
  }
}

for (const w of WORKLOADS.filter((x) => PARTS.has(x.name))) {
  const service = await spawnService();
  const headers = await projectHeaders(service);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS)); // the executable's release of start-up pages
  const idle = rssBytes(service.pid);
  const samples: number[] = [];
  const timer = setInterval(() => samples.push(rssBytes(service.pid)), 1000);
  const r = await runWrk({ url: `${service.url}/api/v1/metrics/batch`, headers, bodies: w.bodies(seeded(7)), connections: 8, seconds: SECONDS });
  clearInterval(timer);
  await service.stop();
  const disk = diskPerLeaf(service.dataDir);
  service.remove();
  const sorted = [...samples].sort((a, b) => a - b);
  const max = sorted[sorted.length - 1]!;
  console.log(
    `${w.name}: ${fmt(r.perSecond * r.seconds)} batches in ${fmt(r.seconds)} s (${fmt(r.perSecond * 3000)} leaf values/s), failures ${r.failures}; ` +
      `RSS idle ${fmt(idle / MB, 1)} MB, p50 ${fmt(sorted[Math.floor(sorted.length / 2)]! / MB, 1)} MB, max ${fmt(max / MB, 1)} MB ` +
      `(target < 250 MB: ${max < 250 * MB ? 'met' : 'missed'}); disk ${fmt(disk.bytes / disk.leaves, 1)} bytes per stored leaf (${fmt(disk.leaves)} leaves)`,
  );
  console.log(`${w.name}: RSS every 5 s (MB): ${samples.filter((_, i) => i % 5 === 4).map((b) => fmt(b / MB)).join(' ')}`);
}
