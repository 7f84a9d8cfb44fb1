// Ingest throughput through HTTP, the service in a child process.
// Run: node --import tsx bench/ingest.ts        (BENCH_SECONDS=10 per run by default)
//
// 1. Single points of 3 nested leaves, 32 connections: the service (auth, validation, group commit,
//    fsync-free WAL commit before each 201) against a bare Koa handler that parses the same body and
//    answers 201. Both get the same requests (headers included) from the same client settings.
// 2. Batches of 1,000 points x 3 leaves spread over one hour, default 7 granularities, 8
//    connections: leaf values per second (points x leaves), against the 1,000,000/s target.
import autocannon, { type Result } from 'autocannon';
import { batchBody, fmt, projectHeaders, seeded, spawnServer, spawnService } from './helpers';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SINGLE = JSON.stringify({ key: 'bench.single', at: '2026-01-24T10:00:00Z', values: { count: 1, amount: { net: 2.5, tax: 0.5 } } });

function line(name: string, r: Result): string {
  const perSecond = r['2xx'] / r.duration;
  return `${name}: ${fmt(perSecond)} req/s (2xx), latency p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
}

async function singlePoints(): Promise<void> {
  const service = await spawnService();
  const headers = await projectHeaders(service);
  const ours = await autocannon({ url: `${service.url}/api/v1/metrics`, method: 'POST', headers, body: SINGLE, connections: 32, duration: SECONDS });
  await service.stop();
  service.remove();
  const bare = await spawnServer('bench/bare-koa.ts');
  const base = await autocannon({ url: `${bare.url}/api/v1/metrics`, method: 'POST', headers, body: SINGLE, connections: 32, duration: SECONDS });
  await bare.stop();
  bare.remove();
  console.log(line('single point, service ', ours));
  console.log(line('single point, bare Koa', base));
  console.log(`ratio service / bare Koa: ${((ours['2xx'] / ours.duration) / (base['2xx'] / base.duration)).toFixed(2)}`);
}

async function batches(): Promise<void> {
  const service = await spawnService();
  const headers = await projectHeaders(service);
  const random = seeded(42);
  const start = Date.UTC(2026, 0, 5);
  const requests = Array.from({ length: 24 }, (_, h) => ({ body: batchBody(start + h * 3_600_000, random) }));
  const r = await autocannon({ url: `${service.url}/api/v1/metrics/batch`, method: 'POST', headers, requests, connections: 8, duration: SECONDS });
  await service.stop();
  service.remove();
  const leafValues = (r['2xx'] * 3000) / r.duration;
  console.log(line('batch of 1,000 points x 3 leaves', r));
  console.log(
    `batch ingest: ${fmt(r['2xx'] * 1000 / r.duration)} points/s, ${fmt(leafValues)} leaf values/s ` +
      `(${fmt(leafValues * 7)} bucket leaf updates/s over 7 granularities); target 1,000,000 leaf values/s: x${(leafValues / 1e6).toFixed(2)}`,
  );
}

await singlePoints();
await batches();
