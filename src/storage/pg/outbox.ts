// The alert outbox repository on PostgreSQL (cluster mode): the same methods and rows as
// ../outbox.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { OutboxRepo } from '../outbox';
import { notBuilt } from './not-built';

export function createPgOutboxRepo(_store: PgStore): OutboxRepo {
  return notBuilt<OutboxRepo>('outbox');
}
