// Write cost against the number of distinct keys a source holds, the service in a child process.
// Run: node --import tsx bench/keys.ts        (BENCH_KEYS=30000,300000 by default)
//
// Source A is loaded with distinct keys through the batch endpoint (1,000 keys per batch, 3
// leaves, timestamps within one day, so the system key's day, week, month... buckets count every
// key). Before loading and after each level, single writes (one connection, one request at a
// time) to A and to another tenant's source B are timed, alternating with GET /api/v1/health; the p50s
// are compared with those on the empty source: targets within 2x, and health p50 <= 5 ms.
// A 201 means durable in the write log; the writer folds behind it. So each level is timed once the
// service is idle (everything loaded is folded), and the server's CPU per sampled write, until it is
// idle again after the samples, shows that folding a write costs the same whatever the source holds.
import {
  cpuSeconds,
  fmt,
  pointsBody,
  projectHeaders,
  seeded,
  serviceLabel,
  spawnService,
  waitIdle,
} from './helpers';

console.log(serviceLabel());

const LEVELS = (process.env.BENCH_KEYS ?? '30000,300000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 300);
const DAY = Date.UTC(2026, 0, 7);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(url: string, init?: RequestInit): Promise<number> {
  const start = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  if (res.status >= 300) throw new Error(`${url}: ${res.status}`);
  return performance.now() - start;
}

interface Sample {
  writeA: number;
  writeB: number;
  health: number;
  /** server CPU per write, in ms, folding included */
  cpu: number;
}

async function sample(url: string, a: Record<string, string>, b: Record<string, string>): Promise<Sample> {
  await waitIdle(service.pid);
  const cpu = cpuSeconds(service.pid);
  const writeA: number[] = [];
  const writeB: number[] = [];
  const health: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const body = JSON.stringify({
      key: `single.${i % 10}`,
      at: new Date(DAY + i * 1000).toISOString(),
      values: { count: 1, amount: { net: 2.5, tax: 0.5 } },
    });
    writeA.push(await timed(`${url}/api/v1/metrics`, { method: 'POST', headers: a, body }));
    writeB.push(await timed(`${url}/api/v1/metrics`, { method: 'POST', headers: b, body }));
    health.push(await timed(`${url}/api/v1/health`));
  }
  await waitIdle(service.pid);
  return {
    writeA: median(writeA),
    writeB: median(writeB),
    health: median(health),
    cpu: ((cpuSeconds(service.pid) - cpu) / (2 * SAMPLES)) * 1000,
  };
}

async function loadKeys(
  url: string,
  headers: Record<string, string>,
  from: number,
  to: number,
): Promise<number> {
  const random = seeded(from + 1);
  const start = performance.now();
  for (let first = from; first < to; first += 1000) {
    const keys = Array.from({ length: Math.min(1000, to - first) }, (_, i) => `tenant.key.${first + i}`);
    const res = await fetch(`${url}/api/v1/metrics/batch`, {
      method: 'POST',
      headers,
      body: pointsBody(keys, DAY, 86_400_000, random),
    });
    if (res.status !== 201) throw new Error(`load: ${res.status} ${await res.text()}`);
  }
  return (performance.now() - start) / 1000;
}

const line = (name: string, s: Sample, base?: Sample) =>
  `${name}: single write p50 ${fmt(s.writeA, 2)} ms to A` +
  (base ? ` (x${(s.writeA / base.writeA).toFixed(2)} of empty, target <= 2)` : '') +
  `, ${fmt(s.writeB, 2)} ms to B` +
  (base ? ` (x${(s.writeB / base.writeB).toFixed(2)})` : '') +
  `; health p50 ${fmt(s.health, 2)} ms (target <= 5); server CPU ${fmt(s.cpu, 3)} ms per write` +
  (base ? ` (x${(s.cpu / base.cpu).toFixed(2)})` : '');

const service = await spawnService();
try {
  const a = await projectHeaders(service);
  const b = await projectHeaders(service);
  await sample(service.url, a, b); // warm-up
  const empty = await sample(service.url, a, b);
  console.log(line('empty source', empty));
  let loaded = 0;
  for (const level of LEVELS) {
    const seconds = await loadKeys(service.url, a, loaded, level);
    const folded = await waitIdle(service.pid);
    console.log(
      `loaded keys ${fmt(loaded)}..${fmt(level)}: acknowledged in ${fmt(seconds, 1)} s, folded ${fmt(folded, 1)} s later`,
    );
    loaded = level;
    console.log(line(`${fmt(level)} keys in A`, await sample(service.url, a, b), empty));
  }
} finally {
  await service.stop();
  service.remove();
}
