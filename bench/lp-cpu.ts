// Server CPU per line-protocol request, without wrk: the service in a child process, a fixed number
// of requests of the line-protocol workloads (bench/ingest-intake.ts) sent with a few connections,
// then CPU (all threads, /proc) from the first request until the service is idle again, divided by
// the requests. On a loaded machine this is steadier than rates.
// Run: node --import tsx bench/lp-cpu.ts   (LP_REQUESTS=200, LP_PART=narrow,live,wide, LP_ROUNDS=1)
//      LP_JSON=1 sends the batch endpoint's workloads instead (1,000 points x 3 leaves), for reference
//      BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=prof' node --import tsx bench/lp-cpu.ts
import { cpuSeconds, seeded, spawnService, waitIdle } from './helpers';
import { LP_WORKLOADS } from './ingest-intake';
import { WORKLOADS } from './workloads';
import { createProjectWithToken } from '../test/helpers/server';

const REQUESTS = Number(process.env.LP_REQUESTS ?? 200);
const ROUNDS = Number(process.env.LP_ROUNDS ?? 1);
/** LP_JSON=1: the same numbers of requests of the batch endpoint's workloads (bench/workloads.ts), for reference */
const JSON_BATCH = process.env.LP_JSON === '1';
const PARTS = new Set((process.env.LP_PART ?? 'narrow,live,wide').split(','));

async function send(
  url: string,
  agent: { sourceToken: string; sourceId: string },
  bodies: string[],
  count: number,
): Promise<number[]> {
  let next = 0;
  const latencies: number[] = [];
  const worker = async () => {
    while (next < count) {
      const body = bodies[next++ % bodies.length]!;
      const started = performance.now();
      const res = await fetch(
        JSON_BATCH ? `${url}/api/v1/metrics/batch` : `${url}/api/v2/write?precision=ns`,
        {
          method: 'POST',
          headers: JSON_BATCH
            ? {
                authorization: `Bearer ${agent.sourceToken}`,
                'x-service-source-id': agent.sourceId,
                'content-type': 'application/json',
              }
            : { authorization: `Token ${agent.sourceToken}` },
          body,
        },
      );
      await res.arrayBuffer();
      if (res.status !== (JSON_BATCH ? 201 : 204)) throw new Error(`status ${res.status}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return latencies.sort((a, b) => a - b);
}

for (let round = 0; round < ROUNDS; round++) {
  for (const w of JSON_BATCH ? WORKLOADS : LP_WORKLOADS) {
    if (!PARTS.has(w.name)) continue;
    const bodies = w.bodies(seeded(42));
    const server = await spawnService();
    const agent = await createProjectWithToken(server);
    await send(server.url, agent, bodies, 40);
    await waitIdle(server.pid);
    const cpu = cpuSeconds(server.pid);
    const latencies = await send(server.url, agent, bodies, REQUESTS);
    const behind = await waitIdle(server.pid);
    const used = cpuSeconds(server.pid) - cpu;
    await server.stop();
    server.remove();
    console.log(
      `${w.name.padEnd(6)} ${((used / REQUESTS) * 1000).toFixed(2)} ms CPU per request (${REQUESTS} requests, ` +
        `folded ${behind.toFixed(1)} s after), p50 ${latencies[Math.floor(REQUESTS / 2)]!.toFixed(1)} ms`,
    );
  }
}
