// Everything a request handler may use, built once per server in server.ts (no globals).
import type { Config } from './config';
import type { Db } from './storage/db';
import type { Logger } from './lib/log';
import type { AccountsRepo } from './storage/accounts';
import type { SourcesRepo } from './storage/sources';
import type { DashboardsRepo } from './storage/dashboards';
import type { LoginThrottle } from './domain/login-throttle';

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
  /** better-sqlite3 native binding when running as the single executable */
  nativeBinding?: unknown;
}
