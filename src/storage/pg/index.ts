// Every repository of the service's own tables on PostgreSQL (cluster mode, `storage.url`): what
// server.ts builds instead of the SQLite ones when `storage.url` is set.
import type { PgStore } from './client';
import { createPgAccountsRepo } from './accounts';
import { createPgSourcesRepo } from './sources';
import { createPgDashboardsRepo } from './dashboards';
import { createPgSharesRepo } from './shares';
import { createPgSessionsRepo } from './sessions';
import { createPgMonitorsRepo } from './monitors';
import { createPgOutboxRepo } from './outbox';
import { createPgChannelsRepo } from './channels';
import { createPgTranspondersRepo } from './transponders';
import { createPgLoginThrottle } from './login-throttle';

export function createPgRepos(store: PgStore) {
  return {
    accounts: createPgAccountsRepo(store),
    sources: createPgSourcesRepo(store),
    dashboards: createPgDashboardsRepo(store),
    shares: createPgSharesRepo(store),
    sessions: createPgSessionsRepo(store),
    monitors: createPgMonitorsRepo(store),
    outbox: createPgOutboxRepo(store),
    channels: createPgChannelsRepo(store),
    transponders: createPgTranspondersRepo(store),
    loginThrottle: createPgLoginThrottle(store),
  };
}

export type PgRepos = ReturnType<typeof createPgRepos>;
