// The metrics read path's cache of a source's enabled transponders in cluster mode (SPEC 15,
// docs/cluster.md part 3): the SQLite twin (storage/transponders.ts, createEnabledTransponders)
// reads the node's own service.db synchronously; here the rows are in PostgreSQL, so a read first
// awaits `ready(sourceId)` (one statement when the source's entry is missing or older than
// ENABLED_TTL_MS) and then asks `enabled` synchronously. This node's writes clear the cache at once
// (server.ts wraps the repository); another node's writes are seen within ENABLED_TTL_MS.
import type { PgStore } from './client';
import {
  toTransponder,
  type EnabledTransponders,
  type Transponder,
  type TransponderRow,
} from '../transponders';

/** How long a source's list is used before it is read again (another node may have changed it). */
export const ENABLED_TTL_MS = 2_000;
const ENABLED_CACHE_SOURCES = 1000;

const ENABLED_SQL =
  'SELECT * FROM transponders WHERE source_id = $1 AND enabled = 1 ORDER BY position, inserted_at, id COLLATE "C"';

export interface PgEnabledTransponders extends EnabledTransponders {
  ready(sourceId: string): Promise<void> | undefined;
  /** forgets every list (a write of this node) */
  clear(): void;
}

export function createPgEnabledTransponders(
  store: PgStore,
  now: () => number = () => performance.now(),
): PgEnabledTransponders {
  const cached = new Map<string, { list: readonly Transponder[]; at: number }>();
  const loading = new Map<string, Promise<void>>();
  let generation = 0;

  function load(sourceId: string): Promise<void> {
    const from = generation;
    const started = now();
    const done = store
      .rows<TransponderRow>(ENABLED_SQL, [sourceId])
      .then((rows) => {
        if (cached.size >= ENABLED_CACHE_SOURCES) cached.clear();
        // a write of this node since the read started: this read uses the list, the next reads again
        const at = from === generation ? started : -Infinity;
        cached.set(sourceId, { list: Object.freeze(rows.map(toTransponder)), at });
      })
      .finally(() => loading.delete(sourceId));
    loading.set(sourceId, done);
    return done;
  }

  return {
    ready(sourceId) {
      const entry = cached.get(sourceId);
      if (entry && now() - entry.at < ENABLED_TTL_MS) return undefined;
      return loading.get(sourceId) ?? load(sourceId);
    },
    enabled: (sourceId) => cached.get(sourceId)?.list ?? [],
    clear() {
      generation++;
      cached.clear();
    },
  };
}
