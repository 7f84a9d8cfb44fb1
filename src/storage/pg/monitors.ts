// The monitors repository on PostgreSQL (cluster mode): the same methods and rows as
// ../monitors.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { MonitorsRepo } from '../monitors';
import { notBuilt } from './not-built';

export function createPgMonitorsRepo(_store: PgStore): MonitorsRepo {
  return notBuilt<MonitorsRepo>('monitors');
}
