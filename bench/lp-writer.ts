// The metric writer's thread alone, per 1,000-line line-protocol body, as the service runs it: the
// bodies of the line-protocol workloads (bench/ingest-intake.ts) read into wires by the direct
// reader, their keys numbered as the event loop numbers them (writer-protocol.ts KeyNumbers), merged
// into the window (MetricWriter.merge) LP_WINDOW at a time, then folded into the embedded store (a
// temp database with the service's pragmas, transactions of 8 ms as the service cuts them). CPU
// time of this process, split into merging and folding, after LP_WARM windows that create the
// series and fill the bucket cache: steadier than the service's figures on a loaded machine.
// Run: node --import tsx bench/lp-writer.ts   (LP_PART=live,wide LP_WINDOW=1000 LP_WINDOWS=6 LP_WARM=2)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MetricWriter } from '../src/drivers/embedded/metric-writer';
import { KeyNumbers, KeyTable } from '../src/drivers/embedded/writer-protocol';
import { mapLineBodyDirect } from '../src/intake/line-direct';
import { openDatabase } from '../src/storage/db';
import { migrate } from '../src/storage/migrations';
import { DEFAULT_GRANULARITIES } from '../src/domain/source-settings';
import { fmt, seeded } from './helpers';
import { LP_WORKLOADS } from './ingest-intake';

const PARTS = new Set((process.env.LP_PART ?? 'narrow,live,wide').split(','));
const WINDOW = Number(process.env.LP_WINDOW ?? 1000);
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
  if (process.env.LP_CACHE_KB) db.pragma(`cache_size = -${process.env.LP_CACHE_KB}`);
  const writer = new MetricWriter({
    db,
    foldAfterMs: 3_600_000,
    maxFoldAfterMs: 3_600_000,
    foldAtBytes: Number.MAX_SAFE_INTEGER,
    maxWindowBytes: Number.MAX_SAFE_INTEGER,
    appends: false,
    cacheLimits: process.env.LP_CACHE_MB
      ? { entries: 400_000, bytes: Number(process.env.LP_CACHE_MB) * 1024 * 1024 }
      : undefined,
  });
  const numbers = new KeyNumbers();
  const table = new KeyTable();
  let seq = 0;
  let merge = 0;
  let fold = 0;
  const folds: number[] = [];
  try {
    for (let win = 0; win < WARM + WINDOWS; win++) {
      let t = cpuMs();
      for (let i = 0; i < WINDOW; i++) {
        const req = numbers.number(wires[seq % wires.length]!.map((wire) => ({ settings, wire })));
        writer.merge(table.resolve(req), ++seq);
      }
      const merged = cpuMs() - t;
      t = cpuMs();
      await writer.settle();
      const folded = cpuMs() - t;
      if (win < WARM) continue;
      merge += merged;
      fold += folded;
      folds.push(folded);
    }
  } finally {
    await writer.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const requests = WINDOW * WINDOWS;
  folds.sort((a, b) => a - b);
  console.log(
    `${w.name.padEnd(6)} ${WINDOW} bodies per window: merge ${fmt(merge / requests, 3)} ms, fold ${fmt(fold / requests, 3)} ms, ` +
      `total ${fmt((merge + fold) / requests, 3)} ms CPU per body (median fold ${fmt(folds[Math.floor(folds.length / 2)]!, 0)} ms; ` +
      `numbering the keys included in merge)`,
  );
}
