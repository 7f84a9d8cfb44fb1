// The transponders repository on PostgreSQL (cluster mode): the same methods and rows as
// ../transponders.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { TranspondersRepo } from '../transponders';
import { notBuilt } from './not-built';

export function createPgTranspondersRepo(_store: PgStore): TranspondersRepo {
  return notBuilt<TranspondersRepo>('transponders');
}
