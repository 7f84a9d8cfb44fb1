// Alert evaluation under the live ingest workload (issue 23, point 7): 1,000 monitors over 5,000 keys
// evaluated every minute while wrk (its own process) sends the live batches (1,000 of 5,000 keys per
// request, timestamps within the current minutes, 8 connections) to the service (a child process).
// Run: node --import tsx bench/alerts.ts      (BENCH_SLICES=2 pairs of BENCH_SLICE_SECONDS=65 by default;
// BENCH_IDLE_ROUNDS=1 round with no load first, BENCH_RAW=1 prints the rounds' log lines)
//
// The ingest load is held at a rate below the machine's maximum: BENCH_RATE_SHARE (default 0.5) of
// the batches per second measured for 5 s after the warm-up, by wrk's per-request delay (or
// BENCH_DELAY_MS given). At the maximum, evaluation's CPU comes out of ingest's share of the cores
// (2 on the reference machine) and the comparison measures CPU share, not the latency a round adds.
// BENCH_ROOT runs the service of another checkout (e.g. an export of an earlier commit with
// node_modules linked) with this bench, to compare versions alternately on the same machine.
//
// The 1,000 monitors watch key patterns with a named group, each matching 5 of the 5,000 keys
// (`bench\.key\.(?<n>7|1007|2007|3007|4007)`), so a round reads 5,000 series plus the system key's
// key counts; their rules cycle through the six strategies, on 10 minutes of 1-minute buckets.
// Figures:
// - an evaluation round's CPU time (the service process, all threads, from the round's own log line):
//   once with no load; during the load that figure includes the ingest work done meanwhile, so the
//   bench prints beside it the round's own CPU under load, estimated from the service's CPU (all
//   threads, /proc) over each slice: an active slice's CPU minus its batches at the CPU per batch of
//   the paused slice before it, divided by the rounds logged in the active slice. That counts what
//   evaluation adds to the process (its turns on the event loop, its reads on the metric writer's
//   thread, the garbage it leaves), and the noise of two slices' difference;
// - the round's turns on the event loop (log line: busy_ms, the turns' wall time; longest_turn_ms);
// - ingest p99 with the monitors paused (no evaluation) and active, in alternating slices of one
//   round interval each, so a drift in the machine's speed weighs on both alike (BENCH_SLICES pairs;
//   an active slice of 65 s holds one or two rounds, as the 60 s timer falls).
// Every figure is printed with the load average of the machine at that moment.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken, request } from '../test/helpers/server';
import { cpuSplit, fmt, sampleKeys, seeded, serviceLabel } from './helpers';
import { runWrk, type WrkResult } from './wrk';

const MONITORS = 1000;
const KEYS = 5000;
const SLICES = Number(process.env.BENCH_SLICES ?? 2);
const SLICE_SECONDS = Number(process.env.BENCH_SLICE_SECONDS ?? 65);
const ROOT = path.resolve(process.env.BENCH_ROOT ?? path.join(import.meta.dirname, '..'));
const RATE_SHARE = Number(process.env.BENCH_RATE_SHARE ?? 0.5);
/** rounds with no load to log (the first matches every pattern; later ones use the kept matches) */
const IDLE_ROUNDS = Number(process.env.BENCH_IDLE_ROUNDS ?? 1);
const CONNECTIONS = 8;

/** BENCH_SLICES=0: the round with no load only */
class Done extends Error {}

interface Round {
  monitors: number;
  instances: number;
  cpu_ms: number;
  wall_ms: number;
  /** absent in versions before the paced round */
  busy_ms?: number;
  longest_turn_ms?: number;
  at: number;
}

/** A slice of load and the service's CPU (all threads) over it. */
interface Slice extends WrkResult {
  cpuSeconds: number;
  from: number;
  to: number;
}

const loadAverage = () =>
  `load average ${os
    .loadavg()
    .map((l) => fmt(l, 2))
    .join(', ')}`;
const turns = (r: Round) =>
  r.busy_ms === undefined
    ? ''
    : `, turns ${fmt(r.busy_ms)} ms (longest ${fmt(r.longest_turn_ms ?? 0, 1)} ms)`;

console.log(`${serviceLabel()}; alerts.interval 60s; ${MONITORS} monitors over ${KEYS} keys`);

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bench-alerts-'));
const rounds: Round[] = [];
const child: ChildProcess = spawn(
  process.execPath,
  [
    '--max-semi-space-size=8',
    ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
    '--import',
    'tsx',
    'src/main.ts',
    'serve',
    '--port',
    '0',
    '--data',
    dataDir,
  ],
  {
    cwd: ROOT,
    env: { ...process.env, SERVICE_LOG_LEVEL: 'info', SERVICE_ALERTS_INTERVAL: '60s' },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
let errText = '';
child.stderr!.on('data', (chunk: Buffer) => {
  errText += chunk.toString();
  let nl: number;
  while ((nl = errText.indexOf('\n')) >= 0) {
    const line = errText.slice(0, nl);
    errText = errText.slice(nl + 1);
    if (!line.includes('"alerts round"')) continue;
    const parsed = JSON.parse(line) as Round;
    if (process.env.BENCH_RAW) console.log(line);
    rounds.push({ ...parsed, at: Date.now() });
  }
});
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) resolve(m[1]!);
  });
  child.once('exit', (code) => reject(new Error(`service exited early (${code}): ${out}`)));
});
const server = { url };
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    child.kill('SIGTERM');
    process.exit(1);
  });
}

try {
  const agent = await createProjectWithToken(server);
  const headers = {
    authorization: `Bearer ${agent.sourceToken}`,
    'x-service-source-id': agent.sourceId,
    'content-type': 'application/json',
  };
  const STRATEGIES = [
    { analysis_strategy: 'threshold', settings: { direction: 'above', value: 1e9 } },
    { analysis_strategy: 'range', settings: { min: 0, max: 1e9 } },
    { analysis_strategy: 'hampel', settings: { window: 5, k: 50, floor: 100 } },
    { analysis_strategy: 'cusum', settings: { k: 5, h: 50 } },
    { analysis_strategy: 'absence', settings: { period: '5m' } },
    { analysis_strategy: 'change', settings: { percent: 100000 } },
  ];
  const ids: string[] = [];
  for (let i = 0; i < MONITORS; i++) {
    const group = [0, 1, 2, 3, 4].map((k) => i + k * MONITORS).join('|');
    const res = await request(
      server,
      'POST',
      '/api/v1/monitors',
      {
        name: `bench ${i}`,
        status: 'paused',
        source_type: 'project',
        source_id: agent.sourceId,
        alert_metric_key: `bench\\.key\\.(?<n>${group})`,
        alert_metric_path: 'count',
        alert_timeframe: '10m',
        alert_granularity: '1m',
        alerts: [STRATEGIES[i % STRATEGIES.length]],
      },
      { token: agent.userToken },
    );
    if (res.status !== 201) throw new Error(`monitor ${i}: ${res.status} ${res.text}`);
    ids.push(res.body.data.id);
  }
  const setStatus = async (status: 'active' | 'paused') => {
    for (const id of ids) {
      const res = await request(
        server,
        'PUT',
        `/api/v1/monitors/${id}`,
        { status },
        { token: agent.userToken },
      );
      if (res.status !== 200) throw new Error(`${status}: ${res.status} ${res.text}`);
    }
  };

  // The live bodies, in the minutes around now: each body one minute of the last ten and the next few.
  const random = seeded(42);
  const now = Date.now();
  const bodies = Array.from({ length: 64 }, (_, b) => {
    const minute = Math.floor(now / 60_000) * 60_000 + ((b % 16) - 10) * 60_000;
    const points = sampleKeys(KEYS, 1000, random).map((key, i) => ({
      key,
      at: new Date(minute + Math.floor(random() * 60_000)).toISOString(),
      values: { count: 1, amount: { net: (i % 50) + 0.5, tax: i % 7 } },
    }));
    return JSON.stringify({ points });
  });
  let delayMs = 0;
  const load = (seconds: number): Promise<WrkResult> =>
    runWrk({
      url: `${url}/api/v1/metrics/batch`,
      headers,
      bodies,
      connections: CONNECTIONS,
      seconds,
      delayMs,
    });

  // Every key gets data, the maximum rate is measured, then a round with no load.
  await load(10);
  const max = await load(5);
  delayMs =
    process.env.BENCH_DELAY_MS !== undefined
      ? Number(process.env.BENCH_DELAY_MS)
      : Math.max(0, (CONNECTIONS / (max.perSecond * RATE_SHARE)) * 1000 - max.p50);
  console.log(
    `ingest maximum ${fmt(max.perSecond, 1)} batches/s (5 s, p50 ${fmt(max.p50, 1)} ms); held below it: ` +
      `each of ${CONNECTIONS} connections waits ${fmt(delayMs, 1)} ms before each batch`,
  );
  await setStatus('active');
  for (let n = 0; n < IDLE_ROUNDS; n++) {
    const idleFrom = rounds.length;
    while (rounds.length === idleFrom) await new Promise((r) => setTimeout(r, 500));
    const idle = rounds[rounds.length - 1]!;
    console.log(
      `round with no load: ${idle.monitors} monitors, ${idle.instances} instances, ` +
        `CPU ${fmt(idle.cpu_ms)} ms (target <= 2,000 ms), wall ${fmt(idle.wall_ms)} ms${turns(idle)}; ${loadAverage()}`,
    );
  }

  const ownCpu: number[] = [];
  const paused: Slice[] = [];
  const active: Slice[] = [];
  const afterIdle = rounds.length;
  if (SLICES === 0) throw new Done();
  const measured = async (): Promise<Slice> => {
    const cpu = cpuSplit(child.pid!);
    const from = Date.now();
    const result = await load(SLICE_SECONDS);
    const to = Date.now();
    const after = cpuSplit(child.pid!);
    return { ...result, cpuSeconds: after.user + after.system - cpu.user - cpu.system, from, to };
  };
  const sliceLine = (name: string, r: Slice) =>
    `${name} slice: p99 ${fmt(r.p99, 1)} ms, p50 ${fmt(r.p50, 1)} ms, ${fmt(r.perSecond, 1)} batches/s, ` +
    `service CPU ${fmt((r.cpuSeconds / r.requests) * 1000, 2)} ms per batch; ${loadAverage()}`;
  for (let slice = 0; slice < SLICES; slice++) {
    await setStatus('paused');
    paused.push(await measured());
    console.log(sliceLine('paused', paused[paused.length - 1]!));
    await setStatus('active');
    active.push(await measured());
    const last = active[active.length - 1]!;
    const before = paused[paused.length - 1]!;
    const inSlice = rounds.filter((r) => r.at >= last.from && r.at <= last.to).length;
    const extraMs = (last.cpuSeconds - last.requests * (before.cpuSeconds / before.requests)) * 1000;
    if (inSlice > 0) ownCpu.push(extraMs / inSlice);
    console.log(
      `${sliceLine('active', last)}; ${inSlice} rounds in it, ` +
        `round's own CPU (estimate) ${inSlice > 0 ? fmt(extraMs / inSlice) : '-'} ms`,
    );
  }
  // Every round with monitors to evaluate after the idle one ran while they were active (a round
  // that began in an active slice and ended after it is counted too).
  const loaded = rounds.slice(afterIdle);
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  for (const r of loaded)
    console.log(
      `round under load: ${r.instances} instances, CPU of the process meanwhile ${fmt(r.cpu_ms)} ms, ` +
        `wall ${fmt(r.wall_ms)} ms${turns(r)}`,
    );
  const line = (name: string, list: Slice[]) =>
    `${name} p99 ${fmt(median(list.map((r) => r.p99)), 1)} ms, p50 ${fmt(median(list.map((r) => r.p50)), 1)} ms, ` +
    `${fmt(median(list.map((r) => r.perSecond)), 1)} batches/s (medians of ${list.length} slices of ${SLICE_SECONDS} s; ` +
    `p99s ${list.map((r) => fmt(r.p99, 1)).join(', ')}), failures ${list.reduce((a, r) => a + r.failures, 0)}`;
  console.log(line('ingest without evaluation:', paused));
  console.log(line('ingest with evaluation:   ', active));
  const without = median(paused.map((r) => r.p99));
  const withEval = median(active.map((r) => r.p99));
  console.log(
    `p99 moved by ${fmt(((withEval - without) / without) * 100, 1)}% (medians; target <= 10%); ` +
      `${loaded.length} rounds logged during the slices`,
  );
  console.log(
    `round's own CPU under load (estimate, median of ${ownCpu.length} slices): ` +
      `${ownCpu.length > 0 ? fmt(median(ownCpu)) : '-'} ms (target <= 2,000 ms); ${loadAverage()}`,
  );
} catch (err) {
  if (!(err instanceof Done)) throw err;
} finally {
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  rmSync(dataDir, { recursive: true, force: true });
}
