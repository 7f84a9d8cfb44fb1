// Counters of what the server did, kept in memory for GET /metrics and the 60 s log summary.
// Label sets stay small: requests are counted by route template (never the raw path) and status.

/** Upper bounds (seconds) of the commit latency histogram: 1 ms .. 5 s. */
export const COMMIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

export interface Histogram {
  /** cumulative counts per bound of COMMIT_BUCKETS */
  counts: number[];
  count: number;
  sum: number;
}

export interface SummaryWindow {
  requests: number;
  points: number;
  leaves: number;
  errors: number;
}

export class OpsStats {
  /** `method\0route\0status` -> count */
  readonly requests = new Map<string, number>();
  points = 0;
  leaves = 0;
  readonly commit: Histogram = { counts: COMMIT_BUCKETS.map(() => 0), count: 0, sum: 0 };
  /** since the last summary line */
  window: SummaryWindow = { requests: 0, points: 0, leaves: 0, errors: 0 };
  readonly startedAt = Date.now();

  request(method: string, route: string, status: number): void {
    const key = `${method}\0${route}\0${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    this.window.requests++;
    if (status >= 500) this.window.errors++;
  }

  committed(points: number, leaves: number, seconds: number): void {
    this.points += points;
    this.leaves += leaves;
    this.window.points += points;
    this.window.leaves += leaves;
    const h = this.commit;
    h.count++;
    h.sum += seconds;
    for (let i = 0; i < COMMIT_BUCKETS.length; i++) if (seconds <= COMMIT_BUCKETS[i]!) h.counts[i]!++;
  }

  /** The counts since the last call, and a fresh window. */
  takeWindow(): SummaryWindow {
    const w = this.window;
    this.window = { requests: 0, points: 0, leaves: 0, errors: 0 };
    return w;
  }
}
