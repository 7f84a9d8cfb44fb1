// Everything a request handler may use, built once per server in server.ts (no globals).
import type { Config } from './config';
import type { Db } from './storage/db';
import type { Logger } from './lib/log';
import type { AccountsRepo } from './storage/accounts';
import type { SourcesRepo } from './storage/sources';
import type { DashboardsRepo } from './storage/dashboards';
import type { LoginThrottle } from './domain/login-throttle';
import type { MetricsEngine } from './domain/metrics/engine';
import type { SecretBox } from './lib/secrets';
import type { OpsStats } from './ops/stats';
import type { RetentionSweeper } from './ops/retention-sweeper';

/** Running the service: counters for /metrics and logs, the retention sweep, the stop flag. */
export interface Ops {
  stats: OpsStats;
  sweeper: RetentionSweeper;
  /** set when a stop began: new requests answer 503 and every answer closes its connection */
  stopping: boolean;
}

export interface Deps {
  config: Config;
  db: Db;
  log: Logger;
  /** epoch milliseconds; replaced in tests that need a fixed time */
  now: () => number;
  accounts: AccountsRepo;
  sources: SourcesRepo;
  dashboards: DashboardsRepo;
  loginThrottle: LoginThrottle;
  /** metric ingestion (group commit) and reads over every source's store */
  metrics: MetricsEngine;
  ops: Ops;
  /** better-sqlite3 native binding when running as the single executable */
  nativeBinding?: unknown;
  /** encrypts database source secrets at rest (server.ts loads the key) */
  secrets: SecretBox;
}
