// The intake parts of bench/ingest.ts (BENCH_PART=lp-narrow,lp-live,lp-wide,graphite,remote-write;
// `lp` for the three line-protocol ones):
//
// - Line protocol: the same bodies (1,000 lines of 3 fields per request, ns timestamps) to the
//   service's /api/v2/write, VictoriaMetrics' /write and InfluxDB 1.x's /write?db=, one server at a
//   time, each on a fresh data directory after 2 s of warm-up, wrk with 2 threads and 8
//   connections. Workloads as the batch ones: narrow (one series, each body its own hour), live
//   (1,000 of 5,000 series, each body its own minute), wide (1,000 of 5,000 series over 24 hours).
//   Rates are field values per second, acknowledged (2xx) and sustained (acknowledged / (run + time
//   until the server is idle again: the service folds, VictoriaMetrics and InfluxDB flush and
//   compact behind their answers too)); ratios are the service's over each other server's.
// - Graphite: 8 TCP connections to a Graphite listener of the service, each sending 3,000 lines
//   (1,000 of 5,000 paths x 3 values, each batch its own minute) as fast as the listener takes them
//   (it pauses a connection while it writes); rate = lines sent / (run + time until the service's
//   own count of samples read reaches the lines sent).
// - Remote write: 1,000 series of one sample per request (1,000 of 5,000 series, each body its own
//   minute), snappy-framed as one literal block, to the service's and VictoriaMetrics'
//   /api/v1/write, with wrk as above.
import net from 'node:net';
import { ProtoWriter } from '../src/intake/protobuf';
import { snappyLiteralBlock } from '../src/intake/snappy';
import { createProjectWithToken } from '../test/helpers/server';
import {
  cpuSeconds,
  fmt,
  sampleKeys,
  seeded,
  spawnServer,
  spawnService,
  waitIdle,
  type ChildServer,
} from './helpers';
import {
  extracted,
  packageVersion,
  spawnInfluxdb,
  spawnVictoriaMetrics,
  victoriaIgnored,
} from './intake-servers';
import { runWrk } from './wrk';

const HOUR = 3_600_000;
const BASE = Date.UTC(2026, 0, 5);
const POOL = 5000;
const BODIES = 64;
const FIELDS = 3;

const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

/** 1,000 lines, one per series name in `series`, timestamps spread over [startMs, startMs + spanMs). */
function lineBody(series: readonly number[], startMs: number, spanMs: number, random: () => number): string {
  return series
    .map(
      (n, i) =>
        `bench,key=k${n} count=1,net=${(i % 50) + 0.5},tax=${i % 7} ${ns(startMs + Math.floor(random() * spanMs))}`,
    )
    .join('\n');
}

const pick = (random: () => number) =>
  sampleKeys(POOL, 1000, random).map((k) => Number(k.slice('bench.key.'.length)));

interface LpWorkload {
  name: string;
  bodies: (random: () => number) => string[];
}

export const LP_WORKLOADS: LpWorkload[] = [
  {
    name: 'narrow',
    bodies: (random) =>
      Array.from({ length: 24 }, (_, h) => lineBody(Array(1000).fill(0), BASE + h * HOUR, HOUR, random)),
  },
  {
    name: 'live',
    bodies: (random) =>
      Array.from({ length: BODIES }, (_, m) => lineBody(pick(random), BASE + m * 60_000, 60_000, random)),
  },
  {
    name: 'wide',
    bodies: (random) => Array.from({ length: BODIES }, () => lineBody(pick(random), BASE, 24 * HOUR, random)),
  },
];

interface Run {
  acked: number;
  sustained: number;
  p50: number;
  p99: number;
  failures: number;
  failureText: string;
  cpuMsPerRequest: number;
}

/** Warm-up, idle, a measured wrk run, idle again: rates in field values (or samples) per second. */
async function wrkRun(
  server: ChildServer,
  path: string,
  headers: Record<string, string>,
  bodies: Array<string | Uint8Array>,
  valuesPerBody: number,
  seconds: number,
): Promise<Run> {
  await runWrk({ url: `${server.url}${path}`, headers, bodies, connections: 8, seconds: 2 });
  await waitIdle(server.pid);
  const cpu = cpuSeconds(server.pid);
  const r = await runWrk({ url: `${server.url}${path}`, headers, bodies, connections: 8, seconds });
  const behind = await waitIdle(server.pid);
  const requests = r.perSecond * r.seconds;
  return {
    acked: r.perSecond * valuesPerBody,
    sustained: (requests * valuesPerBody) / (r.seconds + behind),
    p50: r.p50,
    p99: r.p99,
    failures: r.failures,
    failureText: r.failureText,
    cpuMsPerRequest: ((cpuSeconds(server.pid) - cpu) / Math.max(1, requests)) * 1000,
  };
}

function runLine(name: string, r: Run, unit: string): string {
  return (
    `  ${name.padEnd(16)} ${fmt(r.sustained).padStart(10)} ${unit}/s sustained, ${fmt(r.acked).padStart(10)}/s acknowledged, ` +
    `p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, CPU ${fmt(r.cpuMsPerRequest, 2)} ms per request, ` +
    `failures ${r.failures}${r.failures ? ` (${r.failureText})` : ''}`
  );
}

function ratioLine(ours: Run, other: Run, otherName: string): string {
  return `  service / ${otherName}: ${(ours.sustained / other.sustained).toFixed(2)} sustained, ${(ours.acked / other.acked).toFixed(2)} acknowledged`;
}

async function serviceWithToken(): Promise<{ server: ChildServer; token: string }> {
  const server = await spawnService();
  const agent = await createProjectWithToken(server);
  return { server, token: agent.sourceToken };
}

async function stopped(server: ChildServer): Promise<void> {
  await server.stop();
  server.remove();
}

async function lineProtocol(w: LpWorkload, seconds: number): Promise<void> {
  const bodies = w.bodies(seeded(42));
  const values = 1000 * FIELDS;
  console.log(`line protocol, ${w.name} (1,000 lines x ${FIELDS} fields per request):`);

  const { server, token } = await serviceWithToken();
  const ours = await wrkRun(
    server,
    '/api/v2/write?precision=ns',
    { authorization: `Token ${token}` },
    bodies,
    values,
    seconds,
  );
  await stopped(server);
  console.log(runLine('service', ours, 'values'));

  const vm = await spawnVictoriaMetrics();
  const theirs = await wrkRun(vm, '/write?precision=ns', {}, bodies, values, seconds);
  const ignored = await victoriaIgnored(vm);
  await stopped(vm);
  console.log(runLine('VictoriaMetrics', theirs, 'values') + (ignored ? `, ${ignored} rows ignored` : ''));

  const influx = await spawnInfluxdb();
  const influxRun = await wrkRun(influx, '/write?db=bench&precision=n', {}, bodies, values, seconds);
  await stopped(influx);
  console.log(runLine('InfluxDB', influxRun, 'values'));

  console.log(ratioLine(ours, theirs, 'VictoriaMetrics') + `; p99 ${fmt(ours.p99, 1)} ms (target <= 100 ms)`);
  console.log(ratioLine(ours, influxRun, 'InfluxDB'));
}

/** A WriteRequest of one sample for each of 1,000 series, in one snappy literal block. */
function remoteWriteBody(series: readonly number[], startMs: number, random: () => number): Buffer {
  const w = new ProtoWriter();
  series.forEach((n, i) => {
    const ts = new ProtoWriter()
      .message(1, new ProtoWriter().string(1, '__name__').string(2, 'bench_value'))
      .message(1, new ProtoWriter().string(1, 'job').string(2, 'bench'))
      .message(1, new ProtoWriter().string(1, 'key').string(2, `k${n}`))
      .message(
        2,
        new ProtoWriter().double(1, (i % 50) + 0.5).varint(2, startMs + Math.floor(random() * 60_000)),
      );
    w.message(1, ts);
  });
  return snappyLiteralBlock(w.finish());
}

/** The remote write workload's requests (also for profiling it apart). */
export function remoteWriteBodies(random: () => number): Buffer[] {
  return Array.from({ length: BODIES }, (_, m) => remoteWriteBody(pick(random), BASE + m * 60_000, random));
}

async function remoteWrite(seconds: number): Promise<void> {
  const bodies = remoteWriteBodies(seeded(42));
  const headers = { 'content-encoding': 'snappy', 'content-type': 'application/x-protobuf' };
  console.log('remote write, live (1,000 series of one sample per request):');
  const { server, token } = await serviceWithToken();
  const ours = await wrkRun(
    server,
    '/api/v1/write',
    { ...headers, authorization: `Bearer ${token}` },
    bodies,
    1000,
    seconds,
  );
  await stopped(server);
  console.log(runLine('service', ours, 'samples'));
  const vm = await spawnVictoriaMetrics();
  const theirs = await wrkRun(vm, '/api/v1/write', headers, bodies, 1000, seconds);
  await stopped(vm);
  console.log(runLine('VictoriaMetrics', theirs, 'samples'));
  console.log(ratioLine(ours, theirs, 'VictoriaMetrics'));
}

/** Lines of 1,000 of the 5,000 paths x 3 values at one minute. */
function graphiteBatch(random: () => number, minuteMs: number): string {
  const seconds = Math.floor(minuteMs / 1000);
  return pick(random)
    .map((n, i) => {
      const at = seconds + Math.floor(random() * 60);
      return `bench.k${n}.count 1 ${at}\nbench.k${n}.net ${(i % 50) + 0.5} ${at}\nbench.k${n}.tax ${i % 7} ${at}\n`;
    })
    .join('');
}

async function graphite(seconds: number): Promise<void> {
  console.log('graphite over TCP, live (8 connections, 3,000 lines per batch):');
  const first = await spawnService();
  const agent = await createProjectWithToken(first);
  await first.stop();
  const probe = net.createServer();
  const port = await new Promise<number>((resolve) =>
    probe.listen(0, '127.0.0.1', () => resolve((probe.address() as net.AddressInfo).port)),
  );
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const listeners = [
    { protocol: 'graphite', transport: 'tcp', listen: `127.0.0.1:${port}`, source: agent.sourceId },
  ];
  const server = await spawnServer('src/main.ts', ['serve', '--port', '0', '--data', first.dataDir], {
    env: { SERVICE_INTAKE_LISTENERS: JSON.stringify(listeners) },
    flags: ['--max-semi-space-size=8'],
  });
  const random = seeded(42);
  const batches = Array.from({ length: BODIES }, (_, m) => graphiteBatch(random, BASE + m * 60_000));
  const samplesRead = async () => {
    const text = await (await fetch(`${server.url}/metrics`)).text();
    return Number(/^service_intake_samples_total\{format="graphite"\} (\d+)/m.exec(text)?.[1] ?? 0);
  };

  const send = async (ms: number): Promise<number> => {
    const until = performance.now() + ms;
    const one = (c: number) =>
      new Promise<number>((resolve, reject) => {
        let lines = 0;
        let k = c * 7;
        const conn = net.connect(port, '127.0.0.1');
        conn.on('error', reject);
        const pump = () => {
          while (performance.now() < until) {
            const batch = batches[k++ % batches.length]!;
            lines += 3000;
            if (!conn.write(batch)) return void conn.once('drain', pump);
          }
          conn.end(() => resolve(lines));
        };
        conn.on('connect', pump);
      });
    const counts = await Promise.all(Array.from({ length: 8 }, (_, c) => one(c)));
    return counts.reduce((a, b) => a + b, 0);
  };

  await send(2000);
  await waitIdle(server.pid);
  const before = await samplesRead();
  const cpu = cpuSeconds(server.pid);
  const start = performance.now();
  const sent = await send(seconds * 1000);
  const run = (performance.now() - start) / 1000;
  // done when the service has read every line sent (a CPU-idle test misleads on a busy machine)
  let read = 0;
  while ((read = (await samplesRead()) - before) < sent && performance.now() - start < 600_000)
    await new Promise((r) => setTimeout(r, 100));
  const behind = (performance.now() - start) / 1000 - run;
  await waitIdle(server.pid); // and its points committed
  const cpuUs = ((cpuSeconds(server.pid) - cpu) / Math.max(1, read)) * 1e6;
  await stopped(server);
  console.log(
    `  service          ${fmt(read / (run + behind)).padStart(10)} lines/s sustained (${fmt(sent)} lines sent in ${fmt(run, 1)} s, ` +
      `all ${fmt(read)} read by the service ${fmt(behind, 1)} s after), CPU ${fmt(cpuUs, 2)} µs per line`,
  );
}

export function intakeLabels(): string {
  extracted('victoria-metrics', 'usr/bin/victoria-metrics');
  extracted('influxdb', 'usr/bin/influxd');
  return `VictoriaMetrics ${packageVersion('victoria-metrics')} and InfluxDB ${packageVersion('influxdb')} (Debian packages)`;
}

/** Runs the intake parts named in `parts`. */
export async function runIntakeBenchmarks(parts: ReadonlySet<string>, seconds: number): Promise<void> {
  const lp = LP_WORKLOADS.filter((w) => parts.has(`lp-${w.name}`) || parts.has('lp'));
  if (lp.length > 0 || parts.has('remote-write')) console.log(intakeLabels());
  for (const w of lp) await lineProtocol(w, seconds);
  if (parts.has('graphite')) await graphite(seconds);
  if (parts.has('remote-write')) await remoteWrite(seconds);
}
