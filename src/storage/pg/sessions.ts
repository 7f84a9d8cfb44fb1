// The web sessions repository on PostgreSQL (cluster mode): the same methods and rows as
// ../sessions.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { SessionsRepo } from '../sessions';
import { notBuilt } from './not-built';

export function createPgSessionsRepo(_store: PgStore): SessionsRepo {
  return notBuilt<SessionsRepo>('sessions');
}
