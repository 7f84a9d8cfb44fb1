// Which store holds a source's metrics: the embedded store (one, in service.db) for projects, a
// Trifle::Stats sqlite file for sqlite database sources. Open sqlite handles are cached per source
// and closed on shutdown. Other drivers are recorded by bootstrap but have no store yet.
import { conflict } from '../errors';
import type { Db } from '../storage/db';
import type { Source } from '../domain/types';
import { IDENTIFIER_MODES, type IdentifierMode } from '../domain/sqlite-setup';
import { createEmbeddedStore } from './embedded';
import { createSqliteStore } from './sqlite';
import type { MetricStore } from './types';

export interface DriverContext {
  /** the service's own database, home of the embedded store */
  db: Db;
  /** better-sqlite3 native binding for the single executable */
  nativeBinding?: unknown;
}

export interface DriverRegistry {
  /** The store of a source; throws 409 for drivers without a store. */
  storeFor(source: Source): MetricStore;
  close(): void;
}

interface CachedSqlite {
  file: string;
  mode: IdentifierMode;
  store: MetricStore;
}

function identifierMode(source: Source): IdentifierMode {
  const mode = source.config.identifier_mode;
  return IDENTIFIER_MODES.find((m) => m === mode) ?? 'full';
}

function sqliteFile(source: Source): string {
  const file = source.config.file_path;
  if (typeof file !== 'string' || file === '') throw conflict('The database source has no file_path');
  return file;
}

export function createDriverRegistry(ctx: DriverContext): DriverRegistry {
  const embedded = createEmbeddedStore(ctx.db);
  const sqlite = new Map<string, CachedSqlite>();

  function sqliteStore(source: Source): MetricStore {
    const file = sqliteFile(source);
    const mode = identifierMode(source);
    const cached = sqlite.get(source.id);
    if (cached && cached.file === file && cached.mode === mode) return cached.store;
    cached?.store.close();
    const store = createSqliteStore({ file, mode, nativeBinding: ctx.nativeBinding });
    sqlite.set(source.id, { file, mode, store });
    return store;
  }

  return {
    storeFor(source: Source): MetricStore {
      if (source.type === 'project') return embedded;
      if (source.driver === 'sqlite') return sqliteStore(source);
      throw conflict(`driver ${source.driver ?? 'unknown'} is not yet supported`);
    },
    close(): void {
      for (const { store } of sqlite.values()) store.close();
      sqlite.clear();
      embedded.close();
    },
  };
}

/** The store of one source, for callers without a registry (one-off tools and tests). */
export function openDriverForSource(source: Source, ctx: DriverContext): MetricStore {
  if (source.type === 'project') return createEmbeddedStore(ctx.db);
  if (source.driver === 'sqlite') {
    return createSqliteStore({ file: sqliteFile(source), mode: identifierMode(source), nativeBinding: ctx.nativeBinding });
  }
  throw conflict(`driver ${source.driver ?? 'unknown'} is not yet supported`);
}
