// The metric writer's merge alone, per 1,000-line line-protocol body: the bodies of the line-protocol
// workloads (bench/ingest-intake.ts) parsed and mapped to wires, 40 of them merged into one window
// (as the writer merges between folds) and spread into rows (a fold's first step). CPU time of this
// process, so steadier than the service's figures on a loaded machine; no SQLite, no HTTP.
// Run: node --import tsx bench/lp-merge.ts   (LP_MERGE_REPS=12)
import { LP_WORKLOADS } from './ingest-intake';
import { seeded } from './helpers';
import { parseLineProtocol } from '../src/intake/line-protocol';
import { mapLineWire } from '../src/intake/line-wire';
import { IngestWindow } from '../src/model/window/window';
import { planFor } from '../src/domain/metrics/merge';
import { DEFAULT_GRANULARITIES } from '../src/domain/source-settings';

const REPS = Number(process.env.LP_MERGE_REPS ?? 12);
const BODIES = 40;
const plan = planFor({
  id: 's',
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: [...DEFAULT_GRANULARITIES],
});

for (const w of LP_WORKLOADS) {
  const wires = w
    .bodies(seeded(42))
    .slice(0, BODIES)
    .flatMap((body) => mapLineWire(parseLineProtocol(body), { nowMs: Date.now() }).wires);
  const ms: number[] = [];
  for (let r = 0; r < REPS; r++) {
    const window = new IngestWindow();
    const before = process.cpuUsage();
    for (const wire of wires) window.add(plan, wire);
    window.spreadAll();
    const used = process.cpuUsage(before);
    ms.push((used.user + used.system) / 1000 / BODIES);
  }
  ms.sort((a, b) => a - b);
  console.log(
    `${w.name.padEnd(6)} merge CPU per 1,000-line body: best ${ms[0]!.toFixed(2)} ms, median ${ms[Math.floor(REPS / 2)]!.toFixed(2)} ms`,
  );
}
