// The metric writer's thread alone, per 1,000-line line-protocol body, as the service runs it: the
// bodies of the line-protocol workloads (bench/ingest-intake.ts) read into wires by the direct
// reader (beforehand, not counted), their keys numbered as the event loop numbers them
// (writer-protocol.ts KeyNumbers, counted with the merge), merged into the window
// (MetricWriter.merge), then folded into the embedded store (a temp database with the service's
// pragmas, transactions of 8 ms as the service cuts them). CPU time of this process, split into
// merging and folding, after LP_WARM windows that create the series and fill the bucket cache:
// steadier than the service's figures on a loaded machine.
//
// Windows: LP_WINDOW bodies each; or, with LP_RATE=<bodies per second>, as many bodies as arrive
// at that rate while the window gathers under the writer's rule (metric-writer.ts FOLD_FACTOR, or
// LP_FOLD_FACTOR: the last fold's time times the factor, 1 s at least, 5 s at most), a fold's
// time taken as its CPU time stretched by the merges that arrive meanwhile (a writer with a core
// of its own), so that the figures are those of a quiet machine at that rate.
// Run: node --import tsx bench/lp-writer.ts
//      (LP_PART=live,wide LP_WINDOW=1000 or LP_RATE=1000, LP_WINDOWS=6 LP_WARM=2, LP_CACHE_MB=12)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FOLD_FACTOR, MetricWriter } from '../src/drivers/embedded/metric-writer';
import { KeyNumbers, KeyTable } from '../src/drivers/embedded/writer-protocol';
import { mapLineBodyDirect } from '../src/intake/line-direct';
import { openDatabase } from '../src/storage/db';
import { migrate } from '../src/storage/migrations';
import { DEFAULT_GRANULARITIES } from '../src/domain/source-settings';
import { fmt, seeded } from './helpers';
import { LP_WORKLOADS } from './ingest-intake';

const PARTS = new Set((process.env.LP_PART ?? 'narrow,live,wide').split(','));
const WINDOW = Number(process.env.LP_WINDOW ?? 1000);
const RATE = process.env.LP_RATE ? Number(process.env.LP_RATE) : null;
const FACTOR = Number(process.env.LP_FOLD_FACTOR ?? FOLD_FACTOR);
const WINDOWS = Number(process.env.LP_WINDOWS ?? 6);
const WARM = Number(process.env.LP_WARM ?? 2);
const settings = {
  id: 'bench',
  timeZone: 'UTC',
  beginningOfWeek: 1,
  granularities: [...DEFAULT_GRANULARITIES],
};

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

for (const w of LP_WORKLOADS.filter((x) => PARTS.has(x.name))) {
  const wires = w.bodies(seeded(42)).map((body) => mapLineBodyDirect(body, 'ns', Date.now())!.wires);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-lp-writer-'));
  const db = openDatabase(path.join(dir, 'service.db'));
  migrate(db);
  const writer = new MetricWriter({
    db,
    foldAfterMs: 3_600_000,
    maxFoldAfterMs: 3_600_000,
    foldAtBytes: Number.MAX_SAFE_INTEGER,
    maxWindowBytes: Number.MAX_SAFE_INTEGER,
    appends: false,
    cacheLimits: process.env.LP_CACHE_MB
      ? { entries: 200_000, bytes: Number(process.env.LP_CACHE_MB) * 1024 * 1024 }
      : undefined,
  });
  const numbers = new KeyNumbers();
  const table = new KeyTable();
  let seq = 0;
  let merge = 0;
  let fold = 0;
  let requests = 0;
  const folds: number[] = [];
  const sizes: number[] = [];
  let lastFoldMs = 0;
  try {
    for (let win = 0; win < WARM + WINDOWS; win++) {
      const windowMs = Math.min(Math.max(FACTOR * lastFoldMs, 1000), 5000);
      const bodies = RATE === null ? WINDOW : Math.max(1, Math.round((RATE * windowMs) / 1000));
      let t = cpuMs();
      for (let i = 0; i < bodies; i++) {
        const req = numbers.number(wires[seq % wires.length]!.map((wire) => ({ settings, wire })));
        writer.merge(table.resolve(req), ++seq);
      }
      const merged = cpuMs() - t;
      t = cpuMs();
      await writer.settle();
      const folded = cpuMs() - t;
      // the merges that arrive during a fold stretch it (the writer does both on one thread)
      const mergeShare = Math.min(0.9, ((RATE ?? 0) * (merged / bodies)) / 1000);
      lastFoldMs = folded / (1 - mergeShare);
      if (win < WARM) continue;
      merge += merged;
      fold += folded;
      requests += bodies;
      folds.push(folded);
      sizes.push(bodies);
    }
  } finally {
    await writer.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  folds.sort((a, b) => a - b);
  const windows =
    RATE === null
      ? `${WINDOW} bodies per window`
      : `${RATE} bodies/s, factor ${FACTOR}, windows of ${sizes.join(' ')} bodies`;
  console.log(
    `${w.name.padEnd(6)} ${windows}: merge ${fmt(merge / requests, 3)} ms, fold ${fmt(fold / requests, 3)} ms, ` +
      `total ${fmt((merge + fold) / requests, 3)} ms CPU per body (median fold ${fmt(folds[Math.floor(folds.length / 2)]!, 0)} ms)`,
  );
}
