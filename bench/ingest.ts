// Ingest throughput through HTTP, the service in a child process.
// Run: node --import tsx bench/ingest.ts        (BENCH_SECONDS=10 per run by default)
//
// 1. Single points of 3 nested leaves, 32 connections: the service (auth, validation, group commit,
//    fsync-free WAL commit before each 201) against a bare Koa handler that parses the same body and
//    answers 201. Both get the same requests (headers included) from the same client settings, in
//    alternating slices (BENCH_SLICES, default 4, per side) so that a drift in the speed of the
//    machine during the run weighs on both alike, after one second of warm-up each (not counted);
//    the ratio compares their totals. Client and server share this machine's cores, so each side's
//    CPU time per request (all its threads, from /proc) is printed too: the ratio of those is the
//    one that does not depend on how fast the client can send.
// 2. Batches of 1,000 points x 3 leaves spread over one hour, default 7 granularities, 8
//    connections: leaf values per second (points x leaves), against the 1,000,000/s target.
import autocannon, { type Result } from 'autocannon';
import { batchBody, cpuSeconds, fmt, projectHeaders, seeded, serviceLabel, spawnServer, spawnService } from './helpers';

console.log(serviceLabel());

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SLICES = Number(process.env.BENCH_SLICES ?? 4);
const SINGLE = JSON.stringify({ key: 'bench.single', at: '2026-01-24T10:00:00Z', values: { count: 1, amount: { net: 2.5, tax: 0.5 } } });

function line(name: string, r: Result): string {
  const perSecond = r['2xx'] / r.duration;
  return `${name}: ${fmt(perSecond)} req/s (2xx), latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
}

/** Totals of several runs against one server: requests per second overall, latency per slice. */
interface Slices {
  ok: number;
  cpu: number;
  seconds: number;
  non2xx: number;
  errors: number;
  p50: number[];
  p99: number[];
}

function addSlice(into: Slices, r: Result, cpu: number): void {
  into.cpu += cpu;
  into.ok += r['2xx'];
  into.seconds += r.duration;
  into.non2xx += r.non2xx;
  into.errors += r.errors;
  into.p50.push(r.latency.p50);
  into.p99.push(r.latency.p99);
}

function sliceLine(name: string, s: Slices): string {
  const median = [...s.p50].sort((a, b) => a - b)[Math.floor(s.p50.length / 2)];
  return `${name}: ${fmt(s.ok / s.seconds)} req/s (2xx), latency p50 ${median} ms (median slice), ` +
    `p99 ${Math.max(...s.p99)} ms (worst slice), non-2xx ${s.non2xx}, errors ${s.errors}, ` +
    `server CPU ${fmt((s.cpu / (s.ok + s.non2xx)) * 1e6, 1)} µs per request (${fmt(s.cpu / s.seconds, 2)} cores)`;
}

async function singlePoints(): Promise<void> {
  const service = await spawnService();
  const bare = await spawnServer('bench/bare-koa.ts');
  const headers = await projectHeaders(service);
  const load = (url: string, seconds = SECONDS / SLICES) =>
    autocannon({ url: `${url}/api/v1/metrics`, method: 'POST', headers, body: SINGLE, connections: 32, duration: seconds });
  await load(service.url, 1);
  await load(bare.url, 1);
  const ours: Slices = { ok: 0, cpu: 0, seconds: 0, non2xx: 0, errors: 0, p50: [], p99: [] };
  const base: Slices = { ok: 0, cpu: 0, seconds: 0, non2xx: 0, errors: 0, p50: [], p99: [] };
  const measure = async (into: Slices, server: { url: string; pid: number }) => {
    const cpu = cpuSeconds(server.pid);
    const r = await load(server.url);
    addSlice(into, r, cpuSeconds(server.pid) - cpu);
  };
  for (let slice = 0; slice < SLICES; slice++) {
    await measure(ours, service);
    await measure(base, bare);
  }
  await Promise.all([service.stop(), bare.stop()]);
  service.remove();
  bare.remove();
  console.log(sliceLine('single point, service ', ours));
  console.log(sliceLine('single point, bare Koa', base));
  console.log(`ratio service / bare Koa: ${((ours.ok / ours.seconds) / (base.ok / base.seconds)).toFixed(2)} in requests per second, ` +
    `${((base.cpu / base.ok) / (ours.cpu / ours.ok)).toFixed(2)} in server CPU per request (bare / service)`);
}

async function batches(): Promise<void> {
  const service = await spawnService();
  const headers = await projectHeaders(service);
  const random = seeded(42);
  const start = Date.UTC(2026, 0, 5);
  const requests = Array.from({ length: 24 }, (_, h) => ({ body: batchBody(start + h * 3_600_000, random) }));
  const cpu = cpuSeconds(service.pid);
  const r = await autocannon({ url: `${service.url}/api/v1/metrics/batch`, method: 'POST', headers, requests, connections: 8, duration: SECONDS });
  const used = cpuSeconds(service.pid) - cpu;
  await service.stop();
  service.remove();
  const leafValues = (r['2xx'] * 3000) / r.duration;
  console.log(line('batch of 1,000 points x 3 leaves', r));
  console.log(
    `batch ingest: ${fmt(r['2xx'] * 1000 / r.duration)} points/s, ${fmt(leafValues)} leaf values/s ` +
      `(${fmt(leafValues * 7)} bucket leaf updates/s over 7 granularities); target 1,000,000 leaf values/s: x${(leafValues / 1e6).toFixed(2)}`,
  );
  console.log(`batch ingest: server CPU ${fmt((used / r['2xx']) * 1e3, 2)} ms per batch, ${fmt(used / r.duration, 2)} cores busy`);
}

const PART = process.env.BENCH_PART ?? 'all'; // single | batch | all
if (PART !== 'batch') await singlePoints();
if (PART !== 'single') await batches();
