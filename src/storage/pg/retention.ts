// The retention sweep's list of projects with rules in cluster mode: the sources table is in
// PostgreSQL (the sweep's own SQLite connection reads service.db's, storage/retention-sweep.ts).
import type { PgStore } from './client';
import type { RuleSourceRow } from '../retention-sweep';

export function createPgRuleSources(store: PgStore): () => Promise<RuleSourceRow[]> {
  return () =>
    store.rows<RuleSourceRow>(
      `SELECT id, time_zone, expire_after, retention FROM sources
       WHERE type = 'project' AND (expire_after IS NOT NULL OR retention IS NOT NULL)`,
    );
}
