// Memory and disk use under sustained ingest, the service in a child process, wrk as the load.
// Run: node --import tsx bench/memory.ts        (BENCH_SECONDS=60 per workload by default;
//      BENCH_PART=narrow,live,wide picks workloads)
//
// Each workload of bench/workloads.ts (2 wrk threads, 8 connections) runs on a fresh server for the
// whole time while the child's memory is sampled every second; the idle figure is read 2 s after
// start-up. The figure that counts is private memory, RssAnon + RssShmem of /proc/<pid>/status:
// what the process needs and no other process could share or the kernel drop (target: under 200 MB
// throughout). RSS is printed beside it; its difference is file pages (the executable's own code
// and data, libraries), which the kernel reads in again when touched and drops by itself when
// memory runs short.
// After a graceful stop the database is checkpointed and its size divided by the stored leaves
// (every granularity's and the system key's, per-key counts included).
import path from 'node:path';
import Database from 'better-sqlite3';
import { readFileSync, statSync } from 'node:fs';
import { fmt, projectHeaders, rssBytes, seeded, serviceLabel, spawnService } from './helpers';
import { runWrk } from './wrk';
import { WORKLOADS } from './workloads';

console.log(serviceLabel());

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const PARTS = new Set((process.env.BENCH_PART ?? 'narrow,live,wide').split(','));
/** The idle figure is read this long after start-up. */
const SETTLE_MS = 2000;
const MB = 1024 * 1024;
const TARGET_MB = 200;

/** Private memory of a process: its anonymous and shared-memory resident pages (Linux). */
function privateBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? Number.NaN);
  return (kb('RssAnon') + kb('RssShmem')) * 1024;
}

const p50 = (sorted: number[]) => sorted[Math.floor(sorted.length / 2)]!;

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
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  const idle = { private: privateBytes(service.pid), rss: rssBytes(service.pid) };
  const samples: Array<{ private: number; rss: number }> = [];
  const timer = setInterval(
    () => samples.push({ private: privateBytes(service.pid), rss: rssBytes(service.pid) }),
    1000,
  );
  const r = await runWrk({
    url: `${service.url}/api/v1/metrics/batch`,
    headers,
    bodies: w.bodies(seeded(7)),
    connections: 8,
    seconds: SECONDS,
  });
  clearInterval(timer);
  await service.stop();
  const disk = diskPerLeaf(service.dataDir);
  service.remove();
  const priv = samples.map((x) => x.private).sort((a, b) => a - b);
  const rss = samples.map((x) => x.rss).sort((a, b) => a - b);
  const maxPrivate = priv[priv.length - 1]!;
  console.log(
    `${w.name}: ${fmt(r.perSecond * r.seconds)} batches in ${fmt(r.seconds)} s (${fmt(r.perSecond * 3000)} leaf values/s), failures ${r.failures}; ` +
      `private idle ${fmt(idle.private / MB, 1)} MB, p50 ${fmt(p50(priv) / MB, 1)} MB, max ${fmt(maxPrivate / MB, 1)} MB ` +
      `(target < ${TARGET_MB} MB: ${maxPrivate < TARGET_MB * MB ? 'met' : 'missed'}); ` +
      `RSS idle ${fmt(idle.rss / MB, 1)} MB, p50 ${fmt(p50(rss) / MB, 1)} MB, max ${fmt(rss[rss.length - 1]! / MB, 1)} MB; ` +
      `disk ${fmt(disk.bytes / disk.leaves, 1)} bytes per stored leaf (${fmt(disk.leaves)} leaves)`,
  );
  const every5 = (pick: (x: { private: number; rss: number }) => number) =>
    samples
      .filter((_, i) => i % 5 === 4)
      .map((x) => fmt(pick(x) / MB))
      .join(' ');
  console.log(`${w.name}: private every 5 s (MB): ${every5((x) => x.private)}`);
  console.log(`${w.name}: RSS every 5 s (MB): ${every5((x) => x.rss)}`);
}
