// The accounts repository on PostgreSQL (cluster mode): the same methods and rows as
// ../accounts.ts, in PostgreSQL's dialect.
import type { PgStore } from './client';
import type { AccountsRepo } from '../accounts';
import { notBuilt } from './not-built';

export function createPgAccountsRepo(_store: PgStore): AccountsRepo {
  return notBuilt<AccountsRepo>('accounts');
}
