// Line-protocol intake of two checkouts side by side: the service of each (its src/main.ts through
// tsx, run from that checkout) takes the line-protocol workloads of bench/ingest-intake.ts with wrk
// (2 threads, 8 connections) exactly as bench/ingest.ts sends them to the service, the checkouts
// alternating workload by workload, so a drift in the machine's speed weighs on both alike. No
// VictoriaMetrics or InfluxDB runs: compare their figures from bench/ingest.ts.
// Per run: values sustained and acknowledged, p50/p99, server CPU per request split into the event
// loop (the main thread) and the other threads (the metric writer, the checkpointer), and the load
// average before the run. The CPU counts the fold of the last window too: it is read once the
// process is idle after LP_SETTLE_MS (default 5,500 ms, past the writer's longest window), so a
// writer that folds less often does not leave part of its work out; the sustained rate still ends
// at the first idle moment.
// Run: LP_AB_ROOTS=/path/to/old,/path/to/new node --import tsx bench/lp-ab.ts
//      (default: this checkout alone; LP_PART=narrow,live,wide, LP_ROUNDS=2, BENCH_SECONDS=10;
//      LP_THREADS=1 adds each thread's CPU per request, by its name and its tid less the pid)
import { loadavg } from 'node:os';
import path from 'node:path';
import { readdirSync, readFileSync } from 'node:fs';
import { createProjectWithToken } from '../test/helpers/server';
import { cpuSeconds, fmt, seeded, spawnService, waitIdle } from './helpers';
import { LP_WORKLOADS } from './ingest-intake';
import { runWrk } from './wrk';

const ROOTS = (process.env.LP_AB_ROOTS ?? path.resolve(import.meta.dirname, '..'))
  .split(',')
  .map((r) => path.resolve(r));
const PARTS = new Set((process.env.LP_PART ?? 'narrow,live,wide').split(','));
const ROUNDS = Number(process.env.LP_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const VALUES = 3000;
/** waited after the run before the CPU is read: the writer's longest window (maxFoldAfterMs) and a margin */
const SETTLE_MS = Number(process.env.LP_SETTLE_MS ?? 5500);

/** CPU seconds of a process's main thread (its tid is its pid) and of its other threads. */
function threadSeconds(pid: number): { main: number; others: number; byName: Map<string, number> } {
  let main = 0;
  let others = 0;
  const byName = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const s = (Number(fields[11]) + Number(fields[12])) / 100;
    if (Number(tid) === pid) main += s;
    else others += s;
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    byName.set(`${name}#${Number(tid) - pid}`, s);
  }
  return { main, others, byName };
}

for (let round = 0; round < ROUNDS; round++) {
  for (const w of LP_WORKLOADS) {
    if (!PARTS.has(w.name)) continue;
    const bodies = w.bodies(seeded(42));
    for (const root of ROOTS) {
      const load = loadavg()[0]!.toFixed(2);
      const server = await spawnService({}, root);
      const agent = await createProjectWithToken(server);
      const url = `${server.url}/api/v2/write?precision=ns`;
      const headers = { authorization: `Token ${agent.sourceToken}` };
      await runWrk({ url, headers, bodies, connections: 8, seconds: 2 });
      await waitIdle(server.pid);
      const cpu = cpuSeconds(server.pid);
      const threads = threadSeconds(server.pid);
      const r = await runWrk({ url, headers, bodies, connections: 8, seconds: SECONDS });
      const behind = await waitIdle(server.pid);
      // The last window may still wait for its fold timer (the writer's windows last up to 5 s):
      // its fold is counted too, so that a longer window does not leave work out of the figures.
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
      await waitIdle(server.pid);
      const after = threadSeconds(server.pid);
      const used = cpuSeconds(server.pid) - cpu;
      const requests = Math.max(1, r.perSecond * r.seconds);
      const ms = (s: number) => fmt((s / requests) * 1000, 2);
      await server.stop();
      server.remove();
      console.log(
        `${w.name.padEnd(6)} ${path.basename(root).padEnd(12)} load ${load}: ` +
          `${fmt((requests * VALUES) / (r.seconds + behind))} values/s sustained, ${fmt(r.perSecond * VALUES)} acknowledged ` +
          `(folded ${fmt(behind, 1)} s after), p50 ${fmt(r.p50, 1)} ms, p99 ${fmt(r.p99, 1)} ms, failures ${r.failures}, ` +
          `CPU ${ms(used)} ms per request (event loop ${ms(after.main - threads.main)}, ` +
          `other threads ${ms(after.others - threads.others)})`,
      );
      if (process.env.LP_THREADS)
        console.log(
          '  by thread name: ' +
            [...after.byName]
              .map(([name, s]) => [name, s - (threads.byName.get(name) ?? 0)] as const)
              .filter(([, s]) => s > 0.05)
              .map(([name, s]) => `${name} ${ms(s)}`)
              .join(', '),
        );
    }
  }
}
