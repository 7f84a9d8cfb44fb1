// The event loop's work on a line-protocol body after the reader, piece by piece, in two checkouts
// side by side in one process: the bodies of a line-protocol workload (bench/ingest-intake.ts)
// read into wires once (line-direct.ts of the second checkout, not counted), then per body:
// the key limit's check of keys the source holds (admitKeys), the four point counts the write
// path made (wirePointCount), the overflow guard's scan (needsCheckWire), the log record's body
// (wireToParts and the head), the log append itself (CRC and writev into a temp segment) and the
// numbering of the keys for the writer's thread (KeyNumbers). The checkouts alternate round by
// round; µs per body, min and lower quartile.
// Run: EV_ROOTS=/path/to/old,/path/to/new node --import tsx bench/lp-evloop.ts
//      (default: this checkout twice; EV_PART=wide|live|narrow, EV_ROUNDS=30)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seeded } from './helpers';
import { LP_WORKLOADS } from './ingest-intake';

const here = path.resolve(import.meta.dirname, '..');
const roots = (process.env.EV_ROOTS ?? `${here},${here}`).split(',').map((r) => path.resolve(r));
const oldRoot = roots[0]!;
const newRoot = roots[1] ?? oldRoot;
const PART = process.env.EV_PART ?? 'wide';
const ROUNDS = Number(process.env.EV_ROUNDS ?? 30);
const INNER = 5;

const { mapLineBodyDirect } = await import(`${newRoot}/src/intake/line-direct.ts`);
const bodies = LP_WORKLOADS.find((w) => w.name === PART)!.bodies(seeded(42));
const wires = bodies.map((b) => {
  const m = mapLineBodyDirect(b, 'ns', Date.now());
  const wire = m.wires[0];
  wire.keyHashes = m.keyHashes?.[0];
  return wire;
});
const settings = {
  id: 'bench',
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: ['1h', '1d', '1w', '1mo'],
};
const source = { id: 'bench', type: 'database' };
const dirs: string[] = [];

async function pieces(root: string): Promise<Record<string, () => void>> {
  const kl = await import(`${root}/src/intake/key-limit.ts`);
  const pw = await import(`${root}/src/model/point-wire.ts`);
  const ov = await import(`${root}/src/domain/metrics/ingest/overflow.ts`);
  const mw = await import(`${root}/src/drivers/embedded/metric-writer.ts`);
  const lg = await import(`${root}/src/drivers/embedded/log.ts`);
  const wp = await import(`${root}/src/drivers/embedded/writer-protocol.ts`);
  const limit = new kl.KeyLimit(1_000_000, () => []);
  for (const w of wires) await limit.admitKeys(source, w.keys, w.keyHashes);
  const guard = new ov.OverflowGuard();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'lp-evloop-'));
  dirs.push(dir);
  const appender = new lg.LogAppender(dir, 0, { segmentBytes: 1e12, segmentMs: 1e12 });
  const numbers = new wp.KeyNumbers();
  return {
    admitKeys: () => {
      for (const w of wires) void limit.admitKeys(source, w.keys, w.keyHashes);
    },
    count: () => {
      for (const w of wires) for (let i = 0; i < 4; i++) pw.wirePointCount(w);
    },
    check: () => {
      for (const w of wires) guard.needsCheckWire('bench', w);
    },
    parts: () => {
      for (const w of wires) pw.wireToParts(w);
    },
    append: () => {
      for (const w of wires) appender.append([{ head: mw.logHead(settings), body: pw.wireToParts(w) }]);
    },
    number: () => {
      for (const w of wires) numbers.number([{ settings, wire: w }]);
    },
  };
}

const old = await pieces(oldRoot);
const now = await pieces(newRoot);
const stat = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return `min ${s[0]!.toFixed(1)} q1 ${s[Math.floor(s.length / 4)]!.toFixed(1)}`;
};
console.log(`${PART}, ${wires.length} bodies; old ${oldRoot}, new ${newRoot}; µs per body`);
for (const name of Object.keys(now)) {
  const times = { old: [] as number[], new: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    for (const which of r % 2 ? (['new', 'old'] as const) : (['old', 'new'] as const)) {
      const run = (which === 'old' ? old : now)[name]!;
      const started = process.hrtime.bigint();
      for (let k = 0; k < INNER; k++) run();
      await new Promise((resolve) => setImmediate(resolve)); // the admitKeys promises settle (counted)
      times[which].push(Number(process.hrtime.bigint() - started) / 1000 / INNER / wires.length);
    }
  }
  console.log(`${name.padEnd(10)} old ${stat(times.old)}  new ${stat(times.new)}`);
}
for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
