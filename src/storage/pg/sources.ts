// The sources repository on PostgreSQL (cluster mode): the same methods and rows as
// ../sources.ts, in PostgreSQL's dialect.
//
// Caches: the same two as the SQLite repo (token rows by hash, frozen sources by id), but other
// nodes write the same tables (docs/cluster.md, "Caches that assumed one writer"). A change made
// through this node drops its entries at once, as the SQLite repo does; every write that changes
// what a cache holds also sends a notification in its own transaction (`source:<id>` when a
// source's row changes or goes, `token:<id>` when a token is revoked; ./changes.ts), on which
// every node, this one included, drops the entries it names (a source's: its row and its tokens).
// The time-to-live stays as the safety net: an entry is answered for CLUSTER_CACHE_TTL_MS (2 s)
// and then read again, so a change is seen within 2 s also while the node's listening connection
// is down.
//
// Atomic units, where SQLite's IMMEDIATE transaction serialised every writer:
// - insertToken: one statement whose SELECT takes FOR KEY SHARE on the source row, so a source
//   delete in progress is waited for and then no token is inserted (no foreign-key error);
// - remove: the source row locked FOR UPDATE first, so no token is added between the read of its
//   tokens' hashes and the delete;
// - updateSettings: the source row read FOR NO KEY UPDATE (an edit of columns no foreign key
//   names: token, dashboard and transponder inserts of the source are not held up by it), the
//   caller's change made of that row and written in the same transaction, so of two edits on any
//   nodes the second is made of the row the first wrote;
// - insertDatabase: its checks read other organizations' sources too (a sqlite file, a server
//   location), so every insertDatabase of the cluster takes one transaction-scoped advisory lock
//   (DATABASE_SOURCES_LOCK) before it counts and checks; database sources are created rarely.
//
// The embedded metric store's tables (metric_series, ...) are SQLite's only: in cluster mode every
// project is on a metrics cluster (docs/cluster.md), whose buckets the engine asks about
// (engine.cluster(source).holdsData()). So holdsData answers false and dependents' `keys` 0 here,
// what the SQLite repo answers for a project on a metrics cluster (its series are not in the
// embedded store either).
import type { PgStore, Sql } from './client';
import {
  configsOf,
  frozenSource,
  SOURCE_CACHE_LIMIT,
  settingsParams,
  toSource,
  type SettingsChange,
  type SettingsEdit,
  type SourceRow,
  type SourcesRepo,
  type SourceTokenRow,
} from '../sources';
import type { Source, SourceType } from '../../model/source';
import { CLUSTER_CACHE_TTL_MS, ExpiringCache } from '../../lib/expiring-cache';
import { notifyChange, notifySql } from './changes';

/** The advisory lock every insertDatabase takes: "TRIFLDBS" in ASCII, one constant for every node. */
export const DATABASE_SOURCES_LOCK = '6075999413552300627';

const INSERT = `INSERT INTO sources (id, organization_id, type, display_name, driver, time_zone, beginning_of_week,
    granularities, default_timeframe, default_granularity, expire_after, retention, project_cluster_id, config,
    setup_status, created_at)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`;
const BY_ID = 'SELECT * FROM sources WHERE id = $1';
const TOKENS_BY_SOURCE =
  'SELECT * FROM source_tokens WHERE source_id = $1 ORDER BY created_at, id COLLATE "C"';
const OTHER_DATABASE_CONFIGS = `SELECT config FROM sources WHERE type = 'database' AND driver = $1 AND organization_id <> $2
  ORDER BY created_at, id COLLATE "C"`;
// Candidates only: the rows whose text holds the path; the JSON is parsed and compared here. A
// `config::jsonb ->> 'file_path'` would fail the whole statement on any row whose JSON holds a
// \u0000 escape (PostgreSQL refuses it in json and jsonb text), e.g. in a password.
const SQLITE_FILE_CANDIDATES = `SELECT organization_id, config FROM sources
  WHERE driver = 'sqlite' AND strpos(config, $1) > 0 ORDER BY organization_id COLLATE "C"`;
// The same for monitors: their source is `document.sourceId` (storage/monitors.ts).
const MONITOR_CANDIDATES = 'SELECT document FROM monitors WHERE strpos(document, $1) > 0';

/** The text a JSON string value holds for `value` (JSON.stringify's escaping, without the quotes). */
const jsonText = (value: string): string => JSON.stringify(value).slice(1, -1);

function parsed(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

async function sqliteFileOwners(sql: Sql, filePath: string): Promise<string[]> {
  const rows = await sql.rows<{ organization_id: string; config: string }>(SQLITE_FILE_CANDIDATES, [
    jsonText(filePath),
  ]);
  const owners: string[] = [];
  for (const row of rows) {
    if (parsed(row.config)?.file_path !== filePath) continue;
    if (owners[owners.length - 1] !== row.organization_id) owners.push(row.organization_id);
  }
  return owners;
}

function insertParams(s: Source): unknown[] {
  return [
    s.id,
    s.organizationId,
    s.type,
    s.displayName,
    s.driver,
    s.timeZone,
    s.beginningOfWeek,
    s.granularities.join(','),
    s.defaultTimeframe,
    s.defaultGranularity,
    s.expireAfter,
    s.retention ? JSON.stringify(s.retention) : null,
    s.projectClusterId,
    JSON.stringify(s.config),
    s.setupStatus,
    s.createdAt,
  ];
}

/** `UPDATE sources … RETURNING id` made one statement that also announces the change. */
const announced = (update: string): string =>
  `WITH changed AS (${update} RETURNING id) SELECT ${notifySql('source', 'id')} FROM changed`;

export function createPgSourcesRepo(
  store: PgStore,
  cacheLimit = SOURCE_CACHE_LIMIT,
  ttlMs = CLUSTER_CACHE_TTL_MS,
): SourcesRepo {
  const tokens = new ExpiringCache<string, SourceTokenRow>(cacheLimit, ttlMs);
  const sources = new ExpiringCache<string, Source>(cacheLimit, ttlMs);
  store.changes()?.subscribe({
    change(kind, id) {
      if (kind === 'token') tokens.deleteWhere((_, row) => row.id === id);
      else if (kind === 'source') {
        sources.delete(id);
        tokens.deleteWhere((_, row) => row.source_id === id);
      }
    },
    reset() {
      tokens.clear();
      sources.clear();
    },
  });
  const byId = (id: string) => store.one<SourceRow>(BY_ID, [id]);
  return {
    async insert(s: Source): Promise<void> {
      await store.run(INSERT, insertParams(s));
    },
    async byId(id: string): Promise<Source | undefined> {
      const row = await byId(id);
      return row ? toSource(row) : undefined;
    },
    async inOrganization(id: string, organizationId: string): Promise<Source | undefined> {
      const row = await byId(id);
      return row && row.organization_id === organizationId ? toSource(row) : undefined;
    },
    async listByOrganization(organizationId: string, type: SourceType): Promise<Source[]> {
      const rows = await store.rows<SourceRow>(
        'SELECT * FROM sources WHERE organization_id = $1 AND type = $2 ORDER BY created_at, id COLLATE "C"',
        [organizationId, type],
      );
      return rows.map(toSource);
    },
    async cachedById(id: string): Promise<Source | undefined> {
      return sources.getOrLoad(id, async (key, expired) => {
        const row = await byId(key);
        if (!row) return undefined;
        const source = toSource(row);
        // Unchanged: the same frozen object (the engine groups commits by a source's settings object).
        return expired && JSON.stringify(expired) === JSON.stringify(source) ? expired : frozenSource(source);
      });
    },
    async setSetupStatus(id: string, status: string): Promise<void> {
      await store.run(announced('UPDATE sources SET setup_status = $1 WHERE id = $2'), [status, id]);
      sources.delete(id);
    },
    async updateSettings(id: string, change: SettingsChange): Promise<SettingsEdit | undefined> {
      const edit = await store.tx(async (sql): Promise<SettingsEdit | undefined> => {
        const row = await sql.one<SourceRow>('SELECT * FROM sources WHERE id = $1 FOR NO KEY UPDATE', [id]);
        if (!row) return undefined;
        const read = toSource(row);
        const written = change(toSource(row));
        if (written) {
          const p = settingsParams(id, written);
          await sql.run(
            `UPDATE sources SET display_name = $2, time_zone = $3, beginning_of_week = $4, granularities = $5,
               default_timeframe = $6, default_granularity = $7, expire_after = $8, retention = $9
             WHERE id = $1`,
            [
              p.id,
              p.display_name,
              p.time_zone,
              p.beginning_of_week,
              p.granularities,
              p.default_timeframe,
              p.default_granularity,
              p.expire_after,
              p.retention,
            ],
          );
          await notifyChange(sql, 'source', id);
        }
        return { read, written };
      });
      if (edit?.written) sources.delete(id);
      return edit;
    },
    // No embedded store in cluster mode (see the top of this file): no series of it to hold.
    holdsData: async (_id: string): Promise<boolean> => false,
    tokensBySource: (id: string): Promise<SourceTokenRow[]> =>
      store.rows<SourceTokenRow>(TOKENS_BY_SOURCE, [id]),
    /** One REPEATABLE READ transaction: the counts are of one snapshot. */
    dependents: (id: string) =>
      store.tx(async (sql) => {
        await sql.run('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY');
        const dashboards = await sql.rows<{ id: string; name: string }>(
          'SELECT id, name FROM dashboards WHERE source_id = $1 ORDER BY position, inserted_at, id COLLATE "C"',
          [id],
        );
        const counts = await sql.one<{ tokens: number; transponders: number }>(
          `SELECT (SELECT COUNT(*) FROM source_tokens WHERE source_id = $1) AS tokens,
                  (SELECT COUNT(*) FROM transponders WHERE source_id = $1) AS transponders`,
          [id],
        );
        const documents = await sql.rows<{ document: string }>(MONITOR_CANDIDATES, [jsonText(id)]);
        return {
          dashboards,
          tokens: counts?.tokens ?? 0,
          transponders: counts?.transponders ?? 0,
          keys: 0, // no embedded store in cluster mode (see the top of this file)
          monitors: documents.filter((d) => parsed(d.document)?.sourceId === id).length,
        };
      }),
    async remove(id: string): Promise<void> {
      const hashes = await store.tx(async (sql) => {
        const found = await sql.one('SELECT 1 FROM sources WHERE id = $1 FOR UPDATE', [id]);
        if (found) await notifyChange(sql, 'source', id);
        const rows = await sql.rows<{ token_hash: string }>(
          'SELECT token_hash FROM source_tokens WHERE source_id = $1',
          [id],
        );
        // Tokens, dashboards (and their share links) and transponders go with it (ON DELETE CASCADE).
        await sql.run('DELETE FROM sources WHERE id = $1', [id]);
        return rows.map((r) => r.token_hash);
      });
      for (const hash of hashes) tokens.delete(hash);
      sources.delete(id);
    },
    insertToken: async (t: SourceTokenRow, sourceType: SourceType): Promise<boolean> =>
      (await store.run(
        `INSERT INTO source_tokens (id, source_id, organization_id, user_id, name, token_hash, last5, can_read,
           can_write, created_at)
         SELECT $1, id, organization_id, $4, $5, $6, $7, $8, $9, $10 FROM sources
         WHERE id = $2 AND organization_id = $3 AND type = $11
         FOR KEY SHARE`,
        [
          t.id,
          t.source_id,
          t.organization_id,
          t.user_id,
          t.name,
          t.token_hash,
          t.last5,
          t.can_read,
          t.can_write,
          t.created_at,
          sourceType,
        ],
      )) > 0,
    tokenByHash: (hash: string): Promise<SourceTokenRow | undefined> =>
      tokens.getOrLoad(hash, async (key) => {
        const row = await store.one<SourceTokenRow>('SELECT * FROM source_tokens WHERE token_hash = $1', [
          key,
        ]);
        return row ? Object.freeze(row) : undefined;
      }),
    sqliteSources: async (): Promise<Source[]> =>
      (
        await store.rows<SourceRow>(
          `SELECT * FROM sources WHERE type = 'database' AND driver = 'sqlite' ORDER BY created_at, id COLLATE "C"`,
        )
      ).map(toSource),
    async setConfig(id: string, config: Record<string, unknown>): Promise<void> {
      await store.run(announced('UPDATE sources SET config = $1 WHERE id = $2'), [
        JSON.stringify(config),
        id,
      ]);
      sources.delete(id);
    },
    tokenById: (id: string): Promise<SourceTokenRow | undefined> =>
      store.one<SourceTokenRow>('SELECT * FROM source_tokens WHERE id = $1', [id]),
    tokensByOrganization: (organizationId: string): Promise<SourceTokenRow[]> =>
      store.rows<SourceTokenRow>(
        'SELECT * FROM source_tokens WHERE organization_id = $1 ORDER BY created_at, id COLLATE "C" LIMIT 1000',
        [organizationId],
      ),
    async deleteToken(row: SourceTokenRow): Promise<void> {
      await store.run(
        `WITH gone AS (DELETE FROM source_tokens WHERE id = $1 RETURNING id) SELECT ${notifySql('token', 'id')} FROM gone`,
        [row.id],
      );
      tokens.delete(row.token_hash);
    },
    sqliteFileOrganizations: (filePath: string): Promise<string[]> => sqliteFileOwners(store, filePath),
    otherDatabaseConfigs: async (
      driver: string,
      organizationId: string,
    ): Promise<Record<string, unknown>[]> =>
      configsOf(await store.rows<{ config: string }>(OTHER_DATABASE_CONFIGS, [driver, organizationId])),
    insertDatabase: (
      s: Source,
      maxNetwork: number,
      clashes: (otherConfig: Record<string, unknown>) => boolean,
    ): Promise<'too_many' | 'file_taken' | 'location_taken' | null> =>
      store.tx(async (sql) => {
        await sql.run('SELECT pg_advisory_xact_lock($1)', [DATABASE_SOURCES_LOCK]);
        const file = s.config.file_path;
        if (s.driver === 'sqlite') {
          const owners = typeof file === 'string' ? await sqliteFileOwners(sql, file) : [];
          if (owners.some((org) => org !== s.organizationId)) return 'file_taken';
        } else {
          const count = await sql.one<{ n: number }>(
            "SELECT COUNT(*) AS n FROM sources WHERE organization_id = $1 AND type = 'database' AND driver <> 'sqlite'",
            [s.organizationId],
          );
          if ((count?.n ?? 0) >= maxNetwork) return 'too_many';
          const others = configsOf(
            await sql.rows<{ config: string }>(OTHER_DATABASE_CONFIGS, [s.driver ?? '', s.organizationId]),
          );
          if (others.some(clashes)) return 'location_taken';
        }
        await sql.run(INSERT, insertParams(s));
        return null;
      }),
  };
}
