// The share links repository on PostgreSQL (cluster mode): the same methods and rows as
// ../shares.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { SharesRepo } from '../shares';
import { notBuilt } from './not-built';

export function createPgSharesRepo(_store: PgStore): SharesRepo {
  return notBuilt<SharesRepo>('shares');
}
