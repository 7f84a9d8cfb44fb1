// Everything a request handler may use, built once per server in server.ts (no globals).
import type { Ports } from './domain/ports';
import type { OpsStats } from './ops/stats';
import type { RetentionSweeper } from './ops/retention-sweeper';
import type { Evaluator } from './domain/alerts/evaluator';
import type { OutboxWorker } from './domain/alerts/outbox';

/** Running the service: counters for /metrics and logs, the retention sweep, the stop flag. */
export interface Ops {
  stats: OpsStats;
  sweeper: RetentionSweeper;
  /** alert evaluation rounds and the outbox sender (SPEC 13) */
  alerts: { evaluator: Evaluator; outbox: OutboxWorker };
  /** whether this node runs the background jobs (cluster mode: holds their lease, src/ops/jobs.ts) */
  jobs?: { readonly held: boolean; readonly holder: string };
  /** set when a stop began: new requests answer 503 and every answer closes its connection */
  stopping: boolean;
  /** this node's id (GET /metrics, the jobs' lease; `hostname:pid:random`, ops/node-id.ts) */
  nodeId: string;
  /**
   * Cluster mode (storage.url): the shared database, for GET /api/v1/health; `ping` resolves with
   * a round trip's milliseconds, rejects when the database does not answer in time.
   */
  database?: { ping(): Promise<number> };
}

export interface Deps extends Ports {
  ops: Ops;
  /** better-sqlite3 native binding when running as the single executable */
  nativeBinding?: unknown;
}
