// The PostgreSQL sources, shares and transponders repositories (src/storage/pg/{sources,shares,
// transponders}.ts) against their SQLite twins: the same calls on both give the same answers; then
// their atomic units under real concurrency on PostgreSQL, and the node caches' time-to-live
// (a change through another node seen within 2 s by a node that does not listen, a change through
// this node at once). The notifications between nodes: pg-changes.test.ts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createSourcesRepo, type SourcesRepo, type SourceTokenRow } from '../../src/storage/sources';
import { createSharesRepo, type ShareRow, type SharesRepo } from '../../src/storage/shares';
import {
  createTranspondersRepo,
  type EnabledTransponders,
  type Transponder,
  type TranspondersRepo,
} from '../../src/storage/transponders';
import { createPgSourcesRepo } from '../../src/storage/pg/sources';
import { createPgSharesRepo } from '../../src/storage/pg/shares';
import { createPgEnabledTransponders, createPgTranspondersRepo } from '../../src/storage/pg/transponders';
import { createMetricsEngine } from '../../src/domain/metrics/engine';
import { AppError } from '../../src/errors';
import { projectSource } from '../helpers/source';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { CLUSTER_CACHE_TTL_MS } from '../../src/lib/expiring-cache';
import type { Source } from '../../src/model/source';
import { pgSkip, scratchPgStore, testSource, type ScratchStore } from '../helpers/pg-store';

const skip = pgSkip();

interface Repos {
  name: 'sqlite' | 'postgres';
  sources: SourcesRepo;
  shares: SharesRepo;
  transponders: TranspondersRepo;
}

const source = testSource;

const database = (
  id: string,
  organizationId: string,
  driver: Source['driver'],
  config: Record<string, unknown>,
) => source(id, { organizationId, type: 'database', driver, config, setupStatus: 'pending' });

function token(id: string, sourceId: string, patch: Partial<SourceTokenRow> = {}): SourceTokenRow {
  return {
    id,
    source_id: sourceId,
    organization_id: 'org-a',
    user_id: 'user-1',
    name: `token ${id}`,
    token_hash: `hash-${id}`,
    last5: id.slice(-5).padStart(5, '0'),
    can_read: 1,
    can_write: 0,
    created_at: 2000,
    ...patch,
  };
}

function share(id: string, dashboardId: string, patch: Partial<ShareRow> = {}): ShareRow {
  return {
    id,
    dashboard_id: dashboardId,
    organization_id: 'org-a',
    user_id: 'user-1',
    token_hash: `share-${id}`,
    last5: '12345',
    created_at: 3000,
    ...patch,
  };
}

function transponder(id: string, sourceId: string, patch: Partial<Transponder> = {}): Transponder {
  return {
    id,
    organizationId: 'org-a',
    sourceType: 'project',
    sourceId,
    name: `transponder ${id}`,
    key: 'api',
    paths: ['requests.errors', 'requests.count'],
    expression: 'a / b * 100',
    response: 'requests.error_rate',
    enabled: true,
    order: 0,
    insertedAt: 4000,
    updatedAt: 4000,
    ...patch,
  };
}

/** Plain SQL with `?` run on both databases (seed rows the repositories under test do not write). */
type Seed = (text: string, params?: unknown[]) => Promise<void>;

function seedOn(db: Db, store: PgStore): Seed {
  return async (text, params = []) => {
    db.prepare(text).run(...params);
    let n = 0;
    await store.run(
      text.replace(/\?/g, () => `$${++n}`),
      params,
    );
  };
}

const dashboardSql = `INSERT INTO dashboards (id, organization_id, user_id, source_type, source_id, database_id, group_id, name,
  key, visibility, locked, position, default_timeframe, default_granularity, payload, segments, inserted_at, updated_at,
  updated_by) VALUES (?, ?, 'user-1', 'project', ?, NULL, NULL, ?, 'k', 1, 0, ?, '24h', '1h', '{}', '[]', ?, ?, NULL)`;
const monitorSql = `INSERT INTO monitors (id, organization_id, user_id, status, locked, muted_until, document, inserted_at,
  updated_at, updated_by) VALUES (?, 'org-a', 'user-1', 'active', 0, NULL, ?, 1, 1, NULL)`;

async function seedAccounts(seed: Seed): Promise<void> {
  for (const [id, email] of [
    ['user-1', 'a@example.com'],
    ['user-2', 'b@example.com'],
  ])
    await seed(
      "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES (?, ?, ?, 'A', 'x', 0)",
      [id, email, email],
    );
  for (const id of ['org-a', 'org-b', 'org-c'])
    await seed("INSERT INTO organizations (id, name, slug, created_at) VALUES (?, 'Org', ?, 0)", [id, id]);
}

describe('PostgreSQL sources, shares and transponders repositories', { skip }, () => {
  let dir: string;
  let db: Db;
  let pg: ScratchStore;
  let seed: Seed;
  let repos: Repos[];

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pg-sources-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
    pg = await scratchPgStore();
    // The test server's databases sort text in byte order (C.UTF-8); many sort by language rules
    // (en_US.UTF-8), where 'p-a' < 'P-B'. The ids ordered here get such a collation, so that the
    // repositories' ORDER BY … COLLATE "C" (SQLite's byte order) is what the answers show.
    const icu = await pg.store.one("SELECT 1 FROM pg_collation WHERE collname = 'en-US-x-icu'");
    if (icu)
      for (const table of ['sources', 'source_tokens', 'dashboards', 'dashboard_shares', 'transponders'])
        await pg.store.run(`ALTER TABLE ${table} ALTER COLUMN id TYPE TEXT COLLATE "en-US-x-icu"`);
    seed = seedOn(db, pg.store);
    await seedAccounts(seed);
    repos = [
      {
        name: 'sqlite',
        sources: createSourcesRepo(db),
        shares: createSharesRepo(db),
        transponders: createTranspondersRepo(db),
      },
      {
        name: 'postgres',
        sources: createPgSourcesRepo(pg.store),
        shares: createPgSharesRepo(pg.store),
        transponders: createPgTranspondersRepo(pg.store),
      },
    ];
  });
  after(async () => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await pg?.drop();
  });

  /** `call` on the SQLite repos, then on the PostgreSQL ones: the same answer (returned). */
  async function both<T>(call: (r: Repos) => Promise<T>, what: string): Promise<T> {
    const expected = await call(repos[0]!);
    const actual = await call(repos[1]!);
    assert.deepEqual(actual, expected, what);
    return expected;
  }
  const sorted = <T>(list: T[]): T[] =>
    [...list].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

  describe('the same answers as SQLite', () => {
    test('sources: insert, reads, ordering by created_at then id in byte order, settings edits, the cache', async () => {
      // Same created_at, mixed-case ids: SQLite sorts 'P-B' < 'p-a' < 'p-c' (bytes).
      for (const s of [
        source('p-c'),
        source('p-a', { retention: { '1m': '7d' }, expireAfter: 86_400 }),
        source('P-B', { projectClusterId: 'c1', config: { cluster_id: 'c1' } }),
        source('p-old', { createdAt: 10 }),
        source('p-other', { organizationId: 'org-b' }),
      ])
        await both((r) => r.sources.insert(s), `insert ${s.id}`);
      const listed = await both(
        (r) => r.sources.listByOrganization('org-a', 'project'),
        'listByOrganization',
      );
      assert.deepEqual(
        listed.map((s) => s.id),
        ['p-old', 'P-B', 'p-a', 'p-c'],
      );
      await both((r) => r.sources.listByOrganization('org-a', 'database'), 'no databases');
      await both((r) => r.sources.byId('p-a'), 'byId');
      await both((r) => r.sources.byId('nope'), 'byId of a missing source');
      await both((r) => r.sources.inOrganization('p-a', 'org-a'), 'inOrganization');
      await both((r) => r.sources.inOrganization('p-a', 'org-b'), 'inOrganization of another organization');
      await both(async (r) => {
        const cached = await r.sources.cachedById('P-B');
        return { cached, frozen: Object.isFrozen(cached) && Object.isFrozen(cached?.config) };
      }, 'cachedById: frozen');
      await both((r) => r.sources.cachedById('nope'), 'cachedById of a missing source');

      await both((r) => r.sources.setSetupStatus('p-a', 'ready'), 'setSetupStatus');
      const edit = await both(
        (r) =>
          r.sources.updateSettings('p-a', (read) => ({
            ...read,
            displayName: 'Renamed',
            timeZone: 'Europe/Paris',
            granularities: ['1h'],
            retention: { '1h': '30d' },
            // not settings: never written by it
            setupStatus: 'failed',
            config: { changed: true },
          })),
        'updateSettings',
      );
      assert.equal(edit?.read.setupStatus, 'ready', 'the change is made of the row as stored');
      assert.equal(edit?.read.displayName, 'Source p-a');
      assert.equal(
        await both((r) => r.sources.updateSettings('nope', () => assert.fail('no row, no change')), 'gone'),
        undefined,
      );
      await both((r) => r.sources.updateSettings('p-a', () => null), 'a change that writes nothing');
      await both((r) => r.sources.setConfig('P-B', { cluster_id: 'c2' }), 'setConfig');
      const pa = await both((r) => r.sources.byId('p-a'), 'byId p-a after the edits');
      assert.deepEqual(
        [pa?.displayName, pa?.timeZone, pa?.granularities, pa?.retention, pa?.setupStatus, pa?.config],
        ['Renamed', 'Europe/Paris', ['1h'], { '1h': '30d' }, 'ready', {}],
        'the settings written, the other columns as they were',
      );
      for (const id of ['p-a', 'P-B']) {
        await both((r) => r.sources.byId(id), `byId ${id} after the edits`);
        await both((r) => r.sources.cachedById(id), `cachedById ${id} after the edits: dropped at once`);
      }
      await both(
        (r) => r.sources.updateSettings('p-c', (read) => ({ ...read, retention: null })),
        'retention back to null',
      );
      await both((r) => r.sources.byId('p-c'), 'byId p-c');
      await both((r) => r.sources.holdsData('p-a'), 'holdsData: no series');
    });

    test('source tokens: inserted only while the source is there with its type, look-ups, revocation', async () => {
      await both((r) => r.sources.insert(source('t-src')), 'insert the source');
      await both(
        (r) => r.sources.insert(source('t-db', { type: 'database', driver: 'postgres' })),
        'a database',
      );
      // Same created_at, mixed-case ids; inserted out of order.
      for (const t of [
        token('tok-b', 't-src'),
        token('TOK-C', 't-src'),
        token('tok-a', 't-src', { created_at: 1 }),
      ])
        assert.equal(await both((r) => r.sources.insertToken(t, 'project'), `insertToken ${t.id}`), true);
      assert.equal(
        await both((r) => r.sources.insertToken(token('t-type', 't-src'), 'database'), 'wrong type'),
        false,
      );
      assert.equal(
        await both(
          (r) => r.sources.insertToken(token('t-org', 't-src', { organization_id: 'org-b' }), 'project'),
          'other organization',
        ),
        false,
      );
      assert.equal(
        await both((r) => r.sources.insertToken(token('t-none', 'missing'), 'project'), 'missing source'),
        false,
      );
      assert.equal(
        await both((r) => r.sources.insertToken(token('t-db1', 't-db', { can_write: 1 }), 'database'), 'db'),
        true,
      );
      await both(async (r) => sorted(await r.sources.tokensBySource('t-src')), 'tokensBySource');
      const listed = await both((r) => r.sources.tokensByOrganization('org-a'), 'tokensByOrganization');
      assert.deepEqual(
        listed.map((t) => t.id),
        ['tok-a', 'TOK-C', 't-db1', 'tok-b'],
      );
      await both((r) => r.sources.tokensByOrganization('org-b'), 'none in org-b');
      await both((r) => r.sources.tokenById('tok-b'), 'tokenById');
      await both((r) => r.sources.tokenById('nope'), 'tokenById missing');
      await both(async (r) => {
        const row = await r.sources.tokenByHash('hash-tok-b');
        return { row, frozen: Object.isFrozen(row) };
      }, 'tokenByHash (cached, frozen)');
      await both((r) => r.sources.tokenByHash('hash-nope'), 'tokenByHash missing');
      await both(async (r) => r.sources.deleteToken((await r.sources.tokenById('tok-b'))!), 'deleteToken');
      await both((r) => r.sources.tokenByHash('hash-tok-b'), 'revoked: gone from the cache at once');
      await both((r) => r.sources.tokenById('tok-b'), 'revoked: gone');
    });

    test('database sources: sqlite files, other configs, the network cap and the location rule', async () => {
      const file = '/data/org-a/shop.db';
      await both(
        (r) =>
          r.sources.insertDatabase(database('d-sq1', 'org-a', 'sqlite', { file_path: file }), 2, () => false),
        'a sqlite file',
      );
      await both(
        (r) =>
          r.sources.insertDatabase(
            database('d-sq2', 'org-a', 'sqlite', { file_path: `${file}2` }),
            2,
            () => false,
          ),
        'a file whose path starts with the first',
      );
      assert.equal(
        await both(
          (r) =>
            r.sources.insertDatabase(
              database('d-sq3', 'org-a', 'sqlite', { file_path: file }),
              2,
              () => false,
            ),
          'the same file in the same organization',
        ),
        null,
      );
      assert.equal(
        await both(
          (r) =>
            r.sources.insertDatabase(
              database('d-sq4', 'org-b', 'sqlite', { file_path: file }),
              2,
              () => true,
            ),
          'the file of another organization',
        ),
        'file_taken',
      );
      await both((r) => r.sources.sqliteFileOrganizations(file), 'sqliteFileOrganizations');
      await both((r) => r.sources.sqliteFileOrganizations('/data/none.db'), 'no owner');
      await both(
        (r) => r.sources.sqliteFileOrganizations('/data/org-a/shop'),
        'a prefix of a path is no match',
      );
      // A stored config that does not parse names no location (both leave it out).
      await seed(
        `INSERT INTO sources (id, organization_id, type, display_name, driver, time_zone, beginning_of_week, granularities,
          default_timeframe, default_granularity, config, created_at) VALUES
          ('d-bad', 'org-c', 'database', 'Bad', 'postgres', 'UTC', 1, '1h', '24h', '1h', 'not json', 5)`,
      );
      const host = (h: string) => ({ host: h, port: 5432, database: 'm' });
      const sameHost = (h: string) => (other: Record<string, unknown>) => other.host === h;
      assert.equal(
        await both(
          (r) =>
            r.sources.insertDatabase(database('d-pg1', 'org-a', 'postgres', host('h1')), 3, sameHost('h1')),
          'a network database',
        ),
        null,
      );
      assert.equal(
        await both(
          (r) =>
            r.sources.insertDatabase(database('d-pg2', 'org-b', 'postgres', host('h1')), 3, sameHost('h1')),
          "another organization's location",
        ),
        'location_taken',
      );
      assert.equal(
        await both(
          (r) => r.sources.insertDatabase(database('d-my1', 'org-a', 'mysql', host('h2')), 3, sameHost('h2')),
          'a second network database',
        ),
        null,
      );
      assert.equal(
        await both(
          (r) => r.sources.insertDatabase(database('d-pg3', 'org-a', 'postgres', host('h3')), 3, () => false),
          'over the cap of 3 (t-db counts, sqlite files do not)',
        ),
        'too_many',
      );
      await both(
        async (r) => sorted(await r.sources.otherDatabaseConfigs('postgres', 'org-b')),
        'other configs',
      );
      await both(
        async (r) => sorted(await r.sources.otherDatabaseConfigs('mysql', 'org-a')),
        'none but mine',
      );
      await both(async (r) => sorted(await r.sources.sqliteSources()), 'sqliteSources');
      await both((r) => r.sources.listByOrganization('org-a', 'database'), 'the databases, in order');
    });

    test('dependents and remove: what goes with a source, and its tokens stop working at once', async () => {
      await both((r) => r.sources.insert(source('rm-1')), 'the source');
      await both((r) => r.sources.insert(source('rm-2')), 'a neighbour');
      for (const t of [token('rm-t1', 'rm-1'), token('rm-t2', 'rm-1'), token('rm-t3', 'rm-2')])
        await both((r) => r.sources.insertToken(t, 'project'), `token ${t.id}`);
      await both((r) => r.transponders.insert(transponder('rm-x1', 'rm-1'), true), 'a transponder');
      for (const [id, src, name, position] of [
        ['rm-dB', 'rm-1', 'Second', 1],
        ['rm-da', 'rm-1', 'Third', 1],
        ['rm-d0', 'rm-1', 'First', 0],
        ['rm-dz', 'rm-2', 'Other', 0],
      ] as const)
        await seed(dashboardSql, [id, 'org-a', src, name, position, 5, 5]);
      const monitor = (sourceId: string, extra: Record<string, unknown> = {}) =>
        JSON.stringify({ name: 'm', sourceId, query: { sourceId: 'rm-1' }, ...extra });
      await seed(monitorSql, ['rm-m1', monitor('rm-1')]);
      await seed(monitorSql, ['rm-m2', monitor('rm-1', { note: 'x\u0000y' })]); // a \u0000 escape in its JSON
      await seed(monitorSql, ['rm-m3', monitor('rm-2', { name: 'rm-1' })]); // names rm-1 elsewhere only
      await seed(monitorSql, ['rm-m4', monitor('rm-10')]);
      const dependents = await both((r) => r.sources.dependents('rm-1'), 'dependents');
      assert.deepEqual(dependents, {
        dashboards: [
          { id: 'rm-d0', name: 'First' },
          { id: 'rm-dB', name: 'Second' },
          { id: 'rm-da', name: 'Third' },
        ],
        tokens: 2,
        transponders: 1,
        keys: 0,
        monitors: 2,
      });
      await both((r) => r.sources.dependents('missing'), 'dependents of a missing source');
      // Cache the token rows and the source, then remove.
      await both((r) => r.sources.tokenByHash('hash-rm-t1'), 'cached token');
      await both((r) => r.sources.cachedById('rm-1'), 'cached source');
      await both((r) => r.sources.remove('rm-1'), 'remove');
      await both((r) => r.sources.tokenByHash('hash-rm-t1'), 'its token: gone from the cache at once');
      await both((r) => r.sources.cachedById('rm-1'), 'the source: gone from the cache at once');
      await both((r) => r.sources.dependents('rm-1'), 'nothing left');
      await both((r) => r.sources.dependents('rm-2'), 'the neighbour keeps its own');
      await both((r) => r.sources.remove('rm-1'), 'remove again: nothing');
      await both((r) => r.transponders.list('rm-1'), 'its transponders went with it');
    });

    test('shares: inserted only while the dashboard is there, listed in order, removed once', async () => {
      await both((r) => r.sources.insert(source('sh-src')), 'the source');
      await seed(dashboardSql, ['sh-d1', 'org-a', 'sh-src', 'D1', 0, 5, 5]);
      await seed(dashboardSql, ['sh-d2', 'org-a', 'sh-src', 'D2', 1, 5, 5]);
      for (const s of [
        share('sh-b', 'sh-d1'),
        share('SH-C', 'sh-d1'),
        share('sh-a', 'sh-d1', { created_at: 1 }),
      ])
        assert.equal(await both((r) => r.shares.insert(s), `insert ${s.id}`), true);
      assert.equal(
        await both((r) => r.shares.insert(share('sh-x', 'sh-d1', { organization_id: 'org-b' })), 'other org'),
        false,
      );
      assert.equal(await both((r) => r.shares.insert(share('sh-y', 'missing')), 'missing dashboard'), false);
      const listed = await both((r) => r.shares.listByDashboard('sh-d1', 'org-a'), 'listByDashboard');
      assert.deepEqual(
        listed.map((s) => s.id),
        ['sh-a', 'SH-C', 'sh-b'],
      );
      await both((r) => r.shares.listByDashboard('sh-d1', 'org-b'), 'another organization sees none');
      await both((r) => r.shares.listByDashboard('sh-d2', 'org-a'), 'none on d2');
      await both((r) => r.shares.byHash('share-sh-b'), 'byHash');
      await both((r) => r.shares.byHash('share-none'), 'byHash missing');
      assert.equal(await both((r) => r.shares.remove('sh-b', 'sh-d2', 'org-a'), 'wrong dashboard'), false);
      assert.equal(await both((r) => r.shares.remove('sh-b', 'sh-d1', 'org-a'), 'remove'), true);
      assert.equal(await both((r) => r.shares.remove('sh-b', 'sh-d1', 'org-a'), 'remove again'), false);
      await both((r) => r.shares.byHash('share-sh-b'), 'revoked');
    });

    test('transponders: insert at the end or at an order, list in order, get, update, remove', async () => {
      await both((r) => r.sources.insert(source('tr-src')), 'the source');
      await both((r) => r.sources.insert(source('tr-other', { organizationId: 'org-b' })), 'another org');
      await both((r) => r.transponders.list('tr-src'), 'none yet');
      await both((r) => r.transponders.insert(transponder('tr-1', 'tr-src'), true), 'first at the end: 1');
      await both((r) => r.transponders.insert(transponder('tr-b', 'tr-src', { order: 5 }), false), 'at 5');
      await both((r) => r.transponders.insert(transponder('TR-C', 'tr-src', { order: 5 }), false), 'also 5');
      await both(
        (r) => r.transponders.insert(transponder('tr-a', 'tr-src', { order: 5, enabled: false }), false),
        '5',
      );
      await both((r) => r.transponders.insert(transponder('tr-2', 'tr-src'), true), 'at the end: 6');
      await both((r) => r.transponders.insert(transponder('tr-x', 'missing'), true), 'missing source: null');
      await both(
        (r) => r.transponders.insert(transponder('tr-y', 'tr-other'), true),
        "another organization's source: null",
      );
      const listed = await both((r) => r.transponders.list('tr-src'), 'list');
      assert.deepEqual(
        listed.map((t) => [t.id, t.order]),
        [
          ['tr-1', 1],
          ['TR-C', 5],
          ['tr-a', 5],
          ['tr-b', 5],
          ['tr-2', 6],
        ],
      );
      await both((r) => r.transponders.get('tr-src', 'tr-a'), 'get');
      await both((r) => r.transponders.get('tr-other', 'tr-a'), "get through another source's id: null");
      const read = (await repos[0]!.transponders.get('tr-src', 'tr-b'))!;
      const fields = { name: 'renamed', paths: ['x'], enabled: false, order: 9, updatedAt: 5000 };
      const change = (current: Transponder): Transponder => ({
        ...current,
        ...fields,
        // not the change's to write: the repository keeps them
        id: 'tr-elsewhere',
        sourceId: 'tr-other',
        organizationId: 'org-b',
        sourceType: 'database',
        insertedAt: 1,
      });
      assert.deepEqual(await both((r) => r.transponders.update('tr-src', 'tr-b', change), 'update'), {
        ...read,
        ...fields,
      });
      const never = () => assert.fail('no change is made of a transponder that is not there');
      assert.equal(
        await both((r) => r.transponders.update('tr-other', 'tr-b', never), 'update via another source'),
        null,
      );
      await both((r) => r.transponders.get('tr-src', 'tr-b'), 'get after the update');
      await both((r) => r.transponders.list('tr-src'), 'list after the update');
      assert.equal(
        await both((r) => r.transponders.remove('tr-other', 'tr-b'), 'remove via another source'),
        false,
      );
      assert.equal(await both((r) => r.transponders.remove('tr-src', 'tr-b'), 'remove'), true);
      assert.equal(await both((r) => r.transponders.remove('tr-src', 'tr-b'), 'remove again'), false);
      assert.equal(
        await both((r) => r.transponders.update('tr-src', 'tr-b', never), 'update of a removed one'),
        null,
      );
      await both((r) => r.transponders.insert(transponder('tr-3', 'tr-src'), true), 'at the end again');
      await both((r) => r.transponders.list('tr-src'), 'final list');
    });
  });

  describe('atomic units under concurrency on PostgreSQL', () => {
    const pgRepos = () => repos[1]!;
    const count = async (text: string, params: unknown[]) =>
      (await pg.store.one<{ n: number }>(`SELECT COUNT(*) AS n FROM ${text}`, params))!.n;
    /** Whether a promise is still pending after `ms` (it waits on a lock). */
    const pendingAfter = async (promise: Promise<unknown>, ms = 150): Promise<boolean> => {
      let settled = false;
      void promise.then(
        () => (settled = true),
        () => (settled = true),
      );
      await new Promise((resolve) => setTimeout(resolve, ms));
      return !settled;
    };
    /** Runs `statements` in a transaction left open on a connection of its own; `commit` ends it. */
    async function openTransaction(statements: Array<[string, unknown[]]>) {
      const client = await pg.store.pool.connect();
      await client.query('BEGIN');
      for (const [text, params] of statements) await client.query(text, params);
      return {
        async commit() {
          await client.query('COMMIT');
          client.release();
        },
      };
    }

    test('a token insert waiting on a source delete inserts nothing and does not fail', async () => {
      const { sources } = pgRepos();
      await sources.insert(source('race-1'));
      const deleting = await openTransaction([['DELETE FROM sources WHERE id = $1', ['race-1']]]);
      const inserting = sources.insertToken(token('race-t', 'race-1'), 'project');
      assert.equal(await pendingAfter(inserting), true, 'the insert waits for the delete');
      await deleting.commit();
      assert.equal(await inserting, false);
      assert.equal(await count('source_tokens WHERE id = $1', ['race-t']), 0);
    });

    test('20 token inserts racing a source delete: none fails, none survives, cached ones stop at once', async () => {
      const { sources } = pgRepos();
      await sources.insert(source('race-2'));
      for (const id of ['race-c1', 'race-c2']) {
        assert.equal(await sources.insertToken(token(id, 'race-2'), 'project'), true);
        assert.notEqual(await sources.tokenByHash(`hash-${id}`), undefined, 'cached');
      }
      const inserts = Array.from({ length: 20 }, (_, i) =>
        sources.insertToken(token(`race-n${i}`, 'race-2'), 'project'),
      );
      const [results] = await Promise.all([Promise.all(inserts), sources.remove('race-2')]);
      assert.ok(results.every((r) => typeof r === 'boolean'));
      assert.equal(
        await count('source_tokens WHERE source_id = $1', ['race-2']),
        0,
        'none outlives its source',
      );
      for (const id of ['race-c1', 'race-c2'])
        assert.equal(await sources.tokenByHash(`hash-${id}`), undefined);
      assert.equal(await sources.insertToken(token('race-late', 'race-2'), 'project'), false);
    });

    test('remove waits for a token insert in progress; that token goes with its source', async () => {
      const { sources } = pgRepos();
      await sources.insert(source('race-3'));
      const inserting = await openTransaction([
        [
          `INSERT INTO source_tokens (id, source_id, organization_id, user_id, name, token_hash, last5, can_read,
            can_write, created_at) VALUES ('race-3t', 'race-3', 'org-a', 'user-1', 'n', 'hash-race-3t', '00000', 1, 0, 1)`,
          [],
        ],
      ]);
      const removing = sources.remove('race-3');
      assert.equal(await pendingAfter(removing), true, 'the delete waits for the insert');
      await inserting.commit();
      await removing;
      assert.equal(await count('source_tokens WHERE source_id = $1', ['race-3']), 0);
      assert.equal(await sources.byId('race-3'), undefined);
    });

    test('20 transponder inserts at the end of one source take 20 distinct orders', async () => {
      const { sources, transponders } = pgRepos();
      await sources.insert(source('race-4'));
      const stored = await Promise.all(
        Array.from({ length: 20 }, (_, i) => transponders.insert(transponder(`race-x${i}`, 'race-4'), true)),
      );
      assert.deepEqual(
        stored.map((t) => t!.order).sort((a, b) => a - b),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
      assert.deepEqual(
        (await transponders.list('race-4')).map((t) => t.order),
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    });

    test('a transponder insert waiting on a source delete inserts nothing and does not fail', async () => {
      const { sources, transponders } = pgRepos();
      await sources.insert(source('race-5'));
      const deleting = await openTransaction([['DELETE FROM sources WHERE id = $1', ['race-5']]]);
      const inserting = transponders.insert(transponder('race-5x', 'race-5'), true);
      assert.equal(await pendingAfter(inserting), true, 'the insert waits for the delete');
      await deleting.commit();
      assert.equal(await inserting, null);
      assert.equal(await count('transponders WHERE id = $1', ['race-5x']), 0);
    });

    test('a share insert waiting on a dashboard delete inserts nothing and does not fail', async () => {
      const { sources, shares } = pgRepos();
      await sources.insert(source('race-6'));
      let n = 0;
      await pg.store.run(
        dashboardSql.replace(/\?/g, () => `$${++n}`),
        ['race-6d', 'org-a', 'race-6', 'D', 0, 1, 1],
      );
      const deleting = await openTransaction([['DELETE FROM dashboards WHERE id = $1', ['race-6d']]]);
      const inserting = shares.insert(share('race-6s', 'race-6d'));
      assert.equal(await pendingAfter(inserting), true, 'the insert waits for the delete');
      await deleting.commit();
      assert.equal(await inserting, false);
      assert.equal(await count('dashboard_shares WHERE id = $1', ['race-6s']), 0);
    });

    test('the network database cap under 20 concurrent inserts: exactly 5 of 20', async () => {
      const { sources } = pgRepos();
      await seed(
        "INSERT INTO organizations (id, name, slug, created_at) VALUES ('org-cap', 'Org', 'org-cap', 0)",
      );
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          sources.insertDatabase(
            database(`cap-${i}`, 'org-cap', 'postgres', { host: `cap-host-${i}` }),
            5,
            () => false,
          ),
        ),
      );
      assert.equal(results.filter((r) => r === null).length, 5);
      assert.equal(results.filter((r) => r === 'too_many').length, 15);
      assert.equal(await count("sources WHERE organization_id = $1 AND type = 'database'", ['org-cap']), 5);
    });

    test('one server location, two organizations inserting at once: only one organization gets it', async () => {
      const { sources } = pgRepos();
      for (const id of ['org-l1', 'org-l2'])
        await seed('INSERT INTO organizations (id, name, slug, created_at) VALUES (?, ?, ?, 0)', [
          id,
          id,
          id,
        ]);
      const clash = (other: Record<string, unknown>) => other.host === 'shared-host';
      const attempts = Array.from({ length: 10 }, (_, i) => {
        const org = i % 2 === 0 ? 'org-l1' : 'org-l2';
        return sources
          .insertDatabase(database(`loc-${i}`, org, 'postgres', { host: 'shared-host' }), 10, clash)
          .then((refused) => ({ org, refused }));
      });
      const results = await Promise.all(attempts);
      const winners = new Set(results.filter((r) => r.refused === null).map((r) => r.org));
      assert.equal(winners.size, 1, 'the location went to one organization');
      assert.ok(
        results.every((r) => (winners.has(r.org) ? r.refused === null : r.refused === 'location_taken')),
      );
    });

    describe('edits of different fields from two nodes at once: every field kept', () => {
      let second: PgStore;
      before(() => {
        second = createPgStore(pg.url);
      });
      after(async () => {
        await second?.close();
      });
      /** this node's repositories and another node's (a pool of its own) */
      const nodes = (): Array<Pick<Repos, 'sources' | 'transponders'>> => [
        pgRepos(),
        { sources: createPgSourcesRepo(second), transponders: createPgTranspondersRepo(second) },
      ];

      test('source settings: 4 edits at once from two pools, 10 rounds', async () => {
        const [a, b] = nodes() as [Repos, Repos];
        await a.sources.insert(source('edit-s', { granularities: ['1m', '1h', '1d', '1w'] }));
        const cachedThere = await b.sources.cachedById('edit-s');
        for (let round = 0; round < 10; round++) {
          const results = await Promise.all([
            a.sources.updateSettings('edit-s', (s) => ({ ...s, displayName: `name ${round}` })),
            b.sources.updateSettings('edit-s', (s) => ({ ...s, defaultTimeframe: `${round + 1}d` })),
            a.sources.updateSettings('edit-s', (s) => ({ ...s, expireAfter: 1000 + round })),
            b.sources.updateSettings('edit-s', (s) => ({ ...s, retention: { '1m': `${round + 1}d` } })),
          ]);
          assert.ok(results.every((r) => r?.written));
          const stored = (await a.sources.byId('edit-s'))!;
          assert.deepEqual(
            [stored.displayName, stored.defaultTimeframe, stored.expireAfter, stored.retention],
            [`name ${round}`, `${round + 1}d`, 1000 + round, { '1m': `${round + 1}d` }],
            `round ${round}`,
          );
        }
        assert.notEqual(
          await b.sources.cachedById('edit-s'),
          cachedThere,
          'written through b: dropped at once',
        );
      });

      test('transponders: 3 changes at once from two pools, 10 rounds', async () => {
        const [a, b] = nodes() as [Repos, Repos];
        await a.sources.insert(source('edit-t'));
        await a.transponders.insert(transponder('edit-tr', 'edit-t'), true);
        for (let round = 0; round < 10; round++) {
          await Promise.all([
            a.transponders.update('edit-t', 'edit-tr', (t) => ({ ...t, name: `name ${round}` })),
            b.transponders.update('edit-t', 'edit-tr', (t) => ({ ...t, order: round })),
            b.transponders.update('edit-t', 'edit-tr', (t) => ({ ...t, enabled: round % 2 === 0 })),
          ]);
          const stored = (await a.transponders.get('edit-t', 'edit-tr'))!;
          assert.deepEqual(
            [stored.name, stored.order, stored.enabled],
            [`name ${round}`, round, round % 2 === 0],
            `round ${round}`,
          );
        }
      });

      test('an edit waits for a change of the row in progress, then is made of what it wrote', async () => {
        const { sources, transponders } = pgRepos();
        await sources.insert(source('edit-w'));
        await transponders.insert(transponder('edit-wt', 'edit-w'), true);
        const renaming = await openTransaction([
          ["UPDATE sources SET display_name = 'Renamed elsewhere' WHERE id = $1", ['edit-w']],
          ["UPDATE transponders SET name = 'Renamed elsewhere' WHERE id = $1", ['edit-wt']],
        ]);
        const editing = sources.updateSettings('edit-w', (s) => ({ ...s, defaultTimeframe: '30d' }));
        const changing = transponders.update('edit-w', 'edit-wt', (t) => ({ ...t, key: 'other' }));
        assert.equal(await pendingAfter(editing), true, 'the settings edit waits for the row');
        assert.equal(await pendingAfter(changing, 0), true, 'the transponder change waits for the row');
        await renaming.commit();
        assert.equal((await editing)!.read.displayName, 'Renamed elsewhere');
        const stored = (await sources.byId('edit-w'))!;
        assert.deepEqual([stored.displayName, stored.defaultTimeframe], ['Renamed elsewhere', '30d']);
        assert.deepEqual((await changing)!.name, 'Renamed elsewhere');
        const t = (await transponders.get('edit-w', 'edit-wt'))!;
        assert.deepEqual([t.name, t.key], ['Renamed elsewhere', 'other']);
      });

      test('an edit waiting for a source delete writes nothing and answers undefined', async () => {
        const { sources, transponders } = pgRepos();
        await sources.insert(source('edit-d'));
        await transponders.insert(transponder('edit-dt', 'edit-d'), true);
        const deleting = await openTransaction([['DELETE FROM sources WHERE id = $1', ['edit-d']]]);
        const never = () => assert.fail('no change is made of a row that is gone');
        const editing = sources.updateSettings('edit-d', never);
        const changing = transponders.update('edit-d', 'edit-dt', never);
        assert.equal(await pendingAfter(editing), true, 'the edit waits for the delete');
        await deleting.commit();
        assert.equal(await editing, undefined);
        assert.equal(await changing, null);
        assert.equal(await count('sources WHERE id = $1', ['edit-d']), 0);
      });
    });
  });

  describe("the node caches with another node's changes (time-to-live)", () => {
    /** a node whose listening connection is down: its caches rely on their time-to-live alone */
    let other: PgStore;
    before(() => {
      other = createPgStore(pg.url, { listen: false });
    });
    after(async () => {
      await other?.close();
    });
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    /** Polls `seen` until true; the ms from `since` it took (fails after twice the TTL). */
    async function within(since: number, seen: () => Promise<boolean>): Promise<number> {
      for (;;) {
        if (await seen()) return performance.now() - since;
        if (performance.now() - since > 2 * CLUSTER_CACHE_TTL_MS)
          assert.fail('not seen within twice the TTL');
        await sleep(50);
      }
    }

    test('a token revoked and a source changed through another node are seen here within 2 s', async () => {
      const here = createPgSourcesRepo(other);
      const there = createPgSourcesRepo(pg.store);
      await here.insert(source('ttl-1'));
      await here.insert(source('ttl-2'));
      const unchanged = await here.cachedById('ttl-2');
      assert.equal(await here.insertToken(token('ttl-t', 'ttl-1'), 'project'), true);
      const loaded = performance.now();
      const row = (await here.tokenByHash('hash-ttl-t'))!;
      const cached = (await here.cachedById('ttl-1'))!;
      await there.deleteToken(row);
      await there.updateSettings('ttl-1', (read) => ({ ...read, displayName: 'Changed elsewhere' }));
      assert.equal(await here.tokenByHash('hash-ttl-t'), row, 'kept: no query per look-up');
      assert.equal(await here.cachedById('ttl-1'), cached);
      const revoked = await within(loaded, async () => (await here.tokenByHash('hash-ttl-t')) === undefined);
      const renamed = await within(
        loaded,
        async () => (await here.cachedById('ttl-1'))?.displayName === 'Changed elsewhere',
      );
      assert.ok(
        revoked >= CLUSTER_CACHE_TTL_MS - 50 && revoked < CLUSTER_CACHE_TTL_MS + 1000,
        `revoked after ${revoked} ms`,
      );
      assert.ok(renamed < CLUSTER_CACHE_TTL_MS + 1000, `renamed after ${renamed} ms`);
      assert.equal(
        await here.cachedById('ttl-2'),
        unchanged,
        'read again after the TTL, unchanged: the same object',
      );
    });
  });

  describe("the engine's cache of enabled transponders on PostgreSQL", () => {
    /** a node whose listening connection is down: its cache relies on its time-to-live alone */
    let other: PgStore;
    before(() => {
      other = createPgStore(pg.url, { listen: false });
    });
    after(async () => {
      await other?.close();
    });
    /** prefetch when it asks to be awaited, then enabled: what the engine's read path does */
    async function read(cache: EnabledTransponders, sourceId: string) {
      const loading = cache.prefetch(sourceId);
      if (loading) await loading;
      return cache.enabled(sourceId);
    }
    const ids = (list: readonly Transponder[]) => list.map((t) => t.id);

    test('loaded once per source, made stale at once by every write of the repository on this node', async () => {
      const { sources } = repos[1]!;
      const transponders = createPgTranspondersRepo(pg.store);
      const cache = createPgEnabledTransponders(pg.store);
      await sources.insert(source('en-1'));
      assert.ok(cache.prefetch('en-1') instanceof Promise, 'a first read loads');
      const none = await read(cache, 'en-1');
      assert.deepEqual(none, []);
      assert.equal(cache.prefetch('en-1'), undefined, 'then answers from memory');
      assert.equal(cache.enabled('en-1'), none, 'the same list');
      const t = (await transponders.insert(transponder('en-t1', 'en-1'), true))!;
      await transponders.insert(transponder('en-t0', 'en-1', { order: 0, enabled: false }), false);
      assert.ok(cache.prefetch('en-1') instanceof Promise, 'stale after an insert');
      assert.deepEqual(ids(await read(cache, 'en-1')), ['en-t1'], 'only the enabled ones');
      await transponders.update(t.sourceId, t.id, (read) => ({ ...read, enabled: false }));
      assert.deepEqual(await read(cache, 'en-1'), []);
      await transponders.update(t.sourceId, t.id, (read) => ({ ...read, enabled: true }));
      assert.deepEqual(ids(await read(cache, 'en-1')), ['en-t1']);
      await transponders.remove('en-1', 'en-t1');
      assert.deepEqual(await read(cache, 'en-1'), []);
    });

    test('a change through another node is seen within the time-to-live', async () => {
      const { sources } = repos[1]!;
      const cache = createPgEnabledTransponders(other);
      const there = createPgTranspondersRepo(pg.store);
      await sources.insert(source('en-2'));
      const loaded = performance.now();
      assert.deepEqual(await read(cache, 'en-2'), []);
      await there.insert(transponder('en-t2', 'en-2'), true);
      assert.equal(cache.prefetch('en-2'), undefined, 'another node wrote: this one does not know yet');
      assert.deepEqual(cache.enabled('en-2'), []);
      for (;;) {
        const list = await read(cache, 'en-2');
        if (list.length > 0) {
          assert.deepEqual(ids(list), ['en-t2']);
          break;
        }
        assert.ok(performance.now() - loaded < CLUSTER_CACHE_TTL_MS + 1000, 'seen within the TTL');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const seenAfter = performance.now() - loaded;
      assert.ok(seenAfter >= CLUSTER_CACHE_TTL_MS - 50, `kept for the TTL (${seenAfter} ms)`);
    });

    test('an unchanged reload keeps the same list; a load begun before a write is not kept as fresh', async () => {
      const { sources } = repos[1]!;
      const transponders = createPgTranspondersRepo(pg.store);
      const cache = createPgEnabledTransponders(pg.store, 30);
      await sources.insert(source('en-3'));
      const t = (await transponders.insert(transponder('en-t3', 'en-3'), true))!;
      const first = await read(cache, 'en-3');
      await new Promise((resolve) => setTimeout(resolve, 60));
      const loading = cache.prefetch('en-3');
      assert.ok(loading instanceof Promise, 'expired: loads again');
      await loading;
      assert.equal(
        cache.enabled('en-3'),
        first,
        'unchanged: the same object (the answer cache compares by identity)',
      );
      const slow = createPgEnabledTransponders(pg.store, 60_000);
      await read(slow, 'en-3');
      await transponders.update(t.sourceId, t.id, (read) => ({ ...read, name: 'renamed' })); // stale for every reader of this store
      const racing = slow.prefetch('en-3')!;
      await transponders.update(t.sourceId, t.id, (read) => ({ ...read, name: 'renamed again' }));
      await racing;
      assert.ok(slow.prefetch('en-3') instanceof Promise, 'the load that began before the write is stale');
      assert.equal((await read(slow, 'en-3'))[0]!.name, 'renamed again');
    });

    test('a source never prefetched is refused with a 503, not answered with no transponders', () => {
      const cache = createPgEnabledTransponders(pg.store);
      assert.throws(
        () => cache.enabled('never-read'),
        (err: unknown) => err instanceof AppError && err.status === 503,
      );
    });

    test('the metrics engine applies the transponders of the PostgreSQL cache to its reads', async () => {
      const { sources } = repos[1]!;
      const transponders = createPgTranspondersRepo(pg.store);
      const project = projectSource({ id: 'en-engine', organizationId: 'org-a' });
      await sources.insert(project);
      const engineDir = mkdtempSync(path.join(os.tmpdir(), 'pg-engine-test-'));
      const engineDb = openDatabase(path.join(engineDir, 'service.db'));
      migrate(engineDb);
      const engine = createMetricsEngine({
        db: engineDb,
        config: {
          limits: { maxBodyBytes: 1 << 20, sqliteUploadMaxBytes: 1 << 20, writeQueueMaxPoints: 100_000 },
          features: { projectsEnabled: true, registrationEnabled: true },
        },
        enabledTransponders: createPgEnabledTransponders(pg.store),
      });
      try {
        await engine.ingest(project, {
          key: 'api',
          at: '2025-03-04T11:15:00Z',
          values: { requests: { errors: 1, count: 4 } },
        });
        const query = {
          key: 'api',
          from: '2025-03-04T11:00:00Z',
          to: '2025-03-04T11:00:00Z',
          granularity: '1h',
        };
        const plain = await engine.series(project, query);
        assert.deepEqual(JSON.parse(plain.values[0]!), { requests: { errors: 1, count: 4 } });
        await transponders.insert(transponder('en-rate', 'en-engine'), true);
        const derived = await engine.series(project, query);
        assert.equal(
          JSON.parse(derived.values[0]!).requests.error_rate,
          25,
          'the new transponder applies at once',
        );
      } finally {
        await engine.close();
        engineDb.close();
        rmSync(engineDir, { recursive: true, force: true });
      }
    });
  });
});
