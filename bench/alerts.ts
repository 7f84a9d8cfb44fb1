// Alert evaluation under the live ingest workload (issue 23, point 7): 1,000 monitors over 5,000 keys
// evaluated every minute while wrk (its own process) sends the live batches (1,000 of 5,000 keys per
// request, timestamps within the current minutes, 8 connections) to the service (a child process).
// Run: node --import tsx bench/alerts.ts      (BENCH_SLICES=2 pairs of BENCH_SLICE_SECONDS=65 by default)
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
//   once with no load, then during the load (where it includes whatever else the process did meanwhile);
// - ingest p99 with the monitors paused (no evaluation) and active, in alternating slices of one
//   round interval each, so a drift in the machine's speed weighs on both alike.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken, request } from '../test/helpers/server';
import { fmt, sampleKeys, seeded, serviceLabel } from './helpers';
import { runWrk, type WrkResult } from './wrk';

const MONITORS = 1000;
const KEYS = 5000;
const SLICES = Number(process.env.BENCH_SLICES ?? 2);
const SLICE_SECONDS = Number(process.env.BENCH_SLICE_SECONDS ?? 65);
const ROOT = path.resolve(process.env.BENCH_ROOT ?? path.join(import.meta.dirname, '..'));
const RATE_SHARE = Number(process.env.BENCH_RATE_SHARE ?? 0.5);
const CONNECTIONS = 8;

/** BENCH_SLICES=0: the round with no load only */
class Done extends Error {}

interface Round {
  monitors: number;
  instances: number;
  cpu_ms: number;
  wall_ms: number;
  at: number;
}

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
  const idleFrom = rounds.length;
  while (rounds.length === idleFrom) await new Promise((r) => setTimeout(r, 500));
  const idle = rounds[rounds.length - 1]!;
  console.log(
    `round with no load: ${idle.monitors} monitors, ${idle.instances} instances, ` +
      `CPU ${fmt(idle.cpu_ms)} ms (target <= 2,000 ms), wall ${fmt(idle.wall_ms)} ms`,
  );

  const paused: WrkResult[] = [];
  const active: WrkResult[] = [];
  const afterIdle = rounds.length;
  if (SLICES === 0) throw new Done();
  for (let slice = 0; slice < SLICES; slice++) {
    await setStatus('paused');
    paused.push(await load(SLICE_SECONDS));
    await setStatus('active');
    active.push(await load(SLICE_SECONDS));
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
      `round under load: ${r.instances} instances, CPU ${fmt(r.cpu_ms)} ms, wall ${fmt(r.wall_ms)} ms`,
    );
  const line = (name: string, list: WrkResult[]) =>
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
} catch (err) {
  if (!(err instanceof Done)) throw err;
} finally {
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  rmSync(dataDir, { recursive: true, force: true });
}
