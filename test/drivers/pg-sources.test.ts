// The PostgreSQL sources, shares and transponders repositories (src/storage/pg/{sources,shares,
// transponders}.ts) against their SQLite twins: the same calls on both give the same answers; then
// their atomic units under real concurrency on PostgreSQL, and the node caches' time-to-live
// (a change through another node seen within 2 s, a change through this node at once).
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
  type Transponder,
  type TranspondersRepo,
} from '../../src/storage/transponders';
import { createPgSourcesRepo } from '../../src/storage/pg/sources';
import { createPgSharesRepo } from '../../src/storage/pg/shares';
import { createPgTranspondersRepo } from '../../src/storage/pg/transponders';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { CLUSTER_CACHE_TTL_MS } from '../../src/lib/expiring-cache';
import type { Source } from '../../src/model/source';
import { pgSkip, scratchPgStore, type ScratchStore } from '../helpers/pg-store';

const skip = pgSkip();

interface Repos {
  name: 'sqlite' | 'postgres';
  sources: SourcesRepo;
  shares: SharesRepo;
  transponders: TranspondersRepo;
}

function source(id: string, patch: Partial<Source> = {}): Source {
  return {
    id,
    organizationId: 'org-a',
    type: 'project',
    displayName: `Source ${id}`,
    driver: null,
    timeZone: 'UTC',
    beginningOfWeek: 1,
    granularities: ['1m', '1h', '1d'],
    defaultTimeframe: '24h',
    defaultGranularity: '1h',
    expireAfter: null,
    retention: null,
    projectClusterId: null,
    config: {},
    setupStatus: null,
    createdAt: 1000,
    ...patch,
  };
}

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
      const updated = {
        ...source('p-a'),
        displayName: 'Renamed',
        timeZone: 'Europe/Paris',
        granularities: ['1h'],
      };
      await both(
        (r) => r.sources.updateSettings({ ...updated, retention: { '1h': '30d' } }),
        'updateSettings',
      );
      await both((r) => r.sources.setConfig('P-B', { cluster_id: 'c2' }), 'setConfig');
      for (const id of ['p-a', 'P-B']) {
        await both((r) => r.sources.byId(id), `byId ${id} after the edits`);
        await both((r) => r.sources.cachedById(id), `cachedById ${id} after the edits: dropped at once`);
      }
      await both(
        (r) => r.sources.updateSettings(source('p-c', { retention: null })),
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
      const changed = { ...read, name: 'renamed', paths: ['x'], enabled: false, order: 9, updatedAt: 5000 };
      assert.equal(await both((r) => r.transponders.update(changed), 'update'), true);
      assert.equal(
        await both(
          (r) => r.transponders.update({ ...changed, sourceId: 'tr-other' }),
          'update via another source',
        ),
        false,
      );
      await both((r) => r.transponders.list('tr-src'), 'list after the update');
      assert.equal(
        await both((r) => r.transponders.remove('tr-other', 'tr-b'), 'remove via another source'),
        false,
      );
      assert.equal(await both((r) => r.transponders.remove('tr-src', 'tr-b'), 'remove'), true);
      assert.equal(await both((r) => r.transponders.remove('tr-src', 'tr-b'), 'remove again'), false);
      assert.equal(await both((r) => r.transponders.update(changed), 'update of a removed one'), false);
      await both((r) => r.transponders.insert(transponder('tr-3', 'tr-src'), true), 'at the end again');
      await both((r) => r.transponders.list('tr-src'), 'final list');
    });
  });
});
