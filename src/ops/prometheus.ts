// GET /metrics in the Prometheus text exposition format (version 0.0.4), SPEC section 11. Written
// by hand: a dozen series do not need a client library, and the format is a few lines of text.
import { statSync } from 'node:fs';
import { COMMIT_BUCKETS, type OpsStats } from './stats';
import { SWEEP_TX_BOUNDS_MS, type SweepStats } from './retention-sweeper';

export interface MetricsInput {
  stats: OpsStats;
  sweep: Readonly<SweepStats>;
  queueDepth: number;
  /** whether this node runs the background jobs (always on one node; cluster mode: holds their lease) */
  jobsHeld?: boolean;
  /** kept series answers (domain/metrics/answers.ts), when the service keeps them */
  answers?: { hits: number; misses: number; entries: number; bytes: number } | null;
  /** service.db; its -wal file is counted too */
  databaseFile: string;
  version: string;
  /** this node's id (cluster mode runs several behind a load balancer) */
  nodeId: string;
}

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

function labels(pairs: Record<string, string>): string {
  const parts = Object.entries(pairs).map(([k, v]) => `${k}="${escapeLabel(v)}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

class Exposition {
  private readonly lines: string[] = [];

  family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    return this;
  }

  sample(name: string, value: number, pairs: Record<string, string> = {}): this {
    this.lines.push(`${name}${labels(pairs)} ${Number.isFinite(value) ? String(value) : 'NaN'}`);
    return this;
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export function renderMetrics(input: MetricsInput): string {
  const { stats, sweep } = input;
  const out = new Exposition();
  out.family(
    'service_http_requests_total',
    'counter',
    'HTTP requests answered, by method, route template and status.',
  );
  for (const [key, count] of stats.requests) {
    const [method, route, status] = key.split('\0') as [string, string, string];
    out.sample('service_http_requests_total', count, { method, route, status });
  }
  out.family('service_ingested_points_total', 'counter', 'Metric points committed to the embedded store.');
  out.sample('service_ingested_points_total', stats.points);
  out.family('service_ingested_leaves_total', 'counter', 'Leaf values of the committed metric points.');
  out.sample('service_ingested_leaves_total', stats.leaves);
  out.family('service_write_queue_depth', 'gauge', 'Metric points merged but not yet committed.');
  out.sample('service_write_queue_depth', input.queueDepth);

  if (input.answers) {
    const a = input.answers;
    out.family(
      'service_series_answers_total',
      'counter',
      'Series reads of project sources: sent from a kept answer (hit) or read from the store (miss).',
    );
    out.sample('service_series_answers_total', a.hits, { result: 'hit' });
    out.sample('service_series_answers_total', a.misses, { result: 'miss' });
    out.family(
      'service_series_answers_kept_bytes',
      'gauge',
      'Bytes of series answers kept for reads to come.',
    );
    out.sample('service_series_answers_kept_bytes', a.bytes);
  }

  const h = stats.commit;
  out.family('service_ingest_commit_seconds', 'histogram', 'From a write entering the queue to its commit.');
  COMMIT_BUCKETS.forEach((le, i) =>
    out.sample('service_ingest_commit_seconds_bucket', h.counts[i]!, { le: String(le) }),
  );
  out.sample('service_ingest_commit_seconds_bucket', h.count, { le: '+Inf' });
  out.sample('service_ingest_commit_seconds_sum', h.sum);
  out.sample('service_ingest_commit_seconds_count', h.count);

  out.family('service_database_size_bytes', 'gauge', 'Size of service.db and its write-ahead log.');
  out.sample(
    'service_database_size_bytes',
    fileSize(input.databaseFile) + fileSize(`${input.databaseFile}-wal`),
  );
  out.family('process_resident_memory_bytes', 'gauge', 'Resident set size of the process.');
  out.sample('process_resident_memory_bytes', process.memoryUsage.rss());
  out.family('process_start_time_seconds', 'gauge', 'Start time of the server, seconds since the epoch.');
  out.sample('process_start_time_seconds', Math.floor(stats.startedAt / 1000));

  out.family('service_retention_sweeps_total', 'counter', 'Completed retention sweeps.');
  out.sample('service_retention_sweeps_total', sweep.sweeps);
  out.family('service_retention_deleted_buckets_total', 'counter', 'Buckets deleted by retention.');
  out.sample('service_retention_deleted_buckets_total', sweep.deletedBuckets);
  out.family(
    'service_retention_transaction_seconds',
    'histogram',
    'Duration of each delete transaction of the retention sweep.',
  );
  SWEEP_TX_BOUNDS_MS.forEach((ms, i) =>
    out.sample('service_retention_transaction_seconds_bucket', sweep.transactionBuckets[i]!, {
      le: String(ms / 1000),
    }),
  );
  out.sample('service_retention_transaction_seconds_bucket', sweep.transactions, { le: '+Inf' });
  out.sample('service_retention_transaction_seconds_sum', sweep.transactionSumMs / 1000);
  out.sample('service_retention_transaction_seconds_count', sweep.transactions);
  out.family(
    'service_retention_transaction_max_seconds',
    'gauge',
    'Longest single retention transaction since start.',
  );
  out.sample('service_retention_transaction_max_seconds', sweep.maxTransactionMs / 1000);
  out.family(
    'service_retention_transaction_cpu_max_seconds',
    'gauge',
    'Most CPU time used by one retention transaction.',
  );
  out.sample('service_retention_transaction_cpu_max_seconds', sweep.maxTransactionCpuMs / 1000);
  out.family(
    'service_retention_sweep_failures_total',
    'counter',
    'Retention sweeps that failed (retried next interval).',
  );
  out.sample('service_retention_sweep_failures_total', sweep.failures);

  if (input.jobsHeld !== undefined) {
    out.family(
      'service_jobs_lease_held',
      'gauge',
      'Whether this node runs the background jobs (cluster mode: holds their lease).',
    );
    out.sample('service_jobs_lease_held', input.jobsHeld ? 1 : 0);
  }

  out.family('service_build_info', 'gauge', 'The running version.');
  out.sample('service_build_info', 1, { version: input.version });
  out.family('service_node_info', 'gauge', "This node's id (hostname:pid:random, new at every start).");
  out.sample('service_node_info', 1, { node_id: input.nodeId });
  return out.text();
}
