// What the domain's rules may use of the running service: repositories, configuration, the clock,
// the metrics engine. The composition root (src/deps.ts, built in src/server.ts) satisfies it, so
// the domain never imports the wiring; each rule takes `Pick<Ports, ...>` of only what it uses.
import type { Config } from '../config';
import type { Logger } from '../lib/log';
import type { SecretBox } from '../lib/secrets';
import type { AccountsRepo } from '../storage/accounts';
import type { DashboardsRepo } from '../storage/dashboards';
import type { SharesRepo } from '../storage/shares';
import type { SessionsRepo } from '../storage/sessions';
import type { Db } from '../storage/db';
import type { SourcesRepo } from '../storage/sources';
import type { MonitorsRepo } from '../storage/monitors';
import type { OutboxRepo } from '../storage/outbox';
import type { ChannelsRepo } from '../storage/channels';
import type { TranspondersRepo } from '../storage/transponders';
import type { LoginThrottle } from './login-throttle';
import type { MetricsEngine } from './metrics/engine';

export interface Ports {
  config: Config;
  db: Db;
  log: Logger;
  /** epoch milliseconds; replaced in tests that need a fixed time */
  now: () => number;
  accounts: AccountsRepo;
  sources: SourcesRepo;
  dashboards: DashboardsRepo;
  /** dashboards' read-only share links */
  shares: SharesRepo;
  /** the web interface's sign-in sessions */
  sessions: SessionsRepo;
  loginThrottle: LoginThrottle;
  /** metric ingestion (group commit) and reads over every source's store */
  metrics: MetricsEngine;
  /** alert monitors, their instances and history (SPEC 13) */
  monitors: MonitorsRepo;
  /** alert notifications waiting to be sent */
  outbox: OutboxRepo;
  /** alert channels (SPEC 13), their secrets encrypted */
  channels: ChannelsRepo;
  /** a source's transponders (SPEC 15); the metrics read path keeps its own cache of the enabled ones */
  transponders: TranspondersRepo;
  /** encrypts database source secrets at rest (server.ts loads the key) */
  secrets: SecretBox;
}
