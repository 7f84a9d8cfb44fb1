// Read latency through HTTP, the service in a child process.
// Run: node --import tsx bench/reads.ts
//
// One key with 10 leaves in every hourly bucket of a year (8,760 buckets, written through the batch
// endpoint), then sequential requests on one connection: GET /api/v1/metrics for the whole year at
// 1h, and POST /api/v1/metrics/query (aggregate sum of one leaf, 12 slices) over the same range,
// each for BENCH_SECONDS (default 5) from wrk with one connection (its own process), after 2 s of
// the same requests as a warm-up, once the metric writer has folded the loaded points (reads right
// after a write add the unfolded points themselves, docs/storage.md "Reads").
// Prints p50/p99 of each and its ratio to the 10 ms p50 target. Then the same two reads again with
// 5 transponders on the key (docs/transponders.md), each p50 against the read without them (target
// within 1.5x).
import { fmt, projectHeaders, serviceLabel, spawnService, waitIdle } from './helpers';
import { runWrk, type WrkResult } from './wrk';

console.log(serviceLabel());

const YEAR = Date.UTC(2025, 0, 1);
const HOURS = 8760;
const KEY = 'bench.reads';
const RANGE = { key: KEY, from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:00:00Z', granularity: '1h' };

async function load(url: string, headers: Record<string, string>): Promise<void> {
  for (let start = 0; start < HOURS; start += 1000) {
    const points = [];
    for (let h = start; h < Math.min(start + 1000, HOURS); h++) {
      const values = Object.fromEntries(Array.from({ length: 10 }, (_, l) => [`leaf${l}`, h + l]));
      points.push({
        key: KEY,
        at: new Date(YEAR + h * 3_600_000 + 1_800_000).toISOString(),
        values: { metrics: values },
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

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);

function report(name: string, r: WrkResult, target: number): void {
  console.log(
    `${name}: p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms, ${fmt(r.requests)} requests, failures ${r.failures} ` +
      `(target p50 <= ${target} ms: x${(r.p50 / target).toFixed(2)})`,
  );
}

const service = await spawnService();
try {
  const headers = await projectHeaders(service);
  await load(service.url, headers);
  await waitIdle(service.pid);
  const getUrl = `${service.url}/api/v1/metrics?${new URLSearchParams(RANGE)}`;
  const check = (await (await fetch(getUrl, { headers })).json()) as {
    data: { at: string[]; values: Array<{ metrics?: object }> };
  };
  const filled = check.data.values.filter((v) => v.metrics && Object.keys(v.metrics).length === 10).length;
  console.log(`GET body: ${check.data.at.length} buckets, ${filled} with 10 leaves`);
  await runWrk({ url: getUrl, method: 'GET', headers, bodies: [''], connections: 1, threads: 1, seconds: 2 });
  const get = await runWrk({
    url: getUrl,
    method: 'GET',
    headers,
    bodies: [''],
    connections: 1,
    threads: 1,
    seconds: SECONDS,
  });
  report('GET /api/v1/metrics, 8,760 x 10 leaves', get, 10);
  const query = JSON.stringify({
    ...RANGE,
    mode: 'aggregate',
    aggregator: 'sum',
    value_path: 'metrics.leaf3',
    slices: 12,
  });
  const queryLoad = {
    url: `${service.url}/api/v1/metrics/query`,
    headers,
    bodies: [query],
    connections: 1,
    threads: 1,
  };
  await runWrk({ ...queryLoad, seconds: 2 });
  const agg = await runWrk({ ...queryLoad, seconds: SECONDS });
  report('POST /api/v1/metrics/query aggregate, same range', agg, 10);

  for (let i = 0; i < 5; i++) {
    const body = {
      name: `t${i}`,
      key: KEY,
      paths: ['metrics.leaf0', `metrics.leaf${i + 1}`],
      expression: 'a / b * 100',
      response: `derived.t${i}`,
    };
    const res = await fetch(`${service.url}/api/v1/transponders`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`transponder failed: ${res.status} ${await res.text()}`);
  }
  const derived = (await (await fetch(getUrl, { headers })).json()) as {
    data: { values: Array<{ derived?: object }> };
  };
  console.log(
    `with 5 transponders: ${derived.data.values.filter((v) => v.derived && Object.keys(v.derived).length === 5).length} buckets with 5 derived values`,
  );
  await runWrk({ url: getUrl, method: 'GET', headers, bodies: [''], connections: 1, threads: 1, seconds: 2 });
  const getT = await runWrk({
    url: getUrl,
    method: 'GET',
    headers,
    bodies: [''],
    connections: 1,
    threads: 1,
    seconds: SECONDS,
  });
  report('GET /api/v1/metrics, 5 transponders', getT, get.p50 * 1.5);
  await runWrk({ ...queryLoad, seconds: 2 });
  const aggT = await runWrk({ ...queryLoad, seconds: SECONDS });
  report('POST /api/v1/metrics/query aggregate, 5 transponders', aggT, agg.p50 * 1.5);
} finally {
  await service.stop();
  service.remove();
}
