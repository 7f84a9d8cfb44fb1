// Reads of the embedded store while it folds: right after a large load, and under live ingest.
// Run: node --import tsx bench/reads-live.ts      (BENCH_SECONDS=8 of reads under ingest by default)
//
// 1. Load: one key, one point a minute for a year (525,600 points of 3 leaves: count 1, amount.net
//    2, amount.tax 1), as 526 batch requests of 1,000 points from one client, one after the other.
// 2. The first read at once after the last 201: the year at 1h, timed; a 503 is counted and the
//    read asked again until it answers 200 (time to the first 200). Its sums must be exact.
// 3. Reads right after the load, while the writer still folds it: year at 1h, year at 1d, the last
//    day at 1m, in turn on one connection, for BENCH_SECONDS.
// 4. The live workload of bench/ingest.ts (1,000 of 5,000 keys per request, wrk in its own process,
//    8 connections) at its maximum for 3 s, then at half that rate (wrk's per-request delay) while
//    the same reads run again for BENCH_SECONDS.
// Under ingest a fourth read, not a target, reads a key the live workload writes (its day at 1m):
// the service keeps answers of unchanged series (docs/storage.md "Kept answers"), and this one always
// changes. Every read checks its answer: 200, and the sums of every acknowledged point (exact). Prints p50,
// p90 and p99 per read, the 503s, and the targets: first read <= 250 ms, day at 1m p50 <= 5 ms and
// p99 <= 50 ms under ingest, year at 1h p50 <= 10 ms, no 503.
// SERVICE_ANSWER_CACHE_BYTES=0 in the environment (passed on to the service) keeps no answers: every
// read is then read from the store.
import { fmt, projectHeaders, seeded, serviceLabel, spawnService, waitIdle } from './helpers';
import { runWrk } from './wrk';
import { WORKLOADS } from './workloads';

console.log(serviceLabel());

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const YEAR = Date.UTC(2025, 0, 1);
const MINUTES = 525_600;
const KEY = 'bench.year';
const LAST_DAY = YEAR + 364 * 86_400_000;

interface Read {
  name: string;
  /** the key read (default KEY) */
  key?: string;
  query: Record<string, string>;
  /** buckets the answer must have */
  buckets: number;
  /** the sum of `count` over the answer; -1: written meanwhile, only the buckets are checked */
  count: number;
}

const READS: Read[] = [
  {
    name: 'year at 1h',
    query: { from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:00:00Z', granularity: '1h' },
    buckets: 8760,
    count: MINUTES,
  },
  {
    name: 'year at 1d',
    query: { from: '2025-01-01T00:00:00Z', to: '2025-12-31T00:00:00Z', granularity: '1d' },
    buckets: 365,
    count: MINUTES,
  },
  {
    name: 'day at 1m',
    query: {
      from: new Date(LAST_DAY).toISOString(),
      to: new Date(LAST_DAY + 86_340_000).toISOString(),
      granularity: '1m',
    },
    buckets: 1440,
    count: 1440,
  },
];

/**
 * Not a target: a key the live workload writes about 100 times a second, read over the day it writes
 * (a kept answer is almost never current for it): what a read of the store itself costs under ingest.
 */
const LIVE_KEY_READ: Read = {
  name: 'day at 1m of a key written meanwhile',
  key: 'bench.key.0',
  query: { from: '2026-01-05T00:00:00Z', to: '2026-01-05T23:59:00Z', granularity: '1m' },
  buckets: 1440,
  count: -1,
};

async function load(url: string, headers: Record<string, string>): Promise<void> {
  for (let start = 0; start < MINUTES; start += 1000) {
    const points = [];
    for (let m = start; m < Math.min(start + 1000, MINUTES); m++) {
      points.push({
        key: KEY,
        at: new Date(YEAR + m * 60_000).toISOString(),
        values: { count: 1, amount: { net: 2, tax: 1 } },
      });
    }
    const res = await fetch(`${url}/api/v1/metrics/batch`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ points }),
    });
    if (res.status !== 201) throw new Error(`load failed: ${res.status} ${await res.text()}`);
  }
}

type Values = Array<{ count?: number; amount?: { net?: number; tax?: number } }>;

/** One read: its status and time, and a thrown error if a 200 does not hold every point. */
async function readOnce(
  url: string,
  headers: Record<string, string>,
  r: Read,
): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${url}/api/v1/metrics?${new URLSearchParams({ key: r.key ?? KEY, ...r.query })}`, {
    headers,
  });
  const text = await res.text();
  const ms = performance.now() - started;
  if (res.status !== 200) return { status: res.status, ms };
  const values = (JSON.parse(text) as { data: { values: Values } }).data.values;
  let count = 0;
  let net = 0;
  for (const v of values) {
    count += v.count ?? 0;
    net += v.amount?.net ?? 0;
  }
  if (
    r.count < 0
      ? values.length !== r.buckets
      : values.length !== r.buckets || count !== r.count || net !== 2 * r.count
  ) {
    throw new Error(
      `${r.name}: ${values.length} buckets, count ${count}, net ${net}; expected ${r.buckets}, ${r.count}, ${2 * r.count}`,
    );
  }
  return { status: 200, ms };
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/** The reads in turn for `seconds`; prints their percentiles; returns p50/p99 by name and the 503s. */
async function readsFor(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  label: string,
  reads: Read[] = READS,
) {
  const times = new Map<string, number[]>(reads.map((r) => [r.name, []]));
  const failures = new Map<number, number>();
  const end = performance.now() + seconds * 1000;
  for (let i = 0; performance.now() < end; i++) {
    const r = reads[i % reads.length]!;
    const { status, ms } = await readOnce(url, headers, r);
    if (status === 200) times.get(r.name)!.push(ms);
    else failures.set(status, (failures.get(status) ?? 0) + 1);
  }
  const out = new Map<string, { p50: number; p99: number }>();
  for (const [name, list] of times) {
    list.sort((a, b) => a - b);
    out.set(name, { p50: pct(list, 50), p99: pct(list, 99) });
    console.log(
      `${label}, ${name}: ${list.length} reads, p50 ${fmt(pct(list, 50), 2)} ms, p90 ${fmt(pct(list, 90), 2)} ms, ` +
        `p99 ${fmt(pct(list, 99), 2)} ms, max ${fmt(list[list.length - 1] ?? Number.NaN, 1)} ms`,
    );
  }
  const failed = [...failures].map(([s, n]) => `${n} x ${s}`).join(', ');
  console.log(`${label}: answers other than 200: ${failed || 'none'}`);
  return { out, failed: [...failures.values()].reduce((a, b) => a + b, 0) };
}

const service = await spawnService();
let unavailable = 0;
const verdicts: string[] = [];
const check = (name: string, value: number, target: number) =>
  verdicts.push(
    `${name} ${fmt(value, 2)} ms (target <= ${target} ms: ${value <= target ? 'met' : 'missed'})`,
  );
try {
  const headers = await projectHeaders(service);
  const loadStarted = performance.now();
  await load(service.url, headers);
  const loaded = performance.now();
  console.log(`load: ${fmt(MINUTES)} points in 526 batches, ${fmt((loaded - loadStarted) / 1000, 1)} s`);

  // The first read, at once.
  let first503 = 0;
  for (;;) {
    const { status } = await readOnce(service.url, headers, READS[0]!);
    if (status === 200) break;
    if (status !== 503) throw new Error(`first read answered ${status}`);
    first503++;
  }
  const firstMs = performance.now() - loaded;
  unavailable += first503;
  console.log(
    `first read (year at 1h) after the load: 200 after ${fmt(firstMs, 1)} ms, ${first503} x 503 before it`,
  );
  check('first read', firstMs, 250);

  const afterLoad = await readsFor(service.url, headers, SECONDS, 'right after the load');
  unavailable += afterLoad.failed;
  await waitIdle(service.pid);

  // The live workload: its maximum, then half of it while reading.
  const live = WORKLOADS.find((w) => w.name === 'live')!;
  const bodies = live.bodies(seeded(42));
  const ingest = { url: `${service.url}/api/v1/metrics/batch`, headers, bodies, connections: 8 };
  const max = await runWrk({ ...ingest, seconds: 3 });
  await waitIdle(service.pid);
  const rate = max.perSecond / 2;
  const delayMs = Math.max(0, (ingest.connections / rate) * 1000 - max.p50);
  console.log(
    `live ingest: maximum ${fmt(max.perSecond, 1)} batches/s (3 s, 8 connections); reads under half of it (delay ${fmt(delayMs, 1)} ms per request and connection)`,
  );
  const running = runWrk({ ...ingest, seconds: SECONDS + 2, delayMs });
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const underIngest = await readsFor(service.url, headers, SECONDS, 'under ingest', [
    ...READS,
    LIVE_KEY_READ,
  ]);
  unavailable += underIngest.failed;
  const held = await running;
  console.log(
    `live ingest during the reads: ${fmt(held.perSecond, 1)} batches/s (${fmt(held.perSecond * 3000)} leaf values/s), ` +
      `p50 ${fmt(held.p50, 1)} ms, p99 ${fmt(held.p99, 1)} ms, failures ${held.failures}`,
  );

  const day = underIngest.out.get('day at 1m')!;
  check('day at 1m p50 under ingest', day.p50, 5);
  check('day at 1m p99 under ingest', day.p99, 50);
  check('year at 1h p50 under ingest', underIngest.out.get('year at 1h')!.p50, 10);
  check('year at 1h p50 right after the load', afterLoad.out.get('year at 1h')!.p50, 10);
  verdicts.push(`503s ${unavailable} (target 0: ${unavailable === 0 ? 'met' : 'missed'})`);
  console.log(`targets: ${verdicts.join('; ')}`);
} finally {
  await service.stop();
  service.remove();
}
