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
  /** better-sqlite3 native binding when running as the single executable */
  nativeBinding?: unknown;
  /** encrypts database source secrets at rest (server.ts loads the key) */
  secrets: SecretBox;
}
