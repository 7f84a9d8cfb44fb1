// Memory and disk use under a sustained ingest load, the service in a child process.
// Run: node --import tsx bench/memory.ts        (BENCH_SECONDS=60 by default)
//
// Batches of 1,000 points x 3 leaves, each batch over its own hour, 8 connections, for the whole
// run; the child's RSS is sampled every second. After a graceful stop the database is checkpointed
// and its size divided by the number of stored leaves (every granularity's and the system key's).
import { statSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import Database from 'better-sqlite3';
import { batchBody, fmt, projectHeaders, rssBytes, seeded, serviceLabel, spawnService } from './helpers';

console.log(serviceLabel());

const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const MB = 1024 * 1024;

function countLeaves(node: unknown): number {
  if (typeof node === 'number') return 1;
  if (typeof node !== 'object' || node === null) return 0;
  let n = 0;
  for (const child of Object.values(node)) n += countLeaves(child);
  return n;
}

function diskPerLeaf(dataDir: string): { bytes: number; leaves: number; buckets: number } {
  const file = path.join(dataDir, 'service.db');
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    let leaves = 0;
    let buckets = 0;
    for (const data of db.prepare('SELECT data FROM metric_buckets').pluck().iterate() as Iterable<string>) {
      leaves += countLeaves(JSON.parse(data));
      buckets++;
    }
    return { bytes: statSync(file).size, leaves, buckets };
  } finally {
    db.close();
  }
}

const service = await spawnService();
const headers = await projectHeaders(service);
const random = seeded(7);
const start = Date.UTC(2025, 0, 1);
// Enough distinct hours that the run keeps creating buckets (about 40 days).
const requests = Array.from({ length: 1000 }, (_, h) => ({ body: batchBody(start + h * 3_600_000, random) }));
const idle = rssBytes(service.pid);
const samples: number[] = [];
const timer = setInterval(() => samples.push(rssBytes(service.pid)), 1000);
const result = await autocannon({ url: `${service.url}/api/v1/metrics/batch`, method: 'POST', headers, requests, connections: 8, duration: SECONDS });
clearInterval(timer);
await service.stop();

const sorted = [...samples].sort((a, b) => a - b);
const disk = diskPerLeaf(service.dataDir);
service.remove();
console.log(`ingest: ${fmt(result['2xx'])} batches (${fmt(result['2xx'] * 1000)} points) in ${result.duration.toFixed(0)} s, non-2xx ${result.non2xx}`);
console.log(
  `RSS: idle ${fmt(idle / MB, 1)} MB; under load p50 ${fmt(sorted[Math.floor(sorted.length / 2)]! / MB, 1)} MB, ` +
    `max ${fmt(sorted[sorted.length - 1]! / MB, 1)} MB, last ${fmt(samples[samples.length - 1]! / MB, 1)} MB; ` +
    `max / idle x${(sorted[sorted.length - 1]! / idle).toFixed(2)}`,
);
console.log(`RSS every 5 s (MB): ${samples.filter((_, i) => i % 5 === 4).map((b) => fmt(b / MB)).join(' ')}`);
console.log(
  `disk: ${fmt(disk.bytes / MB, 1)} MB for ${fmt(disk.leaves)} stored leaves in ${fmt(disk.buckets)} buckets: ` +
    `${fmt(disk.bytes / disk.leaves, 1)} bytes per leaf`,
);
