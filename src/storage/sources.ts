// Sources (projects and databases) and source tokens.
//
// Every metrics request authenticates with a source token and needs its source, so both are
// cached in memory (bounded, keyed by token hash and source id; no token value is ever held).
// Token rows are never updated; a revoked one is deleted by deleteToken, which drops its cached
// copy. A source changes only through setSetupStatus, setConfig, updateSettings and remove here,
// which drop the cached copy too (remove also drops its tokens' cached rows). A source edit added
// later must drop its entries the same way.
//
// updateSettings is one IMMEDIATE transaction that reads the source and writes the change the
// caller makes of that row (docs/cluster.md, "Step 1 as built"): of two edits at once, the second
// is made of the row the first wrote, so each keeps the other's fields.
import { BoundedCache } from '../lib/bounded-cache';
import type { Db } from './db';
import { SYSTEM_KEY } from '../model/write-set';
import type { Driver, Source, SourceType } from '../model/source';

export interface SourceRow {
  id: string;
  organization_id: string;
  type: SourceType;
  display_name: string;
  driver: Driver | null;
  time_zone: string;
  beginning_of_week: number;
  granularities: string;
  default_timeframe: string;
  default_granularity: string;
  expire_after: number | null;
  retention: string | null;
  project_cluster_id: string | null;
  config: string;
  setup_status: string | null;
  created_at: number;
}

export interface SourceTokenRow {
  id: string;
  source_id: string;
  organization_id: string;
  user_id: string;
  name: string;
  token_hash: string;
  last5: string;
  can_read: number;
  can_write: number;
  created_at: number;
}

export function toSource(r: SourceRow): Source {
  return {
    id: r.id,
    organizationId: r.organization_id,
    type: r.type,
    displayName: r.display_name,
    driver: r.driver,
    timeZone: r.time_zone,
    beginningOfWeek: r.beginning_of_week,
    granularities: r.granularities.split(','),
    defaultTimeframe: r.default_timeframe,
    defaultGranularity: r.default_granularity,
    expireAfter: r.expire_after,
    retention: r.retention === null ? null : (JSON.parse(r.retention) as Record<string, string>),
    projectClusterId: r.project_cluster_id,
    config: JSON.parse(r.config) as Record<string, unknown>,
    setupStatus: r.setup_status,
    createdAt: r.created_at,
  };
}

export const SOURCE_CACHE_LIMIT = 10_000;

/**
 * A settings edit's change: the source to store, made of the source as read inside the edit's
 * transaction (its editable settings are written, every other column stays), or null to write
 * nothing. It runs inside the transaction, so it is synchronous, has no effects outside what it
 * answers, and may run more than once (PostgreSQL runs a transaction again after a deadlock). An
 * error it throws comes out of updateSettings, nothing written.
 */
export type SettingsChange = (current: Source) => Source | null;

/** What updateSettings did: the source as it read it, and what it wrote (null: nothing). */
export interface SettingsEdit {
  read: Source;
  written: Source | null;
}

/** The editable settings of a source as the settings update's parameters (named as in SQLite's). */
export function settingsParams(id: string, s: Source) {
  return {
    id,
    display_name: s.displayName,
    time_zone: s.timeZone,
    beginning_of_week: s.beginningOfWeek,
    granularities: s.granularities.join(','),
    default_timeframe: s.defaultTimeframe,
    default_granularity: s.defaultGranularity,
    expire_after: s.expireAfter,
    retention: s.retention ? JSON.stringify(s.retention) : null,
  };
}

/** A cached source is shared by concurrent requests: frozen, so no caller can change it for the others. */
export function frozenSource(source: Source): Source {
  Object.freeze(source.granularities);
  Object.freeze(source.config);
  return Object.freeze(source);
}

export function createSourcesRepo(db: Db, cacheLimit = SOURCE_CACHE_LIMIT) {
  const tokens = new BoundedCache<string, SourceTokenRow>(cacheLimit);
  const sources = new BoundedCache<string, Source>(cacheLimit);
  const q = {
    insert: db.prepare(
      `INSERT INTO sources (id, organization_id, type, display_name, driver, time_zone, beginning_of_week, granularities,
        default_timeframe, default_granularity, expire_after, retention, project_cluster_id, config, setup_status, created_at)
       VALUES (@id, @organization_id, @type, @display_name, @driver, @time_zone, @beginning_of_week, @granularities,
        @default_timeframe, @default_granularity, @expire_after, @retention, @project_cluster_id, @config, @setup_status, @created_at)`,
    ),
    byId: db.prepare<[string], SourceRow>('SELECT * FROM sources WHERE id = ?'),
    byOrganization: db.prepare<[string, string], SourceRow>(
      'SELECT * FROM sources WHERE organization_id = ? AND type = ? ORDER BY created_at, id',
    ),
    setSetupStatus: db.prepare<[string, string]>('UPDATE sources SET setup_status = ? WHERE id = ?'),
    updateSettings: db.prepare(
      `UPDATE sources SET display_name = @display_name, time_zone = @time_zone, beginning_of_week = @beginning_of_week,
        granularities = @granularities, default_timeframe = @default_timeframe,
        default_granularity = @default_granularity, expire_after = @expire_after, retention = @retention
       WHERE id = @id`,
    ),
    // Tokens, dashboards (and their share links) and transponders go with it (ON DELETE CASCADE).
    remove: db.prepare<[string]>('DELETE FROM sources WHERE id = ?'),
    tokensBySource: db.prepare<[string], SourceTokenRow>('SELECT * FROM source_tokens WHERE source_id = ?'),
    dashboardsOf: db.prepare<[string], { id: string; name: string }>(
      'SELECT id, name FROM dashboards WHERE source_id = ? ORDER BY position, inserted_at, id',
    ),
    // Monitors keep their source in their JSON document (storage/monitors.ts); they are not removed.
    monitorsOf: db
      .prepare<[string], number>(
        `SELECT COUNT(*) FROM monitors WHERE json_extract(document, '$.sourceId') = ?`,
      )
      .pluck(),
    transpondersOf: db
      .prepare<[string], number>('SELECT COUNT(*) FROM transponders WHERE source_id = ?')
      .pluck(),
    seriesOf: db
      .prepare<[string], number>(
        `SELECT COUNT(DISTINCT key) FROM metric_series WHERE source_id = ? AND key <> '${SYSTEM_KEY}'`,
      )
      .pluck(),
    holdsData: db
      .prepare<[string], number>('SELECT EXISTS (SELECT 1 FROM metric_series WHERE source_id = ?)')
      .pluck(),
    insertToken: db.prepare(
      `INSERT INTO source_tokens (id, source_id, organization_id, user_id, name, token_hash, last5, can_read, can_write, created_at)
       SELECT @id, @source_id, @organization_id, @user_id, @name, @token_hash, @last5, @can_read, @can_write, @created_at
       WHERE EXISTS (SELECT 1 FROM sources WHERE id = @source_id AND organization_id = @organization_id AND type = @source_type)`,
    ),
    tokenByHash: db.prepare<[string], SourceTokenRow>('SELECT * FROM source_tokens WHERE token_hash = ?'),
    sqliteSources: db.prepare<[], SourceRow>(
      `SELECT * FROM sources WHERE type = 'database' AND driver = 'sqlite'`,
    ),
    setConfig: db.prepare<[string, string]>('UPDATE sources SET config = ? WHERE id = ?'),
    tokenById: db.prepare<[string], SourceTokenRow>('SELECT * FROM source_tokens WHERE id = ?'),
    tokensByOrganization: db.prepare<[string], SourceTokenRow>(
      'SELECT * FROM source_tokens WHERE organization_id = ? ORDER BY created_at, id LIMIT 1000',
    ),
    deleteToken: db.prepare<[string]>('DELETE FROM source_tokens WHERE id = ?'),
    otherDatabaseConfigs: db.prepare<[string, string], { config: string }>(
      "SELECT config FROM sources WHERE type = 'database' AND driver = ? AND organization_id <> ?",
    ),
    networkDatabaseCount: db
      .prepare<[string], number>(
        "SELECT COUNT(*) FROM sources WHERE organization_id = ? AND type = 'database' AND driver <> 'sqlite'",
      )
      .pluck(),
    sqliteFileOrganizations: db.prepare<[string], { organization_id: string }>(
      `SELECT DISTINCT organization_id FROM sources WHERE driver = 'sqlite' AND json_extract(config, '$.file_path') = ?`,
    ),
  };
  const insertSource = (s: Source): void => {
    q.insert.run({
      ...settingsParams(s.id, s),
      organization_id: s.organizationId,
      type: s.type,
      driver: s.driver,
      project_cluster_id: s.projectClusterId,
      config: JSON.stringify(s.config),
      setup_status: s.setupStatus,
      created_at: s.createdAt,
    });
  };
  /** One IMMEDIATE transaction: what it reads still holds when it writes. */
  const atomically = <T>(fn: () => T): T => db.transaction(fn).immediate();
  return {
    async insert(s: Source): Promise<void> {
      insertSource(s);
    },
    async byId(id: string): Promise<Source | undefined> {
      const row = q.byId.get(id);
      return row ? toSource(row) : undefined;
    },
    /** The source when it belongs to the organization; otherwise undefined (callers answer 404). */
    async inOrganization(id: string, organizationId: string): Promise<Source | undefined> {
      const row = q.byId.get(id);
      return row && row.organization_id === organizationId ? toSource(row) : undefined;
    },
    async listByOrganization(organizationId: string, type: SourceType): Promise<Source[]> {
      return q.byOrganization.all(organizationId, type).map(toSource);
    },
    /** Like byId, from the cache: a frozen object, shared with other callers. */
    async cachedById(id: string): Promise<Source | undefined> {
      return sources.getOrLoad(id, (key) => {
        const row = q.byId.get(key);
        return row ? frozenSource(toSource(row)) : undefined;
      });
    },
    async setSetupStatus(id: string, status: string): Promise<void> {
      q.setSetupStatus.run(status, id);
      sources.delete(id);
    },
    /**
     * PUT /bootstrap/projects/:id and PATCH /bootstrap/databases/:id: the editable settings. Atomic:
     * the source is read and `change`'s answer for it written in one IMMEDIATE transaction.
     * undefined when the source is gone (nothing written).
     */
    async updateSettings(id: string, change: SettingsChange): Promise<SettingsEdit | undefined> {
      const edit = atomically((): SettingsEdit | undefined => {
        const row = q.byId.get(id);
        if (!row) return undefined;
        const read = toSource(row);
        const written = change(toSource(row));
        if (written) q.updateSettings.run(settingsParams(id, written));
        return { read, written };
      });
      if (edit?.written) sources.delete(id);
      return edit;
    },
    /** Whether the embedded store holds any series of the source (pending points not counted). */
    holdsData: async (id: string): Promise<boolean> => q.holdsData.get(id) === 1,
    tokensBySource: async (id: string): Promise<SourceTokenRow[]> => q.tokensBySource.all(id),
    /** What goes with a source when it is removed (the confirmation names it); one read transaction. */
    dependents: async (id: string) =>
      db.transaction(() => ({
        dashboards: q.dashboardsOf.all(id),
        tokens: q.tokensBySource.all(id).length,
        transponders: q.transpondersOf.get(id) ?? 0,
        keys: q.seriesOf.get(id) ?? 0,
        monitors: q.monitorsOf.get(id) ?? 0,
      }))(),
    /**
     * Deletes the source row with what hangs on it (tokens, dashboards, share links, transponders);
     * its tokens stop working at once because their cached rows go too. Atomic: the tokens read
     * are exactly the ones the delete removes.
     */
    async remove(id: string): Promise<void> {
      const hashes = atomically(() => {
        const rows = q.tokensBySource.all(id).map((t) => t.token_hash);
        q.remove.run(id);
        return rows;
      });
      for (const hash of hashes) tokens.delete(hash);
      sources.delete(id);
    },
    /**
     * Atomic: inserts the token only while its source exists in its organization with the type the
     * caller checked (one statement); false when the source is gone.
     */
    insertToken: async (t: SourceTokenRow, sourceType: SourceType): Promise<boolean> =>
      q.insertToken.run({ ...t, source_type: sourceType }).changes > 0,
    /** The token row of a SHA-256 token hash (cached: the row never changes). */
    tokenByHash: async (hash: string): Promise<SourceTokenRow | undefined> =>
      tokens.getOrLoad(hash, (key) => {
        const row = q.tokenByHash.get(key);
        return row ? Object.freeze(row) : undefined;
      }),
    /** Every sqlite database source (the start-up migration of their files). */
    sqliteSources: async (): Promise<Source[]> => q.sqliteSources.all().map(toSource),
    /** Replaces a source's driver config (the start-up migration of sqlite files). */
    async setConfig(id: string, config: Record<string, unknown>): Promise<void> {
      q.setConfig.run(JSON.stringify(config), id);
      sources.delete(id);
    },
    tokenById: async (id: string): Promise<SourceTokenRow | undefined> => q.tokenById.get(id),
    /** The organization's source tokens, oldest first (at most 1,000). */
    tokensByOrganization: async (organizationId: string): Promise<SourceTokenRow[]> =>
      q.tokensByOrganization.all(organizationId),
    /** Revocation: the row goes, and so does its cached copy, so the token fails on its next request. */
    async deleteToken(row: SourceTokenRow): Promise<void> {
      q.deleteToken.run(row.id);
      tokens.delete(row.token_hash);
    },
    /** Organizations that have a sqlite source on this file (config.file_path, an absolute path). */
    sqliteFileOrganizations: async (filePath: string): Promise<string[]> =>
      q.sqliteFileOrganizations.all(filePath).map((r) => r.organization_id),
    /** The configs of other organizations' database sources of a driver (the shared-location check). */
    otherDatabaseConfigs: async (
      driver: string,
      organizationId: string,
    ): Promise<Record<string, unknown>[]> => configsOf(q.otherDatabaseConfigs.all(driver, organizationId)),
    /**
     * Atomic: inserts a database source after checking again, in the same transaction, what the
     * caller checked before: the organization's count of network sources under `maxNetwork`; a
     * sqlite file used by no other organization; `clashes` (the caller's rule) false for every
     * other organization's config of the same driver. The first that fails is returned.
     */
    insertDatabase: async (
      s: Source,
      maxNetwork: number,
      clashes: (otherConfig: Record<string, unknown>) => boolean,
    ): Promise<'too_many' | 'file_taken' | 'location_taken' | null> =>
      atomically(() => {
        const file = s.config.file_path;
        if (s.driver === 'sqlite') {
          const owners = typeof file === 'string' ? q.sqliteFileOrganizations.all(file) : [];
          if (owners.some((r) => r.organization_id !== s.organizationId)) return 'file_taken';
        } else {
          if ((q.networkDatabaseCount.get(s.organizationId) ?? 0) >= maxNetwork) return 'too_many';
          const others = configsOf(q.otherDatabaseConfigs.all(s.driver ?? '', s.organizationId));
          if (others.some(clashes)) return 'location_taken';
        }
        insertSource(s);
        return null;
      }),
  };
}

/** Stored configs, parsed; one that does not parse is left out (it names no location). */
export function configsOf(rows: Array<{ config: string }>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const row of rows) {
    try {
      out.push(JSON.parse(row.config) as Record<string, unknown>);
    } catch {
      continue;
    }
  }
  return out;
}

/**
 * A source's settings read synchronously, for the embedded metric store's writer (its thread and
 * the backup's replay), which runs on this node's own SQLite file and is not a repository port.
 */
export function sourceSettingsReader(db: Db): (id: string) => Source | undefined {
  const byId = db.prepare<[string], SourceRow>('SELECT * FROM sources WHERE id = ?');
  return (id) => {
    const row = byId.get(id);
    return row ? toSource(row) : undefined;
  };
}

export type SourcesRepo = ReturnType<typeof createSourcesRepo>;
