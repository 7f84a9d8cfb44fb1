// A scratch PostgreSQL database migrated to this build's service schema, with the control plane's
// store over it: what the PostgreSQL repositories (src/storage/pg/*.ts) are tested against.
import net from 'node:net';
import { SERVERS, scratchDatabase, skipReason } from '../drivers/network';
import type { Source } from '../../src/domain/types';
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

/** A TCP proxy to the local PostgreSQL that can cut or stall its connections (one per "node"). */
export interface DatabaseProxy {
  port: number;
  /** connections destroyed, new ones refused: the database is gone for this node */
  cut(): void;
  /** nothing goes through any more, without an error: packets lost on the way */
  stall(): void;
  /** after a stall: what was held back goes through */
  resume(): void;
}

export async function proxyToDatabase(): Promise<DatabaseProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let stalled = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(SERVERS.postgres.port, SERVERS.postgres.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    for (const s of pair) {
      s.on('error', () => undefined);
      s.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    upstream.pipe(client);
    if (stalled) for (const s of pair) s.pause();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const each = (fn: (s: net.Socket) => void) => {
    for (const pair of pairs) pair.forEach(fn);
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      server.close();
      each((s) => s.destroy());
    },
    stall() {
      stalled = true;
      each((s) => s.pause());
    },
    resume() {
      stalled = false;
      each((s) => s.resume());
    },
  };
}

/** A project source row for repository tests (organization `org-a`). */
export function testSource(id: string, patch: Partial<Source> = {}): Source {
  return {
    id,
    organizationId: 'org-a',
    type: 'project',
    displayName: `Source ${id}`,
    driver: null,
    timeZone: 'UTC',
    beginningOfWeek: 1,
    granularities: ['1m', '1h', '1d'],
    defaultTimeframe: '24h',
    defaultGranularity: '1h',
    expireAfter: null,
    retention: null,
    projectClusterId: null,
    config: {},
    setupStatus: null,
    createdAt: 1000,
    ...patch,
  };
}
