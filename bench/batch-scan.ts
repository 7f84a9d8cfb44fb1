// Batch body parsing in one process: the generic path (JSON.parse, the point checks, the wire
// encoding: what the batch worker did for every body) against the byte scanner (domain/metrics/ingest/batch-scan.ts),
// on the bodies of the workloads. Run: node --import tsx bench/batch-scan.ts
// Prints per workload MB/s and µs per body for each, and how many times faster the scan is (median
// of BENCH_ROUNDS=15 rounds over all the workload's bodies, the two paths taking turns).
import assert from 'node:assert/strict';
import { scanBatch } from '../src/domain/metrics/ingest/batch-scan';
import { parseBatch } from '../src/domain/metrics/ingest/points';
import { type WirePoints, decodePoints, encodePoints } from '../src/model/point-wire';
import { parseJsonText } from '../src/lib/json';
import { fmt, seeded } from './helpers';
import { WORKLOADS } from './workloads';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const WARMUP = 5;

const generic = (bytes: Uint8Array): WirePoints => encodePoints(parseBatch(parseJsonText(bytes)));
const scan = (bytes: Uint8Array): WirePoints => {
  const wire = scanBatch(bytes);
  if (!wire) throw new Error('the scan declined a benchmark body');
  return wire;
};

/** Milliseconds for one pass over all bodies. */
function pass(parse: (bytes: Uint8Array) => WirePoints, bodies: Uint8Array[]): number {
  const t = performance.now();
  let sink = 0;
  for (const bytes of bodies) sink += parse(bytes).meta.length;
  if (sink === 0) throw new Error('no points');
  return performance.now() - t;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

console.log(`node ${process.version}; median of ${ROUNDS} rounds`);
console.log('workload  bodies  KB/body   generic MB/s  µs/body   scan MB/s  µs/body   x faster');
for (const workload of WORKLOADS) {
  const bodies = workload.bodies(seeded(42)).map((text) => new Uint8Array(Buffer.from(text)));
  for (const bytes of bodies) assert.deepStrictEqual(decodePoints(scan(bytes)), decodePoints(generic(bytes)));
  const bytes = bodies.reduce((sum, b) => sum + b.length, 0);
  const times = { generic: [] as number[], scan: [] as number[] };
  for (let r = 0; r < WARMUP + ROUNDS; r++) {
    const g = pass(generic, bodies);
    const s = pass(scan, bodies);
    if (r < WARMUP) continue;
    times.generic.push(g);
    times.scan.push(s);
  }
  const g = median(times.generic);
  const s = median(times.scan);
  const mbps = (ms: number) => fmt(bytes / 1e6 / (ms / 1000), 1).padStart(12);
  const perBody = (ms: number) => fmt((ms * 1000) / bodies.length).padStart(8);
  console.log(
    `${workload.name.padEnd(8)}  ${String(bodies.length).padStart(6)}  ${fmt(bytes / bodies.length / 1024, 1).padStart(7)}` +
      `  ${mbps(g)}  ${perBody(g)}  ${mbps(s)}  ${perBody(s)}  ${fmt(g / s, 2).padStart(9)}`,
  );
}
