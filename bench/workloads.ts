// The batch workloads of the issue, shared by bench/ingest.ts and bench/memory.ts: 1,000 points x 3
// leaves per request through POST /api/v1/metrics/batch.
//   narrow: one key, timestamps over one hour (each body its own hour);
//   live:   1,000 of 5,000 keys per request, timestamps within one minute (each body its own minute);
//   wide:   1,000 of 5,000 keys per request, timestamps over 24 hours.
import { pointsBody, sampleKeys } from './helpers';

const BODIES = 64;
const KEY_POOL = 5000;
const HOUR = 3_600_000;
const BASE = Date.UTC(2026, 0, 5);

export interface Workload {
  name: string;
  bodies: (random: () => number) => string[];
  target: number;
  p99Target?: number;
}

export const WORKLOADS: Workload[] = [
  {
    name: 'narrow',
    bodies: (random) =>
      Array.from({ length: 24 }, (_, h) =>
        pointsBody(Array(1000).fill('bench.orders'), BASE + h * HOUR, HOUR, random),
      ),
    target: 6e6,
  },
  {
    name: 'live',
    bodies: (random) =>
      Array.from({ length: BODIES }, (_, m) =>
        pointsBody(sampleKeys(KEY_POOL, 1000, random), BASE + m * 60_000, 60_000, random),
      ),
    target: 1e6,
    p99Target: 100,
  },
  {
    name: 'wide',
    bodies: (random) =>
      Array.from({ length: BODIES }, () =>
        pointsBody(sampleKeys(KEY_POOL, 1000, random), BASE, 24 * HOUR, random),
      ),
    target: 0.5e6,
    p99Target: 100,
  },
];
