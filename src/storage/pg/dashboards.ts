// The dashboards repository on PostgreSQL (cluster mode): the same methods and rows as
// ../dashboards.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { DashboardsRepo } from '../dashboards';
import { notBuilt } from './not-built';

export function createPgDashboardsRepo(_store: PgStore): DashboardsRepo {
  return notBuilt<DashboardsRepo>('dashboards');
}
