// The sources repository on PostgreSQL (cluster mode): the same methods and rows as
// ../sources.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { SourcesRepo } from '../sources';
import { notBuilt } from './not-built';

export function createPgSourcesRepo(_store: PgStore): SourcesRepo {
  return notBuilt<SourcesRepo>('sources');
}
