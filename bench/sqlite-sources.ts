// Cost of running sqlite source files in a worker thread (sqlite/pool.ts) instead of inline on the
// event loop. Run: node --import tsx bench/sqlite-sources.ts
//
// One full-mode source file; the same store code, once inline and once through one worker:
// - year write: one write set of every 1h bucket of a year (8,760) x 10 leaves;
// - small writes: 1,000 write sets of one bucket x 3 leaves, one after the other (the worst case
//   for the message round-trip: one per write set);
// - small reads: 1,000 reads of one bucket (the round-trip alone, no fsync);
// - year read: the 8,760 buckets of that year (the GET body's texts), p50 and p95 of 30, and the
//   event loop's busy time per read (what every other request waits for).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSqliteStore } from '../src/drivers/sqlite/store';
import { createSqlitePool } from '../src/drivers/sqlite/pool';
import { emptyWriteSet, type WriteSetStore, type WriteSet } from '../src/drivers/types';

const HOUR = 3_600_000;
const YEAR = Date.UTC(2025, 0, 1);
const starts = Array.from({ length: 8760 }, (_, i) => YEAR + i * HOUR);
const leaves = (n: number) =>
  new Map(Array.from({ length: n }, (_, i) => [`leaf${i}.value`, i + 1] as [string, number]));

function writeSet(buckets: number[], leafCount: number): WriteSet {
  const writes = emptyWriteSet();
  const series = new Map(buckets.map((ms) => [ms, { add: leaves(leafCount), set: null }]));
  writes.sources.set('s1', new Map([['orders', new Map([['1h', series]])]]));
  return writes;
}

const percentile = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

async function measure(label: string, store: WriteSetStore): Promise<Record<string, number>> {
  await store.setup();
  let t = performance.now();
  await store.apply(writeSet(starts, 10));
  const yearWrite = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < 1000; i++) await store.apply(writeSet([starts[i % 24]!], 3));
  const smallWrites = performance.now() - t;
  t = performance.now();
  for (let i = 0; i < 1000; i++)
    await store.read({ sourceId: 's1', key: 'orders', granularity: '1h' }, [starts[i % 24]!]);
  const smallReads = performance.now() - t;
  const reads: number[] = [];
  const elu = performance.eventLoopUtilization();
  for (let i = 0; i < 30; i++) {
    t = performance.now();
    const texts = await store.read({ sourceId: 's1', key: 'orders', granularity: '1h' }, starts);
    reads.push(performance.now() - t);
    if (texts.length !== 8760) throw new Error('short read');
  }
  const busy = performance.eventLoopUtilization(elu).active / 30; // event-loop ms per year read
  const out = {
    yearWriteMs: Math.round(yearWrite),
    smallWriteUs: Math.round((smallWrites / 1000) * 1000),
    smallReadUs: Math.round((smallReads / 1000) * 1000),
    readP50Ms: Math.round(percentile(reads, 0.5) * 10) / 10,
    readP95Ms: Math.round(percentile(reads, 0.95) * 10) / 10,
    readLoopBusyMs: Math.round(busy * 10) / 10,
  };
  console.log(label.padEnd(8), JSON.stringify(out));
  return out;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-sqlite-'));
try {
  const inline = await measure(
    'inline',
    createSqliteStore({ file: path.join(dir, 'inline.db'), mode: 'full' }),
  );
  const pool = createSqlitePool({ workers: 1, timeoutMs: 60_000 });
  const store = createSqliteStore({ file: path.join(dir, 'worker.db'), mode: 'full', pool });
  await store.read({ sourceId: 's1', key: 'warm', granularity: '1h' }, [YEAR]); // the worker's start is not measured
  const worker = await measure('worker', store);
  await pool.close();
  const ratio = (k: keyof typeof inline) => (worker[k]! / inline[k]!).toFixed(2);
  console.log(
    `worker / inline: year write ${ratio('yearWriteMs')}, small write ${ratio('smallWriteUs')}, small read ${ratio('smallReadUs')}, read p50 ${ratio('readP50Ms')}, event loop busy per read ${ratio('readLoopBusyMs')}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
