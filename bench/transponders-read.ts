// CPU of one GET of a year of 1h buckets with 5 transponders, in one process: what the read adds
// to the writing of the response (src/http/present/metrics.ts presentSeriesJson) without them.
// Run: node --expose-gc --import tsx bench/transponders-read.ts (a collection before each timed round)
//
// The texts are those of bench/reads.ts (10 leaves per bucket, 8,760 buckets), each read given new
// strings of the same content, as the store returns (a row's text sliced after its bucket number).
// Cases: the same texts again (what bench/reads.ts reads), the last bucket changed (a live range),
// every bucket changed (a range that moved). Prints the median CPU per read of BENCH_ROUNDS (default
// 11) rounds of 15 reads each, read without and with transponders alternately.
import { performance } from 'node:perf_hooks';
import { applyToRead } from '../src/domain/transponders/apply';
import { presentSeriesJson } from '../src/http/present/metrics';
import type { Transponder } from '../src/storage/transponders';

const HOURS = 8760;
const rows = (shift: number, lastOnly = false) =>
  Array.from({ length: HOURS }, (_, h) => {
    const base = lastOnly ? (h === HOURS - 1 ? h + shift : h) : h + shift;
    const values = Object.fromEntries(Array.from({ length: 10 }, (_, l) => [`leaf${l}`, base + l]));
    return `${1735689600 + h * 3600}${JSON.stringify({ metrics: values })}`;
  });
/** new strings of the same content, as a store's read returns */
const fresh = (texts: readonly string[]) =>
  texts.map((row) => Buffer.from(row, 'latin1').toString('latin1').slice(10));
const at = Array.from({ length: HOURS }, (_, h) =>
  new Date(Date.UTC(2025, 0, 1) + h * 3_600_000).toISOString(),
);

const list: Transponder[] = Array.from({ length: 5 }, (_, i) => ({
  id: `t${i}`,
  organizationId: 'o',
  sourceType: 'project',
  sourceId: 's',
  name: `t${i}`,
  key: 'k',
  paths: ['metrics.leaf0', `metrics.leaf${i + 1}`],
  expression: 'a / b * 100',
  response: `derived.t${i}`,
  enabled: true,
  order: i,
  insertedAt: 0,
  updatedAt: 0,
}));

function readPlain(values: string[]): number {
  return presentSeriesJson({ at, values }).length;
}

function readWith(values: string[]): number {
  const read = applyToRead(list, 'k', values, [])!;
  return presentSeriesJson({ at, values: read.values, ...(read.derived ? { derived: read.derived } : {}) })
    .length;
}

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

function measure(name: string, next: (read: number) => string[]): void {
  const plain: number[] = [];
  const withT: number[] = [];
  let read = 0;
  for (let r = 0; r < ROUNDS + 2; r++) {
    for (const [out, run] of [
      [plain, readPlain],
      [withT, readWith],
    ] as const) {
      const inputs = Array.from({ length: 15 }, () => fresh(next(read++)));
      (globalThis as { gc?: () => void }).gc?.();
      const start = cpu();
      const wall = performance.now();
      for (const values of inputs) run(values);
      if (r >= 2) out.push((cpu() - start) / 15);
      void wall;
    }
  }
  const p = median(plain);
  const w = median(withT);
  console.log(
    `${name}: ${p.toFixed(2)} ms without, ${w.toFixed(2)} ms with transponders (x${(w / p).toFixed(2)})`,
  );
}

const same = rows(0);
measure('the same texts again', () => same);
const lastChanged = Array.from({ length: 64 }, (_, k) => rows(k * 1000, true));
measure('the last bucket changed', (read) => lastChanged[read % 64]!);
const moved = Array.from({ length: 24 }, (_, k) => rows(k + 1)); // more than the reads kept
measure('every bucket changed', (read) => moved[read % 24]!);
