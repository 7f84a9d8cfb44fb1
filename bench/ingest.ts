// Ingest throughput through HTTP: the service in a child process, wrk (its own process) as the load.
// Run: node --import tsx bench/ingest.ts        (BENCH_SECONDS=10 per measured run by default)
//      BENCH_PART=single|narrow|live|wide|batches|lp|lp-narrow|lp-live|lp-wide|graphite|remote-write
//      picks parts (comma-separated); default all.
//
// 1. Single points of 3 nested leaves, 32 connections: the service (auth, validation, group commit,
//    durable commit before each 201) against a bare Koa handler that parses the same body and answers
//    201, in alternating slices (BENCH_SLICES, default 4, per side) after a warm-up each, so a drift in
//    the machine's speed weighs on both alike. The handler runs on the service's Node: against the
//    executable (BENCH_SERVICE) the Node it embeds, from .build/node-runtime/. Server CPU per
//    request (all threads, /proc) is printed too: client and server share this machine's cores.
// 2. Batches through POST /api/v1/metrics/batch, 2 wrk threads, 8 connections, 1,000 points x 3 leaves
//    per request, default 7 granularities, each workload on a fresh server after 2 s of warm-up:
//    narrow: one key, timestamps over one hour (each body its own hour);
//    live:   1,000 of 5,000 keys per request, timestamps within one minute (each body its own minute);
//    wide:   1,000 of 5,000 keys per request, timestamps over 24 hours.
//    The bare Koa handler on the narrow bodies is the ceiling of parsing alone.
//    BENCH_DELAY_MS=n has each connection pause n ms before each batch: a rate below the maximum.
//    A 201 means the points are durable in the write log; the writer thread folds them into bucket rows
//    behind. So each run starts once the warm-up is folded, and after it the bench waits until the
//    service is idle again: sustained = leaf values acknowledged / (run + time to fold what was behind),
//    the rate the service holds for as long as the load lasts; the targets are checked against it.
//    Server CPU per batch is printed with its user and system parts and, where the runtime names its
//    threads (the executable's Node 24), per thread. It is no constant of the code: it falls as the
//    rate rises (a commit serves the requests that arrived meanwhile; a fold writes each touched
//    row once for all the batches its window holds) and rises on a busy machine. Two versions are
//    compared on the same machine at the same time, alternately, at the same rate (BENCH_DELAY_MS).
// 3. The intake (bench/ingest-intake.ts): line protocol through /api/v2/write against
//    VictoriaMetrics' and InfluxDB's /write with the same bodies (narrow, live, wide), Graphite over
//    TCP, and remote write against VictoriaMetrics; both from Debian's packages, extracted into .cache/.
import {
  cpuSeconds,
  cpuSplit,
  cpuSplitLine,
  fmt,
  projectHeaders,
  seeded,
  serviceLabel,
  bareKoaLabel,
  spawnBareKoa,
  spawnService,
  waitIdle,
  type ChildServer,
} from './helpers';
import { runWrk, type WrkResult } from './wrk';
import { WORKLOADS, type Workload } from './workloads';
import { runIntakeBenchmarks } from './ingest-intake';

console.log(`${serviceLabel()}; ${bareKoaLabel()}`);

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SLICES = Number(process.env.BENCH_SLICES ?? 4);
const DELAY_MS = Number(process.env.BENCH_DELAY_MS ?? 0);
const PARTS = new Set(
  (process.env.BENCH_PART ?? 'single,narrow,live,wide,lp,graphite,remote-write')
    .replace('batches', 'narrow,live,wide')
    .split(','),
);
const SINGLE = JSON.stringify({
  key: 'bench.single',
  at: '2026-01-24T10:00:00Z',
  values: { count: 1, amount: { net: 2.5, tax: 0.5 } },
});

interface Totals {
  ok: number;
  seconds: number;
  cpu: number;
  failures: number;
  p50: number[];
  p99: number[];
}

const totals = (): Totals => ({ ok: 0, seconds: 0, cpu: 0, failures: 0, p50: [], p99: [] });

/** One wrk run against a server, counting its CPU time. */
async function measure(
  server: ChildServer,
  path: string,
  headers: Record<string, string>,
  bodies: string[],
  connections: number,
  seconds: number,
  into?: Totals,
  delayMs = 0,
): Promise<WrkResult> {
  const cpu = cpuSeconds(server.pid);
  const r = await runWrk({ url: `${server.url}${path}`, headers, bodies, connections, seconds, delayMs });
  if (into) {
    into.cpu += cpuSeconds(server.pid) - cpu;
    into.ok += r.perSecond * r.seconds;
    into.seconds += r.seconds;
    into.failures += r.failures;
    into.p50.push(r.p50);
    into.p99.push(r.p99);
  }
  return r;
}

function sliceLine(name: string, s: Totals): string {
  const median = [...s.p50].sort((a, b) => a - b)[Math.floor(s.p50.length / 2)];
  return (
    `${name}: ${fmt(s.ok / s.seconds)} req/s (2xx), latency p50 ${fmt(median!, 2)} ms (median slice), ` +
    `p99 ${fmt(Math.max(...s.p99), 2)} ms (worst slice), failures ${s.failures}, ` +
    `server CPU ${fmt((s.cpu / s.ok) * 1e6, 1)} µs per request (${fmt(s.cpu / s.seconds, 2)} cores)`
  );
}

async function singlePoints(): Promise<void> {
  const service = await spawnService();
  const bare = await spawnBareKoa();
  const headers = await projectHeaders(service);
  const path = '/api/v1/metrics';
  await measure(service, path, headers, [SINGLE], 32, 1);
  await measure(bare, path, headers, [SINGLE], 32, 1);
  const ours = totals();
  const base = totals();
  for (let slice = 0; slice < SLICES; slice++) {
    await measure(service, path, headers, [SINGLE], 32, SECONDS / SLICES, ours);
    await measure(bare, path, headers, [SINGLE], 32, SECONDS / SLICES, base);
  }
  await Promise.all([service.stop(), bare.stop()]);
  service.remove();
  bare.remove();
  const ratio = ours.ok / ours.seconds / (base.ok / base.seconds);
  console.log(sliceLine('single point, service ', ours));
  console.log(sliceLine('single point, bare Koa', base));
  console.log(
    `single point: ratio service / bare Koa ${ratio.toFixed(2)} (target >= 0.85: x${(ratio / 0.85).toFixed(2)}), ` +
      `p99 ${fmt(Math.max(...ours.p99), 2)} ms (target <= 20 ms), ` +
      `server CPU per request bare / service ${(base.cpu / base.ok / (ours.cpu / ours.ok)).toFixed(2)}`,
  );
}

async function batchWorkload(w: Workload): Promise<void> {
  const bodies = w.bodies(seeded(42));
  const service = await spawnService();
  const headers = await projectHeaders(service);
  await measure(service, '/api/v1/metrics/batch', headers, bodies, 8, 2, undefined, DELAY_MS);
  await waitIdle(service.pid); // the warm-up's points folded: the run starts with nothing behind
  const cpu = cpuSeconds(service.pid);
  const split = cpuSplit(service.pid);
  const r = await measure(service, '/api/v1/metrics/batch', headers, bodies, 8, SECONDS, undefined, DELAY_MS);
  // What was acknowledged is durable in the log; the rate that holds is the one the writer folds at.
  const behind = await waitIdle(service.pid);
  const batches = r.perSecond * r.seconds;
  const cpuPerBatch = (cpuSeconds(service.pid) - cpu) / batches;
  const after = cpuSplit(service.pid);
  await service.stop();
  service.remove();
  const acked = r.perSecond * 3000;
  const sustained = (batches * 3000) / (r.seconds + behind);
  const p99 = w.p99Target
    ? `, p99 target <= ${w.p99Target} ms: ${r.perSecond > 0 && r.p99 <= w.p99Target ? 'met' : 'missed'}`
    : '';
  const target = DELAY_MS
    ? `targets not checked at a held rate (BENCH_DELAY_MS=${DELAY_MS})`
    : `target ${fmt(w.target)}: x${(sustained / w.target).toFixed(2)}${p99}`;
  console.log(
    `${w.name}: ${fmt(sustained)} leaf values/s sustained (${fmt(acked)}/s acknowledged, ${fmt(r.perSecond, 1)} batches/s, ` +
      `folded ${fmt(behind, 1)} s after the ${fmt(r.seconds, 1)} s run), p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, ` +
      `failures ${r.failures}${r.failures ? ` (${r.failureText})` : ''}, server CPU ${fmt(cpuPerBatch * 1e3, 2)} ms per batch ` +
      `(${fmt((cpuPerBatch * batches) / (r.seconds + behind), 2)} cores; ${cpuSplitLine(split, after, batches)}); ${target}`,
  );
}

async function bareBatchCeiling(): Promise<void> {
  const bare = await spawnBareKoa();
  const bodies = WORKLOADS[0]!.bodies(seeded(42));
  const headers = { 'content-type': 'application/json' };
  await measure(bare, '/', headers, bodies, 8, 1);
  const r = await measure(bare, '/', headers, bodies, 8, SECONDS / 2);
  await bare.stop();
  bare.remove();
  console.log(
    `bare Koa on the narrow bodies (parse only): ${fmt(r.perSecond * 3000)} leaf values/s, p99 ${fmt(r.p99, 1)} ms`,
  );
}

if (PARTS.has('single')) await singlePoints();
for (const w of WORKLOADS) if (PARTS.has(w.name)) await batchWorkload(w);
if (PARTS.has('narrow')) await bareBatchCeiling();
await runIntakeBenchmarks(PARTS, SECONDS);
