// Bucketing throughput on the ingest workload: 1,000 points spread over one hour, each floored for
// the 7 default granularities (1m,1h,1d,1w,1mo,1q,1y). Prints calls/second for createBucketer (the
// hot path; fresh per 1,000 points, or kept across batches) and floorToBucket (one-off calls), with
// the points in time order and shuffled, then bucketRange speed per bucket.
// Run: node --import tsx bench/bucketing.ts

import {
  bucketRange,
  createBucketer,
  floorToBucket,
  parseGranularity,
  type Calendar,
  type Granularity,
} from '../src/model/time/granularity';

const GRANULARITIES = ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'].map((text) => {
  const g = parseGranularity(text);
  if (!g) throw new Error(text);
  return g;
});
const HOUR_START = Date.UTC(2025, 5, 12, 9, 0, 0);
const POINTS = 1_000;

function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function workload(shuffled: boolean): number[] {
  const random = seededRandom(42);
  const points = Array.from({ length: POINTS }, () => HOUR_START + Math.floor(random() * 3_600_000));
  return shuffled ? points : points.sort((a, b) => a - b);
}

/** Best of five timed runs after one warm-up run. */
function timeCalls(label: string, calls: number, run: () => number): void {
  let sink = run();
  let seconds = Number.POSITIVE_INFINITY;
  for (let repeat = 0; repeat < 5; repeat++) {
    const started = process.hrtime.bigint();
    sink += run();
    seconds = Math.min(seconds, Number(process.hrtime.bigint() - started) / 1e9);
  }
  const perSecond = calls / seconds;
  console.log(
    `${label.padEnd(58)} ${Math.round(perSecond).toLocaleString('en-US').padStart(13)} calls/s` +
      `  ${((seconds / calls) * 1e9).toFixed(0).padStart(6)} ns/call  (check ${sink % 7})`,
  );
}

function benchBucketers(cal: Calendar, points: number[], order: string, rounds: number): void {
  timeCalls(`createBucketer  ${cal.timeZone} ${order}`, rounds * points.length * GRANULARITIES.length, () => {
    let sum = 0;
    for (let round = 0; round < rounds; round++) {
      // A fresh set per round, as one ingest batch would build them.
      const bucketers = GRANULARITIES.map((g) => createBucketer(g, cal));
      for (const at of points) for (const bucketer of bucketers) sum += bucketer(at) % 7;
    }
    return sum;
  });
}

function benchReusedBucketers(cal: Calendar, points: number[], order: string, rounds: number): void {
  const bucketers = GRANULARITIES.map((g) => createBucketer(g, cal));
  timeCalls(
    `createBucketer  ${cal.timeZone} ${order}, reused`,
    rounds * points.length * GRANULARITIES.length,
    () => {
      let sum = 0;
      for (let round = 0; round < rounds; round++) {
        for (const at of points) for (const bucketer of bucketers) sum += bucketer(at) % 7;
      }
      return sum;
    },
  );
}

function benchFloor(cal: Calendar, points: number[], order: string): void {
  timeCalls(`floorToBucket   ${cal.timeZone} ${order}`, points.length * GRANULARITIES.length, () => {
    let sum = 0;
    for (const at of points) for (const g of GRANULARITIES) sum += floorToBucket(at, g, cal) % 7;
    return sum;
  });
}

function benchRange(cal: Calendar, g: Granularity, buckets: number, stepMs: number): void {
  const from = Date.UTC(2000, 0, 1);
  timeCalls(`bucketRange     ${cal.timeZone} ${buckets} x ${g.text} (per bucket)`, buckets, () => {
    const range = bucketRange(from, from + (buckets - 1) * stepMs, g, cal, buckets + 10);
    return range ? range.length : -1;
  });
}

for (const timeZone of ['UTC', 'Europe/Bratislava', 'Asia/Kathmandu']) {
  const cal: Calendar = { timeZone, beginningOfWeek: 1 };
  for (const shuffled of [false, true]) {
    const order = shuffled ? 'shuffled' : 'in order';
    benchBucketers(cal, workload(shuffled), order, 20);
    benchReusedBucketers(cal, workload(shuffled), order, 20);
    benchFloor(cal, workload(shuffled), order);
  }
}
const bratislava: Calendar = { timeZone: 'Europe/Bratislava', beginningOfWeek: 1 };
benchRange(bratislava, GRANULARITIES[0]!, 100_000, 60_000);
benchRange(bratislava, GRANULARITIES[2]!, 10_000, 86_400_000);
benchRange(bratislava, GRANULARITIES[4]!, 1_200, 30 * 86_400_000);
