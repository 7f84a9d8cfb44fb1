// Transponders of a source (SPEC 15): prepared statements only, every statement scoped to a source,
// so a token of one source can never reach another source's transponder by id.
//
// The repository (createTranspondersRepo) answers with promises (docs/cluster.md, "Step 1 as
// built"): a new transponder is inserted only while its source is there, with its position (last
// + 1 unless an order was given) taken in the same transaction; a change reads the transponder
// and writes what the caller makes of that row in one transaction, so of two changes at once the
// second is made of the row the first wrote. The metrics read path does not go
// through it: every read of a metric key asks createEnabledTransponders' node-local cache, which
// stays synchronous (no round trip, no extra await on the hot path) and is cleared by every write
// of the repository.
import type { Db } from './db';
import type { SourceType } from '../model/source';

export interface TransponderRow {
  id: string;
  organization_id: string;
  source_type: SourceType;
  source_id: string;
  name: string;
  key: string;
  paths: string;
  expression: string;
  response: string;
  enabled: number;
  position: number;
  inserted_at: number;
  updated_at: number;
}

export interface Transponder {
  id: string;
  organizationId: string;
  sourceType: SourceType;
  sourceId: string;
  name: string;
  key: string;
  paths: string[];
  expression: string;
  response: string;
  enabled: boolean;
  order: number;
  insertedAt: number;
  updatedAt: number;
}

/**
 * A stored transponder after `change`: what the change gives, but never another id, source,
 * organization, source type or creation time than the row's (the update units of both databases).
 */
export function changedTransponder(
  r: TransponderRow,
  id: string,
  sourceId: string,
  change: (current: Transponder) => Transponder,
): Transponder {
  return {
    ...change(toTransponder(r)),
    id,
    sourceId,
    organizationId: r.organization_id,
    sourceType: r.source_type,
    insertedAt: r.inserted_at,
  };
}

export function toTransponder(r: TransponderRow): Transponder {
  let paths: string[] = [];
  try {
    const parsed: unknown = JSON.parse(r.paths);
    if (Array.isArray(parsed)) paths = parsed.filter((p): p is string => typeof p === 'string');
  } catch {
    // a damaged row reads as no paths: the transponder then fails at read time and is reported
  }
  return {
    id: r.id,
    organizationId: r.organization_id,
    sourceType: r.source_type,
    sourceId: r.source_id,
    name: r.name,
    key: r.key,
    paths,
    expression: r.expression,
    response: r.response,
    enabled: r.enabled === 1,
    order: r.position,
    insertedAt: r.inserted_at,
    updatedAt: r.updated_at,
  };
}

export function transponderRow(t: Transponder): TransponderRow {
  return {
    id: t.id,
    organization_id: t.organizationId,
    source_type: t.sourceType,
    source_id: t.sourceId,
    name: t.name,
    key: t.key,
    paths: JSON.stringify(t.paths),
    expression: t.expression,
    response: t.response,
    enabled: t.enabled ? 1 : 0,
    position: t.order,
    inserted_at: t.insertedAt,
    updated_at: t.updatedAt,
  };
}

export type TransponderFields = Pick<
  Transponder,
  'name' | 'key' | 'paths' | 'expression' | 'response' | 'enabled' | 'order'
>;

/**
 * A change of a transponder: the transponder to store, made of the transponder as read inside the
 * change's transaction. Synchronous, with no effects outside what it answers (PostgreSQL may run
 * it again after a deadlock); an error it throws comes out of update, nothing written. Only its
 * fields (TransponderFields) and updatedAt are written.
 */
export type TransponderChange = (current: Transponder) => Transponder;

/**
 * The enabled transponders of recent reads, per database and source: every read of a metric key
 * asks for them, and they change rarely. Any change through a repo of the same database clears
 * that database's entries (every statement that changes the table is in this file; a source's
 * delete, which cascades to its transponders, leaves entries no read asks for again).
 */
const enabledCache = new WeakMap<Db, Map<string, readonly Transponder[]>>();
export const ENABLED_CACHE_SOURCES = 1000;

function cacheOf(db: Db): Map<string, readonly Transponder[]> {
  let cache = enabledCache.get(db);
  if (!cache) {
    cache = new Map();
    enabledCache.set(db, cache);
  }
  return cache;
}

/**
 * The metrics engine's view of the enabled transponders: `enabled` answers synchronously (no round
 * trip, no extra await per read; the engine's answer cache compares the list by identity). A cache
 * that loads over the network (PostgreSQL's, storage/pg/transponders.ts) is made ready first by
 * awaiting `prefetch`; SQLite's reads its own file inside `enabled` and needs none.
 */
export interface EnabledTransponders {
  /** the enabled ones, in order: what a read applies (not to be mutated) */
  enabled(sourceId: string): readonly Transponder[];
  /** undefined when `enabled(sourceId)` can answer now, else a promise to await before calling it */
  prefetch(sourceId: string): Promise<void> | undefined;
}

/** The enabled transponders of a source, in order, from the node's cache (the metrics engine's read path). */
export function createEnabledTransponders(db: Db): EnabledTransponders {
  const cached = cacheOf(db);
  const enabled = db.prepare<[string], TransponderRow>(
    'SELECT * FROM transponders WHERE source_id = ? AND enabled = 1 ORDER BY position, inserted_at, id',
  );
  return {
    prefetch: () => undefined,
    /** the enabled ones, in order: what a read applies (kept until a change; not to be mutated) */
    enabled(sourceId: string): readonly Transponder[] {
      let found = cached.get(sourceId);
      if (!found) {
        found = enabled.all(sourceId).map(toTransponder);
        if (cached.size >= ENABLED_CACHE_SOURCES) cached.clear();
        cached.set(sourceId, found);
      }
      return found;
    },
  };
}

export function createTranspondersRepo(db: Db) {
  const cached = cacheOf(db);
  const list = db.prepare<[string], TransponderRow>(
    'SELECT * FROM transponders WHERE source_id = ? ORDER BY position, inserted_at, id',
  );
  const byId = db.prepare<[string, string], TransponderRow>(
    'SELECT * FROM transponders WHERE id = ? AND source_id = ?',
  );
  const lastPosition = db.prepare<[string], { p: number | null }>(
    'SELECT MAX(position) AS p FROM transponders WHERE source_id = ?',
  );
  // Inserted only while its source is there (in its organization): else no row and no foreign-key error.
  const insert = db.prepare(
    `INSERT INTO transponders (id, organization_id, source_type, source_id, name, key, paths, expression, response, enabled, position, inserted_at, updated_at)
     SELECT @id, @organization_id, @source_type, @source_id, @name, @key, @paths, @expression, @response, @enabled, @position, @inserted_at, @updated_at
     WHERE EXISTS (SELECT 1 FROM sources WHERE id = @source_id AND organization_id = @organization_id)`,
  );
  const update = db.prepare(
    `UPDATE transponders SET name = @name, key = @key, paths = @paths, expression = @expression, response = @response,
       enabled = @enabled, position = @position, updated_at = @updated_at WHERE id = @id AND source_id = @source_id`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM transponders WHERE id = ? AND source_id = ?');
  const row = transponderRow;
  const nextOrder = (sourceId: string): number => (lastPosition.get(sourceId)?.p ?? 0) + 1;
  /** One IMMEDIATE transaction: what it reads still holds when it writes. */
  const atomically = <T>(fn: () => T): T => db.transaction(fn).immediate();

  return {
    list: async (sourceId: string): Promise<Transponder[]> => list.all(sourceId).map(toTransponder),
    async get(sourceId: string, id: string): Promise<Transponder | null> {
      const r = byId.get(id, sourceId);
      return r ? toTransponder(r) : null;
    },
    /**
     * Inserts `t` while its source is there; `atEnd` places it last (its order the source's last + 1,
     * read in the same transaction). The transponder as stored, or null (nothing written) when the
     * source is gone.
     */
    insert: async (t: Transponder, atEnd: boolean): Promise<Transponder | null> =>
      atomically(() => {
        const stored = atEnd ? { ...t, order: nextOrder(t.sourceId) } : t;
        if (insert.run(row(stored)).changes === 0) return null;
        cached.clear();
        return stored;
      }),
    /**
     * Atomic: the transponder read and `change`'s answer for it written in one IMMEDIATE
     * transaction. The transponder as stored, or null when it is gone (deleted since it was read):
     * nothing written.
     */
    async update(sourceId: string, id: string, change: TransponderChange): Promise<Transponder | null> {
      const stored = atomically(() => {
        const r = byId.get(id, sourceId);
        if (!r) return null;
        const next = changedTransponder(r, id, sourceId, change);
        update.run(row(next));
        return next;
      });
      if (stored) cached.clear();
      return stored;
    },
    /** False when the transponder was already gone. */
    async remove(sourceId: string, id: string): Promise<boolean> {
      const removed = remove.run(id, sourceId).changes > 0;
      cached.clear();
      return removed;
    },
  };
}

export type TranspondersRepo = ReturnType<typeof createTranspondersRepo>;
