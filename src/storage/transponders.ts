// Transponders of a source (SPEC 15): prepared statements only, every statement scoped to a source,
// so a token of one source can never reach another source's transponder by id.
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

function toTransponder(r: TransponderRow): Transponder {
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

export type TransponderFields = Pick<
  Transponder,
  'name' | 'key' | 'paths' | 'expression' | 'response' | 'enabled' | 'order'
>;

/**
 * The enabled transponders of recent reads, per database and source: every read of a metric key
 * asks for them, and they change rarely. Any change through a repo of the same database clears
 * that database's entries (every statement that changes the table is in this file).
 */
const enabledCache = new WeakMap<Db, Map<string, readonly Transponder[]>>();
const ENABLED_CACHE_SOURCES = 1000;

export function createTranspondersRepo(db: Db) {
  let cache = enabledCache.get(db);
  if (!cache) {
    cache = new Map();
    enabledCache.set(db, cache);
  }
  const cached = cache;
  const list = db.prepare<[string], TransponderRow>(
    'SELECT * FROM transponders WHERE source_id = ? ORDER BY position, inserted_at, id',
  );
  const enabled = db.prepare<[string], TransponderRow>(
    'SELECT * FROM transponders WHERE source_id = ? AND enabled = 1 ORDER BY position, inserted_at, id',
  );
  const byId = db.prepare<[string, string], TransponderRow>(
    'SELECT * FROM transponders WHERE id = ? AND source_id = ?',
  );
  const lastPosition = db.prepare<[string], { p: number | null }>(
    'SELECT MAX(position) AS p FROM transponders WHERE source_id = ?',
  );
  const insert = db.prepare(
    `INSERT INTO transponders (id, organization_id, source_type, source_id, name, key, paths, expression, response, enabled, position, inserted_at, updated_at)
     VALUES (@id, @organization_id, @source_type, @source_id, @name, @key, @paths, @expression, @response, @enabled, @position, @inserted_at, @updated_at)`,
  );
  const update = db.prepare(
    `UPDATE transponders SET name = @name, key = @key, paths = @paths, expression = @expression, response = @response,
       enabled = @enabled, position = @position, updated_at = @updated_at WHERE id = @id AND source_id = @source_id`,
  );
  const remove = db.prepare<[string, string]>('DELETE FROM transponders WHERE id = ? AND source_id = ?');
  const row = (t: Transponder): TransponderRow => ({
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
  });

  return {
    list: (sourceId: string): Transponder[] => list.all(sourceId).map(toTransponder),
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
    get(sourceId: string, id: string): Transponder | null {
      const r = byId.get(id, sourceId);
      return r ? toTransponder(r) : null;
    },
    nextOrder: (sourceId: string): number => (lastPosition.get(sourceId)?.p ?? 0) + 1,
    insert(t: Transponder): void {
      insert.run(row(t));
      cached.clear();
    },
    update(t: Transponder): void {
      update.run(row(t));
      cached.clear();
    },
    remove(sourceId: string, id: string): void {
      remove.run(id, sourceId);
      cached.clear();
    },
  };
}

export type TranspondersRepo = ReturnType<typeof createTranspondersRepo>;
