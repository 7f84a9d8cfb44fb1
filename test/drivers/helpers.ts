// Shared by the driver suites: stores on temp dirs and a compact way to write write sets.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createEmbeddedStore } from '../../src/drivers/embedded/store';
import type { BucketCacheLimits } from '../../src/drivers/embedded/bucket-cache';
import { inProcessWriter } from '../../src/drivers/embedded/writer-client';
import { createSqliteStore } from '../../src/drivers/sqlite/store';
import type { IdentifierMode } from '../../src/drivers/sqlite/setup';
import { emptyWriteSet, type BucketOps, type WriteSetStore, type WriteSet } from '../../src/drivers/types';

export interface StoreFixture {
  name: string;
  store: WriteSetStore;
  dir: string;
  /** sqlite stores: the source file */
  file?: string;
  /** embedded: the service database */
  db?: Db;
  dispose(): void | Promise<void>;
}

export interface Factory {
  name: string;
  create(options?: { timeZone?: string }): StoreFixture | Promise<StoreFixture>;
  /** a reason to skip the suite (server not reachable), printed by network.ts */
  skip?: string | false;
  /** why the large-volume cases are skipped (an in-process stand-in server too slow for them) */
  skipVolume?: string;
  /** removes what the factory created for all its fixtures (scratch databases, servers) */
  finish?(): Promise<void>;
  /** the raw-client connection of the current fixture (library-format fixtures) */
}

/** The local stores open synchronously. */
export interface LocalFactory extends Factory {
  create(options?: { timeZone?: string }): StoreFixture;
}

function tempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'driver-test-'));
}

/**
 * The embedded store over a database, with its metric writer in this thread. The contract suite
 * writes merged write sets: they go to the writer, which folds each in one transaction (the
 * store's own door, `commit`, takes points).
 */
export function embeddedStore(
  db: Db,
  cacheLimits?: BucketCacheLimits,
): { store: WriteSetStore; close(): Promise<void> } {
  const writer = inProcessWriter({ db, cacheLimits });
  const embedded = createEmbeddedStore(db, writer);
  const store: WriteSetStore = {
    kind: embedded.kind,
    setup: () => embedded.setup(),
    apply: (writes) => writer.apply(writes),
    read: (series, starts) => embedded.read(series, starts),
    close: () => embedded.close(),
  };
  return { store, close: () => writer.close().then(() => store.close()) };
}

export const embeddedFactory: LocalFactory = {
  name: 'embedded',
  create() {
    const dir = tempDir();
    const db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
    const { store, close } = embeddedStore(db);
    return {
      name: 'embedded',
      store,
      dir,
      db,
      async dispose() {
        await close();
        db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};

export function sqliteFactory(mode: IdentifierMode): LocalFactory {
  return {
    name: `sqlite (${mode})`,
    create(options = {}) {
      const dir = tempDir();
      const file = path.join(dir, 'sources', 'stats.sqlite');
      const store = createSqliteStore({ file, mode, timeZone: options.timeZone });
      return {
        name: `sqlite (${mode})`,
        store,
        dir,
        file,
        dispose() {
          store.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  };
}

export interface Op {
  key: string;
  granularity: string;
  at: number;
  add?: Record<string, number>;
  set?: Record<string, number>;
  sourceId?: string;
}

/** A write set from a flat list of bucket operations (source `s1` unless given). */
export function writeSet(ops: Op[]): WriteSet {
  const writes = emptyWriteSet();
  for (const op of ops) {
    const sourceId = op.sourceId ?? 's1';
    let keys = writes.sources.get(sourceId);
    if (!keys) writes.sources.set(sourceId, (keys = new Map()));
    let grans = keys.get(op.key);
    if (!grans) keys.set(op.key, (grans = new Map()));
    let buckets = grans.get(op.granularity);
    if (!buckets) grans.set(op.granularity, (buckets = new Map()));
    const bucket: BucketOps = {
      add: new Map(Object.entries(op.add ?? {})),
      set: op.set ? new Map(Object.entries(op.set)) : null,
    };
    buckets.set(op.at, bucket);
  }
  return writes;
}

/** Reads one series and parses each bucket. */
export async function readParsed(
  store: Pick<WriteSetStore, 'read'>,
  key: string,
  granularity: string,
  starts: number[],
  sourceId = 's1',
): Promise<unknown[]> {
  return (await store.read({ sourceId, key, granularity }, starts)).map((text) => JSON.parse(text));
}
