// Read latency through HTTP, the service in a child process.
// Run: node --import tsx bench/reads.ts
//
// One key with 10 leaves in every hourly bucket of a year (8,760 buckets, written through the batch
// endpoint), then sequential requests on one connection: GET /api/v1/metrics for the whole year at
// 1h, and POST /api/v1/metrics/query (aggregate sum of one leaf, 12 slices) over the same range,
// each for BENCH_SECONDS (default 5) from wrk with one connection (its own process), after 2 s of
// the same requests as a warm-up, once the metric writer has folded the loaded points (reads right
// after a write add the unfolded points themselves, docs/storage.md "Reads").
// Prints p50/p99 of each and its ratio to the 10 ms p50 target. Then the same two reads of a twin
// key (the same points) with 5 transponders on it (docs/transponders.md), against the same reads of
// the plain key: on a shared machine the load changes from second to second, so the two are read
// in alternating rounds of BENCH_ROUND_SECONDS (default 1) and each round's p50 ratio is kept;
// printed: the median ratio over BENCH_ROUNDS (default 7) rounds (target within 1.5x).
// The service runs with SERVICE_ANSWER_CACHE_BYTES=0: no cache of whole series answers, so every
// read is read and written again (with a cache on, a repeated read would measure the cache, and
// the transponders' cost would not show).
import { cpuSeconds, fmt, projectHeaders, serviceLabel, spawnService, waitIdle } from './helpers';
import { runWrk, type WrkResult } from './wrk';

console.log(serviceLabel());

const YEAR = Date.UTC(2025, 0, 1);
const HOURS = 8760;
const KEY = 'bench.reads';
const KEY_T = 'bench.reads.transponders';
const RANGE = { key: KEY, from: '2025-01-01T00:00:00Z', to: '2025-12-31T23:00:00Z', granularity: '1h' };

async function load(url: string, headers: Record<string, string>, key = KEY): Promise<void> {
  for (let start = 0; start < HOURS; start += 1000) {
    const points = [];
    for (let h = start; h < Math.min(start + 1000, HOURS); h++) {
      const values = Object.fromEntries(Array.from({ length: 10 }, (_, l) => [`leaf${l}`, h + l]));
      points.push({
        key,
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

const service = await spawnService({ SERVICE_ANSWER_CACHE_BYTES: '0' });
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

  await load(service.url, headers, KEY_T);
  for (let i = 0; i < 5; i++) {
    const body = {
      name: `t${i}`,
      key: KEY_T,
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
  await waitIdle(service.pid);
  const getUrlT = `${service.url}/api/v1/metrics?${new URLSearchParams({ ...RANGE, key: KEY_T })}`;
  const derived = (await (await fetch(getUrlT, { headers })).json()) as {
    data: { values: Array<{ derived?: object }> };
  };
  console.log(
    `with 5 transponders: ${derived.data.values.filter((v) => v.derived && Object.keys(v.derived).length === 5).length} buckets with 5 derived values`,
  );
  const queryT = JSON.stringify({ ...JSON.parse(query), key: KEY_T });
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
  const ROUND = Number(process.env.BENCH_ROUND_SECONDS ?? 1);
  /** p50 and the service's CPU time per request (less shaken by other processes than wall time) */
  const one = async (url: string, method: string, body: string, seconds: number) => {
    const cpu = cpuSeconds(service.pid);
    const r = await runWrk({ url, method, headers, bodies: [body], connections: 1, threads: 1, seconds });
    return { p50: r.p50, cpu: ((cpuSeconds(service.pid) - cpu) * 1000) / Math.max(r.requests, 1) };
  };
  const queryUrl = `${service.url}/api/v1/metrics/query`;
  await one(getUrlT, 'GET', '', 2);
  await one(queryUrl, 'POST', queryT, 2);
  type Figures = { p50: number; cpu: number };
  const rounds: Array<{ get: Figures; getT: Figures; agg: Figures; aggT: Figures }> = [];
  for (let r = 0; r < ROUNDS; r++) {
    const plainGet = await one(getUrl, 'GET', '', ROUND);
    const derivedGet = await one(getUrlT, 'GET', '', ROUND);
    const plainAgg = await one(queryUrl, 'POST', query, ROUND);
    const derivedAgg = await one(queryUrl, 'POST', queryT, ROUND);
    rounds.push({ get: plainGet, getT: derivedGet, agg: plainAgg, aggT: derivedAgg });
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const show = (name: string, plain: Figures[], withT: Figures[]) => {
    const ratios = plain.map((p, i) => withT[i]!.p50 / p.p50);
    const cpuRatios = plain.map((p, i) => withT[i]!.cpu / p.cpu);
    console.log(
      `${name}: p50 ${fmt(median(plain.map((p) => p.p50)), 2)} ms without, ` +
        `${fmt(median(withT.map((p) => p.p50)), 2)} ms with; p50 ratio median x${median(ratios).toFixed(2)} ` +
        `(${ratios.map((x) => x.toFixed(2)).join(' ')}); service CPU per request ` +
        `${fmt(median(plain.map((p) => p.cpu)), 2)} ms without, ${fmt(median(withT.map((p) => p.cpu)), 2)} ms with, ` +
        `ratio median x${median(cpuRatios).toFixed(2)} over ${ratios.length} rounds (target <= x1.5)`,
    );
  };
  show(
    'GET /api/v1/metrics, 5 transponders',
    rounds.map((r) => r.get),
    rounds.map((r) => r.getT),
  );
  show(
    'POST /api/v1/metrics/query aggregate, 5 transponders',
    rounds.map((r) => r.agg),
    rounds.map((r) => r.aggT),
  );
} finally {
  await service.stop();
  service.remove();
}
