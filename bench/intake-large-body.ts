// How long GET /health waits while the service takes one large intake body (docs/intake.md "Large
// bodies"): a 10 MB line-protocol body on /api/v2/write and a 10 MB remote-write body on
// /api/v1/write, each sent once while this process asks /health every 5 ms; prints the probes'
// latencies during the write (p50, p99, max) and the write's own time, after the same probes on an
// idle server. The service runs in a child process with limits.max_body_bytes at 16 MiB.
// Run: node --import tsx bench/intake-large-body.ts
import { ProtoWriter } from '../src/intake/protobuf';
import { snappyLiteralBlock } from '../src/intake/snappy';
import { fmt, seeded, spawnService } from './helpers';
import { createProjectWithToken } from '../test/helpers/server';

const MB = 1024 * 1024;
const T0 = Date.UTC(2026, 0, 24, 0, 0, 0);

/** Telegraf `cpu` lines of 50 hosts x 9 CPUs every 10 s, up to `bytes`. */
function lineProtocolBody(bytes: number): string {
  const random = seeded(7);
  const lines: string[] = [];
  let size = 0;
  for (let step = 0; size < bytes; step++) {
    const ns = `${BigInt(T0 + step * 10_000) * 1_000_000n}`;
    for (let h = 0; h < 50 && size < bytes; h++) {
      for (let c = 0; c < 9 && size < bytes; c++) {
        const cpu = c === 8 ? 'cpu-total' : `cpu${c}`;
        const idle = (90 + random() * 10).toFixed(2);
        const line = `cpu,cpu=${cpu},host=host${h} usage_idle=${idle},usage_user=${(random() * 5).toFixed(2)},usage_system=${(random() * 3).toFixed(2)} ${ns}`;
        lines.push(line);
        size += line.length + 1;
      }
    }
  }
  return lines.join('\n');
}

/** A WriteRequest of node-exporter-like series (one sample each) up to `bytes`, in one snappy literal block. */
function remoteWriteBody(bytes: number): Buffer {
  const w = new ProtoWriter();
  let n = 0;
  let size = 0;
  while (size < bytes) {
    const ts = new ProtoWriter();
    const labels: Array<[string, string]> = [
      ['__name__', 'node_cpu_seconds_total'],
      ['cpu', String(n % 16)],
      ['instance', `host${Math.floor(n / 16) % 200}:9100`],
      ['job', 'node'],
      ['mode', ['idle', 'user', 'system', 'iowait'][n % 4]!],
    ];
    for (const [k, v] of labels) ts.message(1, new ProtoWriter().string(1, k).string(2, v));
    ts.message(2, new ProtoWriter().double(1, n * 1.5).varint(2, T0 + Math.floor(n / 12_800) * 15_000));
    w.message(1, ts);
    size += 110;
    n++;
  }
  return snappyLiteralBlock(w.finish());
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function probeWhile(url: string, work: Promise<unknown>): Promise<number[]> {
  let done = false;
  void work.finally(() => (done = true));
  const latencies: number[] = [];
  while (!done) {
    const start = performance.now();
    await (await fetch(`${url}/health`)).arrayBuffer();
    latencies.push(performance.now() - start);
    await new Promise((r) => setTimeout(r, 5));
  }
  return latencies.sort((a, b) => a - b);
}

function report(name: string, latencies: number[], seconds?: number): void {
  console.log(
    `${name}: /health p50 ${fmt(percentile(latencies, 0.5), 1)} ms, p99 ${fmt(percentile(latencies, 0.99), 1)} ms, ` +
      `max ${fmt(latencies[latencies.length - 1]!, 1)} ms over ${latencies.length} probes` +
      (seconds === undefined ? '' : `; the write took ${fmt(seconds * 1000)} ms`),
  );
}

const service = await spawnService({
  SERVICE_MAX_BODY_BYTES: String(16 * MB),
  SERVICE_BODY_BYTES_IN_FLIGHT: String(64 * MB),
  SERVICE_WRITE_QUEUE_MAX_POINTS: '1000000',
});
try {
  const agent = await createProjectWithToken(service);
  const idle = new Promise((r) => setTimeout(r, 1000));
  report('idle', await probeWhile(service.url, idle));

  for (const [name, path, body, headers] of [
    [
      'line protocol 10 MB',
      '/api/v2/write',
      lineProtocolBody(10 * MB),
      { authorization: `Token ${agent.sourceToken}` },
    ],
    [
      'remote write 10 MB',
      '/api/v1/write',
      remoteWriteBody(10 * MB),
      {
        authorization: `Bearer ${agent.sourceToken}`,
        'content-encoding': 'snappy',
        'content-type': 'application/x-protobuf',
      },
    ],
  ] as const) {
    for (let round = 0; round < 2; round++) {
      const start = performance.now();
      const write = fetch(`${service.url}${path}`, { method: 'POST', headers, body }).then(async (res) => {
        const text = await res.text();
        if (res.status !== 204) throw new Error(`${name}: ${res.status} ${text.slice(0, 200)}`);
        return performance.now();
      });
      const latencies = await probeWhile(service.url, write);
      const end = await write;
      report(
        `${name} (${fmt(body.length / MB, 1)} MiB, round ${round + 1})`,
        latencies,
        (end - start) / 1000,
      );
    }
  }
} finally {
  await service.stop();
  service.remove();
}
