// A scratch PostgreSQL database migrated to this build's service schema, with the control plane's
// store over it: what the PostgreSQL repositories (src/storage/pg/*.ts) are tested against.
import { SERVERS, scratchDatabase, skipReason } from '../drivers/network';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { migratePostgres } from '../../src/storage/pg/migrations';

/** false when the local PostgreSQL answers, else why the suite skips. */
export const pgSkip = () => skipReason('postgres');

export const pgUrl = (database: string) =>
  `postgres://${SERVERS.postgres.user}@${SERVERS.postgres.host}:${SERVERS.postgres.port}/${database}`;

export interface ScratchStore {
  url: string;
  store: PgStore;
  /** closes the store and drops the database */
  drop(): Promise<void>;
}

export async function scratchPgStore(): Promise<ScratchStore> {
  const db = await scratchDatabase('postgres');
  const url = pgUrl(db.name);
  await migratePostgres(url);
  const store = createPgStore(url);
  return {
    url,
    store,
    async drop() {
      await store.close().catch(() => undefined);
      await db.drop();
    },
  };
}
