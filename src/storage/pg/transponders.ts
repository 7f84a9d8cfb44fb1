// The transponders repository on PostgreSQL (cluster mode): the same methods and rows as
// ../transponders.ts, in PostgreSQL's dialect, and the metrics engine's cache of enabled
// transponders over the same database (createPgEnabledTransponders).
//
// insert: one transaction that locks the source row (FOR NO KEY UPDATE, in its organization), so
// two inserts of one source, on any nodes, take distinct orders (last + 1 read under the lock), and
// a source being deleted is waited for and then nothing is inserted. FOR NO KEY UPDATE leaves the
// foreign-key checks of other tables' inserts (FOR KEY SHARE) free to run meanwhile.
//
// update: the transponder row read FOR NO KEY UPDATE and what the caller makes of it written in
// the same transaction, so of two changes on any nodes the second is made of the row the first
// wrote.
//
// The engine's cache: the SQLite one answers `enabled` by reading its own file synchronously;
// here a read is a round trip, so the engine awaits `prefetch(sourceId)` first (one load per
// source and CLUSTER_CACHE_TTL_MS, shared by concurrent reads), and `enabled` then answers from
// memory. Every write of this repository on this node makes every entry stale at once (the next
// prefetch loads again), as the SQLite repository clears its cache; each also sends
// `transponders:<source id>` in its own transaction (./changes.ts), on which every node makes that
// source's entry stale (and on `source:<id>`: a removed source's transponders went with it). The
// TTL stays as the safety net (docs/cluster.md, "Caches that assumed one writer"): a change
// through another node is seen within it while the node's listening connection is down.
import type { PgStore } from './client';
import {
  changedTransponder,
  ENABLED_CACHE_SOURCES,
  toTransponder,
  transponderRow,
  type EnabledTransponders,
  type Transponder,
  type TransponderChange,
  type TransponderRow,
  type TranspondersRepo,
} from '../transponders';
import { CLUSTER_CACHE_TTL_MS } from '../../lib/expiring-cache';
import { notifyChange, notifySql } from './changes';
import { unavailable } from '../../errors';

/** How long an entry stays for `enabled` after its load (it is loaded again after the TTL). */
const KEEP_MS = 60_000;

interface Loaded {
  list: readonly Transponder[];
  /** the rows as loaded: an unchanged reload keeps `list` (the same object) */
  text: string;
  /** when the load started (performance.now()) */
  at: number;
  generation: number;
  /** a change of the source was announced after this load started: loaded again by the next prefetch */
  stale: boolean;
}

interface Loading {
  generation: number;
  promise: Promise<void>;
  /** a change of the source was announced meanwhile: not shared with later prefetches, kept stale */
  dropped: boolean;
}

/** The cache's state, one per store (database): shared by the engine's reader and the repository. */
interface EnabledState {
  /** +1 on every write through a repository of this store: older entries are stale */
  generation: number;
  entries: Map<string, Loaded>;
  loading: Map<string, Loading>;
}

const states = new WeakMap<PgStore, EnabledState>();

function stateOf(store: PgStore): EnabledState {
  let state = states.get(store);
  if (!state) {
    const created: EnabledState = { generation: 0, entries: new Map(), loading: new Map() };
    state = created;
    states.set(store, state);
    store.changes()?.subscribe({
      change(kind, id) {
        if (kind !== 'transponders' && kind !== 'source') return;
        const entry = created.entries.get(id);
        if (entry) entry.stale = true;
        const pending = created.loading.get(id);
        if (pending) pending.dropped = true;
      },
      reset() {
        created.generation++;
      },
    });
  }
  return state;
}

const ENABLED = `SELECT * FROM transponders WHERE source_id = $1 AND enabled = 1
  ORDER BY position, inserted_at, id COLLATE "C"`;

/**
 * The enabled transponders of a source, in order, for the metrics engine's read path: await
 * `prefetch(sourceId)` (when it returns a promise), then call `enabled(sourceId)`.
 */
export function createPgEnabledTransponders(
  store: PgStore,
  ttlMs = CLUSTER_CACHE_TTL_MS,
  now: () => number = () => performance.now(),
): EnabledTransponders {
  const state = stateOf(store);
  const { entries, loading } = state;

  /** Room for one more source: entries not loaded for KEEP_MS go (no read in progress needs them). */
  function makeRoom(): void {
    if (entries.size < ENABLED_CACHE_SOURCES) return;
    const old = now() - KEEP_MS;
    for (const [id, entry] of entries) if (entry.at < old) entries.delete(id);
  }

  function load(sourceId: string): Promise<void> {
    const generation = state.generation;
    const at = now();
    const record: Loading = { generation, promise: Promise.resolve(), dropped: false };
    record.promise = store.rows<TransponderRow>(ENABLED, [sourceId]).then(
      (rows) => {
        if (loading.get(sourceId) === record) loading.delete(sourceId);
        const previous = entries.get(sourceId);
        // A load that ends after a newer one (or after a write's newer load) is not kept.
        if (previous && (previous.generation > generation || previous.at > at)) return;
        const text = JSON.stringify(rows);
        const list = previous && previous.text === text ? previous.list : rows.map(toTransponder);
        if (!previous) makeRoom();
        // dropped: kept for the reads that awaited it, loaded again by the next prefetch
        entries.set(sourceId, { list, text, at, generation, stale: record.dropped });
      },
      (err: unknown) => {
        if (loading.get(sourceId) === record) loading.delete(sourceId);
        throw err;
      },
    );
    loading.set(sourceId, record);
    return record.promise;
  }

  return {
    prefetch(sourceId: string): Promise<void> | undefined {
      const entry = entries.get(sourceId);
      if (entry && !entry.stale && entry.generation === state.generation && now() - entry.at < ttlMs)
        return undefined;
      const pending = loading.get(sourceId);
      if (pending && !pending.dropped && pending.generation === state.generation) return pending.promise;
      return load(sourceId);
    },
    /**
     * The list of the last load (a write since then made it stale for the next prefetch, not for a
     * read already under way). A source never prefetched (or dropped after KEEP_MS) has none: 503.
     */
    enabled(sourceId: string): readonly Transponder[] {
      const entry = entries.get(sourceId);
      if (!entry) throw unavailable('The transponders of the source are not loaded, retry', 1);
      return entry.list;
    },
  };
}

export function createPgTranspondersRepo(store: PgStore): TranspondersRepo {
  const state = stateOf(store);
  /** every entry of the engine's cache stale: the next prefetch of each source loads again */
  const changed = (): void => {
    state.generation++;
  };
  const params = (r: TransponderRow): unknown[] => [
    r.id,
    r.organization_id,
    r.source_type,
    r.source_id,
    r.name,
    r.key,
    r.paths,
    r.expression,
    r.response,
    r.enabled,
    r.position,
    r.inserted_at,
    r.updated_at,
  ];

  return {
    list: async (sourceId: string): Promise<Transponder[]> =>
      (
        await store.rows<TransponderRow>(
          'SELECT * FROM transponders WHERE source_id = $1 ORDER BY position, inserted_at, id COLLATE "C"',
          [sourceId],
        )
      ).map(toTransponder),
    async get(sourceId: string, id: string): Promise<Transponder | null> {
      const r = await store.one<TransponderRow>(
        'SELECT * FROM transponders WHERE id = $1 AND source_id = $2',
        [id, sourceId],
      );
      return r ? toTransponder(r) : null;
    },
    async insert(t: Transponder, atEnd: boolean): Promise<Transponder | null> {
      const stored = await store.tx(async (sql) => {
        const source = await sql.one(
          'SELECT 1 FROM sources WHERE id = $1 AND organization_id = $2 FOR NO KEY UPDATE',
          [t.sourceId, t.organizationId],
        );
        if (!source) return null;
        let next = t;
        if (atEnd) {
          const last = await sql.one<{ p: number | null }>(
            'SELECT MAX(position) AS p FROM transponders WHERE source_id = $1',
            [t.sourceId],
          );
          next = { ...t, order: (last?.p ?? 0) + 1 };
        }
        await sql.run(
          `INSERT INTO transponders (id, organization_id, source_type, source_id, name, key, paths, expression,
             response, enabled, position, inserted_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
          params(transponderRow(next)),
        );
        await notifyChange(sql, 'transponders', t.sourceId);
        return next;
      });
      if (stored) changed();
      return stored;
    },
    async update(sourceId: string, id: string, change: TransponderChange): Promise<Transponder | null> {
      const stored = await store.tx(async (sql) => {
        const r = await sql.one<TransponderRow>(
          'SELECT * FROM transponders WHERE id = $1 AND source_id = $2 FOR NO KEY UPDATE',
          [id, sourceId],
        );
        if (!r) return null;
        const next = changedTransponder(r, id, sourceId, change);
        const w = transponderRow(next);
        await sql.run(
          `UPDATE transponders SET name = $3, key = $4, paths = $5, expression = $6, response = $7, enabled = $8,
             position = $9, updated_at = $10 WHERE id = $1 AND source_id = $2`,
          [
            w.id,
            w.source_id,
            w.name,
            w.key,
            w.paths,
            w.expression,
            w.response,
            w.enabled,
            w.position,
            w.updated_at,
          ],
        );
        await notifyChange(sql, 'transponders', sourceId);
        return next;
      });
      if (stored) changed();
      return stored;
    },
    async remove(sourceId: string, id: string): Promise<boolean> {
      const count = await store.run(
        `WITH gone AS (DELETE FROM transponders WHERE id = $1 AND source_id = $2 RETURNING source_id)
         SELECT ${notifySql('transponders', 'source_id')} FROM gone`,
        [id, sourceId],
      );
      changed();
      return count > 0;
    },
  };
}
