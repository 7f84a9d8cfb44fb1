// The alert channels repository on PostgreSQL (cluster mode): the same methods and rows as
// ../channels.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { ChannelsRepo } from '../channels';
import { notBuilt } from './not-built';

export function createPgChannelsRepo(_store: PgStore): ChannelsRepo {
  return notBuilt<ChannelsRepo>('channels');
}
