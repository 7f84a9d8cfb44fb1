// The PostgreSQL twins of the dashboards, channels and outbox repositories (src/storage/pg/*.ts,
// cluster mode): the same calls on SQLite and on PostgreSQL give the same answers (rows, order,
// booleans, refusals), and their atomic units hold under real concurrency on PostgreSQL, from one
// pool and from several (as several nodes would). Against the local PostgreSQL (a scratch database,
// dropped at the end); skipped without one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createDashboardsRepo } from '../../src/storage/dashboards';
import { createChannelsRepo, type StoredChannel } from '../../src/storage/channels';
import { createOutboxRepo, type NewOutboxRow } from '../../src/storage/outbox';
import { createPgDashboardsRepo } from '../../src/storage/pg/dashboards';
import { createPgChannelsRepo } from '../../src/storage/pg/channels';
import { createPgOutboxRepo } from '../../src/storage/pg/outbox';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import type { Dashboard, DashboardGroup } from '../../src/model/dashboard';
import { pgSkip, scratchPgStore, type ScratchStore } from '../helpers/pg-store';

const ORG = 'org-a';
const OTHER_ORG = 'org-b';
const USER = 'user-1';

/** Runs one statement on both databases ($1, $2, ... in the order of `params`). */
async function seedBoth(db: Db, store: PgStore, sql: string, params: unknown[] = []): Promise<void> {
  db.prepare(sql.replace(/\$\d+/g, '?')).run(...params);
  await store.run(sql, params);
}

async function seedParents(db: Db, store: PgStore): Promise<void> {
  await seedBoth(
    db,
    store,
    "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES ($1, 'a@b.c', 'a@b.c', 'A', 'x', 0)",
    [USER],
  );
  for (const [org, slug] of [
    [ORG, 'a'],
    [OTHER_ORG, 'b'],
  ])
    await seedBoth(
      db,
      store,
      "INSERT INTO organizations (id, name, slug, created_at) VALUES ($1, 'Org', $2, 0)",
      [org, slug],
    );
  for (const [id, org] of [
    ['src-1', ORG],
    ['src-2', ORG],
    ['src-other', OTHER_ORG],
  ])
    await seedBoth(
      db,
      store,
      `INSERT INTO sources (id, organization_id, type, display_name, time_zone, beginning_of_week, granularities,
         default_timeframe, default_granularity, created_at)
       VALUES ($1, $2, 'project', $3, 'UTC', 1, '["1h"]', '24h', '1h', 0)`,
      [id, org, id],
    );
}

function dashboard(id: string, over: Partial<Dashboard> = {}): Dashboard {
  return {
    id,
    organizationId: ORG,
    userId: USER,
    sourceType: 'project',
    sourceId: 'src-1',
    databaseId: null,
    groupId: null,
    name: id,
    key: `key.${id}`,
    visibility: true,
    locked: false,
    position: 0,
    defaultTimeframe: '24h',
    defaultGranularity: '1h',
    payload: { widgets: [{ id: 'w', title: id }] },
    segments: [],
    insertedAt: 1_000,
    updatedAt: 1_000,
    updatedBy: USER,
    ...over,
  };
}

const group = (id: string, over: Partial<DashboardGroup> = {}): DashboardGroup => ({
  id,
  organizationId: ORG,
  name: id,
  position: 0,
  insertedAt: 1_000,
  updatedAt: 1_000,
  updatedBy: null,
  ...over,
});

function channel(id: string, over: Partial<StoredChannel> = {}): StoredChannel {
  return {
    id,
    organizationId: ORG,
    name: id,
    type: 'webhook',
    preset: null,
    settings: { url: `https://example.test/${id}` },
    secrets: { token: `enc:v1:${id}` },
    insertedAt: 1_000,
    updatedAt: 1_000,
    ...over,
  };
}

const outboxRow = (key: string, over: Partial<NewOutboxRow> = {}): NewOutboxRow => ({
  idempotency_key: key,
  organization_id: ORG,
  monitor_id: 'mon-1',
  channel_id: 'ch-1',
  notification: JSON.stringify({ key }),
  created_at: 1_000,
  ...over,
});

describe('PostgreSQL dashboards, channels and outbox repositories', { skip: pgSkip() }, () => {
  let scratch: ScratchStore;
  let store: PgStore;
  let dir: string;
  let db: Db;
  /** more pools on the same database: other nodes */
  const nodes: PgStore[] = [];

  before(async () => {
    scratch = await scratchPgStore();
    store = scratch.store;
    for (let i = 0; i < 2; i++) nodes.push(createPgStore(scratch.url, { max: 5 }));
    dir = mkdtempSync(path.join(os.tmpdir(), 'pg-dashboards-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
    await seedParents(db, store);
  });
  after(async () => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await Promise.all(nodes.map((n) => n.close()));
    await scratch?.drop();
  });

  /** The same call on both repositories: the answers must be equal; returns SQLite's. */
  function differential<R>(sqlite: R, pg: R) {
    return async <T>(label: string, call: (repo: R) => Promise<T>): Promise<T> => {
      const expected = await call(sqlite);
      const actual = await call(pg);
      assert.deepEqual(actual, expected, label);
      return expected;
    };
  }

  test('dashboards and groups: every method answers as on SQLite', async () => {
    const both = differential(createDashboardsRepo(db), createPgDashboardsRepo(store));

    // at the end: last + 1 (hidden ones count), mixed-case names, explicit positions and ties
    const placed = await both('first at end', (r) => r.insert(dashboard('d-1', { name: 'beta' }), true));
    assert.equal(placed?.position, 1);
    await both('second at end', (r) =>
      r.insert(dashboard('d-2', { name: 'Alpha', insertedAt: 1_001 }), true),
    );
    await both('hidden at end', (r) =>
      r.insert(dashboard('d-3', { name: 'alpha', visibility: false, insertedAt: 1_002 }), true),
    );
    await both('after the hidden one', (r) =>
      r.insert(dashboard('d-4', { name: 'Zeta', insertedAt: 1_003, locked: true }), true),
    );
    await both('explicit position 2, later', (r) =>
      r.insert(dashboard('D-5', { name: '_under', position: 2, insertedAt: 1_004 }), false),
    );
    await both('explicit position 2, earlier', (r) =>
      r.insert(dashboard('d-6', { name: 'zeta', position: 2, insertedAt: 999 }), false),
    );
    await both('explicit position 0', (r) =>
      r.insert(dashboard('d-7', { name: 'Beta', position: 0, insertedAt: 1_005, updatedBy: null }), false),
    );
    // a database dashboard of the other source, with segments and a non-BMP payload
    await both('database dashboard', (r) =>
      r.insert(
        dashboard('d-8', {
          sourceId: 'src-2',
          sourceType: 'database',
          databaseId: 'src-2',
          position: 10,
          insertedAt: 1_006,
          payload: { title: '😀'.repeat(40), nested: { a: [1, 2.5, null, true] } },
          segments: [{ name: 'region', values: ['eu', 'us'] }],
        }),
        false,
      ),
    );
    await both('end after explicit positions', (r) =>
      r.insert(dashboard('d-9', { insertedAt: 1_007 }), true),
    );

    // refusals: a parent gone or another organization's
    assert.equal(
      await both('missing source', (r) => r.insert(dashboard('x-1', { sourceId: 'nope' }), true)),
      undefined,
    );
    assert.equal(
      await both("another organization's source", (r) =>
        r.insert(dashboard('x-2', { sourceId: 'src-other' }), true),
      ),
      undefined,
    );
    assert.equal(
      await both('missing group', (r) => r.insert(dashboard('x-3', { groupId: 'g-none' }), false)),
      undefined,
    );

    // reads
    const all = await both('listVisible', (r) => r.listVisible(ORG, 100, 0, 8 * 1024 * 1024));
    assert.deepEqual(
      all.map((d) => d.id),
      ['d-7', 'd-1', 'd-6', 'd-2', 'D-5', 'd-4', 'd-8', 'd-9'],
    );
    await both('page 2', (r) => r.listVisible(ORG, 3, 2, 8 * 1024 * 1024));
    await both('past the end', (r) => r.listVisible(ORG, 3, 50, 8 * 1024 * 1024));
    await both('other organization', (r) => r.listVisible(OTHER_ORG, 10, 0, 8 * 1024 * 1024));
    // the byte cut: at least one, and where the running total of stored text passes maxBytes
    // (UTF-16 units on both; the 40 emoji of d-8 count twice there)
    const sizes = all.map((d) => JSON.stringify(d.payload).length + JSON.stringify(d.segments).length);
    for (const maxBytes of [0, 1, sizes[0]!, sizes[0]! + sizes[1]! - 1, sizes[0]! + sizes[1]!]) {
      await both(`cut at ${maxBytes}`, (r) => r.listVisible(ORG, 100, 0, maxBytes));
    }
    const e = all.findIndex((d) => d.id === 'd-8');
    const beforeEmoji = sizes.slice(0, e).reduce((a, b) => a + b, 0);
    // the emoji row holds 40 more UTF-16 units than characters: cut just below, inside, at its end
    for (const [extra, kept] of [
      [sizes[e]! - 41, e],
      [sizes[e]! - 40, e],
      [sizes[e]! - 1, e],
      [sizes[e]!, e + 1],
    ] as const) {
      const page = await both(`cut inside the emoji row (+${extra})`, (r) =>
        r.listVisible(ORG, 100, 0, beforeEmoji + extra),
      );
      assert.equal(page.length, kept, `+${extra}`);
    }
    // PostgreSQL sends only the rows the cut can keep, plus at most one: not the whole page
    let sent = 0;
    const counting: PgStore = {
      ...store,
      rows: async <T>(text: string, params?: readonly unknown[]) => {
        const rows = await store.rows<T>(text, params);
        sent = rows.length;
        return rows;
      },
    };
    const pgCounted = createPgDashboardsRepo(counting);
    assert.equal((await pgCounted.listVisible(ORG, 100, 0, 1)).length, 1);
    assert.equal(sent, 1);
    assert.equal((await pgCounted.listVisible(ORG, 100, 0, sizes[0]! + 1)).length, 1);
    assert.equal(sent, 2);
    assert.equal((await pgCounted.listVisible(ORG, 100, 0, 8 * 1024 * 1024)).length, 8);
    assert.equal(sent, 8);
    assert.equal(await both('countVisible', (r) => r.countVisible(ORG)), 8);
    await both('countVisible, none', (r) => r.countVisible('org-none'));
    await both('byId', (r) => r.byId('d-8', ORG));
    await both('byId hidden', (r) => r.byId('d-3', ORG));
    await both('byId mixed-case id', (r) => r.byId('D-5', ORG));
    assert.equal(await both('byId of another organization', (r) => r.byId('d-1', OTHER_ORG)), undefined);
    await both('byId missing', (r) => r.byId('d-404', ORG));

    // groups
    await both('group at end', (r) => r.insertGroup(group('g-1', { name: 'ops' }), true));
    await both('group at end 2', (r) =>
      r.insertGroup(group('g-2', { name: 'Ops', insertedAt: 1_001 }), true),
    );
    await both('group explicit', (r) =>
      r.insertGroup(group('g-3', { name: 'ABC', position: 1, insertedAt: 1_002 }), false),
    );
    await both('group explicit earlier', (r) =>
      r.insertGroup(group('G-4', { name: 'abc', position: 1, insertedAt: 900, updatedBy: USER }), false),
    );
    await both('group of the other organization', (r) =>
      r.insertGroup(group('g-other', { organizationId: OTHER_ORG }), true),
    );
    assert.deepEqual(
      (await both('listGroups', (r) => r.listGroups(ORG, 10, 0))).map((g) => g.id),
      ['G-4', 'g-1', 'g-3', 'g-2'],
    );
    await both('listGroups page', (r) => r.listGroups(ORG, 2, 1));
    await both('countGroups', (r) => r.countGroups(ORG));
    await both('groupById', (r) => r.groupById('g-3', ORG));
    assert.equal(await both('groupById other org', (r) => r.groupById('g-other', ORG)), undefined);
    assert.equal(
      await both('updateGroup at its version', (r) =>
        r.updateGroup(
          group('g-2', { name: 'Renamed', position: 7, insertedAt: 1_001, updatedAt: 2_000 }),
          1_000,
        ),
      ),
      true,
    );
    assert.equal(
      await both('updateGroup at an old version', (r) =>
        r.updateGroup(group('g-2', { name: 'Lost', updatedAt: 2_001 }), 1_000),
      ),
      false,
    );
    assert.equal(await both('updateGroup missing', (r) => r.updateGroup(group('g-404'), 1_000)), false);
    assert.equal(
      await both('updateGroup of another organization', (r) =>
        r.updateGroup(group('g-other', { name: 'x', updatedAt: 3_000 }), 1_000),
      ),
      false,
    );
    await both('group after update', (r) => r.groupById('g-2', ORG));
    await both('into a group', (r) =>
      r.insert(dashboard('d-10', { groupId: 'g-1', insertedAt: 1_008 }), true),
    );
    assert.equal(
      await both("another organization's group", (r) =>
        r.insert(dashboard('x-4', { groupId: 'g-other', insertedAt: 1_008 }), true),
      ),
      undefined,
    );

    // update: only at the version read, only with its parents there
    const d1 = (await both('read d-1', (r) => r.byId('d-1', ORG)))!;
    assert.equal(
      await both('update at its version', (r) =>
        r.update(
          { ...d1, name: 'Renamed', groupId: 'g-1', payload: { v: 2 }, updatedAt: 2_000, updatedBy: null },
          1_000,
        ),
      ),
      true,
    );
    assert.equal(
      await both('update at an old version', (r) =>
        r.update({ ...d1, name: 'Lost', updatedAt: 2_001 }, 1_000),
      ),
      false,
    );
    assert.equal(await both('update missing', (r) => r.update(dashboard('d-404'), 1_000)), false);
    assert.equal(
      await both('update into a missing group', (r) =>
        r.update({ ...d1, groupId: 'g-404', updatedAt: 2_002 }, 2_000),
      ),
      false,
    );
    assert.equal(
      await both('update onto a missing source', (r) =>
        r.update({ ...d1, sourceId: 'nope', updatedAt: 2_002 }, 2_000),
      ),
      false,
    );
    assert.equal(
      await both('update of another organization', (r) =>
        r.update({ ...d1, organizationId: OTHER_ORG, sourceId: 'src-other', updatedAt: 2_002 }, 2_000),
      ),
      false,
    );
    await both('after updates', (r) => r.byId('d-1', ORG));

    // removeGroup: its dashboards stay, ungrouped and marked as updated
    await both('remove group g-1', (r) => r.removeGroup('g-1', ORG, 5_000));
    await both('ungrouped d-1', (r) => r.byId('d-1', ORG));
    assert.equal((await both('ungrouped d-10', (r) => r.byId('d-10', ORG)))?.updatedAt, 5_000);
    assert.equal(await both('group gone', (r) => r.groupById('g-1', ORG)), undefined);
    await both('remove missing group', (r) => r.removeGroup('g-404', ORG, 6_000));
    await both("remove another organization's group", (r) => r.removeGroup('g-other', ORG, 6_000));
    assert.ok(await both('other group still there', (r) => r.groupById('g-other', OTHER_ORG)));
    await both('groups after', (r) => r.listGroups(ORG, 10, 0));

    // remove: only at the version read
    assert.equal(await both('remove at an old version', (r) => r.remove('d-1', ORG, 2_000)), false);
    assert.equal(await both('remove at its version', (r) => r.remove('d-1', ORG, 5_000)), true);
    assert.equal(await both('remove again', (r) => r.remove('d-1', ORG, 5_000)), false);
    assert.equal(
      await both('remove of another organization', (r) => r.remove('d-2', OTHER_ORG, 1_000)),
      false,
    );
    await both('final list', (r) => r.listVisible(ORG, 100, 0, 8 * 1024 * 1024));
    await both('final count', (r) => r.countVisible(ORG));
  });

  test('channels: every method answers as on SQLite, the cap included', async () => {
    const channelRepos = [createChannelsRepo(db), createPgChannelsRepo(store)] as const;
    const both = differential(...channelRepos);
    // same inserted_at: the id breaks the tie in byte order (upper case first)
    for (const [id, name, at] of [
      ['ch-b', 'beta', 1_000],
      ['CH-Z', 'Alpha', 1_000],
      ['ch-a', 'alpha', 1_000],
      ['ch-0', 'Zed', 900],
    ] as const)
      assert.equal(
        await both(`insert ${id}`, (r) => r.insert(channel(id, { name, insertedAt: at }), 5)),
        true,
      );
    await both('insert with a preset', (r) =>
      r.insert(channel('ch-slack', { preset: 'slack', settings: {}, secrets: {}, insertedAt: 2_000 }), 5),
    );
    assert.equal(
      await both('insert at the cap', (r) => r.insert(channel('ch-over', { insertedAt: 3_000 }), 5)),
      false,
    );
    assert.equal(await both('count', (r) => r.count(ORG)), 5);
    assert.equal(
      await both('insert in the other organization', (r) =>
        r.insert(channel('ch-o', { organizationId: OTHER_ORG }), 5),
      ),
      true,
    );
    assert.deepEqual(
      (await both('list', (r) => r.list(ORG))).map((c) => c.id),
      ['ch-0', 'CH-Z', 'ch-a', 'ch-b', 'ch-slack'],
    );
    await both('list, none', (r) => r.list('org-none'));
    await both('get', (r) => r.get(ORG, 'ch-slack'));
    assert.equal(await both('get of another organization', (r) => r.get(OTHER_ORG, 'ch-a')), null);
    assert.equal(await both('exists', (r) => r.exists(ORG, 'CH-Z')), true);
    assert.equal(await both('exists, other case', (r) => r.exists(ORG, 'ch-z')), false);
    assert.equal(await both('exists, other organization', (r) => r.exists(OTHER_ORG, 'ch-a')), false);
    const changed = await both('update', (r) =>
      r.update(ORG, 'ch-a', (read) => ({
        ...read,
        name: 'Changed',
        type: 'ntfy',
        preset: null,
        settings: { topic: 't' },
        updatedAt: 2_000,
        // what the repository writes no matter what the change says
        id: 'ch-other',
        organizationId: OTHER_ORG,
        insertedAt: 9_999,
      })),
    );
    assert.deepEqual(
      changed,
      channel('ch-a', { name: 'Changed', type: 'ntfy', settings: { topic: 't' }, updatedAt: 2_000 }),
      'the name, type, preset, settings, secrets and updatedAt changed, nothing else',
    );
    assert.deepEqual(await both('after update', (r) => r.get(ORG, 'ch-a')), changed);
    const never = () => assert.fail('no change is made of a channel that is not there');
    assert.equal(await both('update missing', (r) => r.update(ORG, 'ch-404', never)), null);
    assert.equal(
      await both('update of another organization', (r) => r.update(OTHER_ORG, 'ch-a', never)),
      null,
    );
    for (const repo of channelRepos)
      await assert.rejects(
        repo.update(ORG, 'ch-a', (read) => {
          assert.equal(read.name, 'Changed');
          throw new Error('refused');
        }),
        /refused/,
      );
    await both('nothing written by a change that throws', (r) => r.get(ORG, 'ch-a'));
    assert.equal(await both('remove', (r) => r.remove(ORG, 'ch-b')), true);
    assert.equal(await both('remove again', (r) => r.remove(ORG, 'ch-b')), false);
    assert.equal(await both('remove of another organization', (r) => r.remove(OTHER_ORG, 'ch-a')), false);
    assert.equal(
      await both('room again under the cap', (r) => r.insert(channel('ch-c', { insertedAt: 3_000 }), 5)),
      true,
    );
    // a damaged row reads as empty settings and secrets on both
    await seedBoth(
      db,
      store,
      `INSERT INTO channels (id, organization_id, name, type, preset, settings, secrets, inserted_at, updated_at)
       VALUES ($1, $2, 'bad', 'email', NULL, 'not json', '{"token": 5, "ok": "enc:v1:x"}', 4000, 4000)`,
      ['ch-bad', OTHER_ORG],
    );
    await both('damaged row', (r) => r.get(OTHER_ORG, 'ch-bad'));
    await both('final list', (r) => r.list(ORG));
    await both('other list', (r) => r.list(OTHER_ORG));
  });

  test('outbox: every method answers as on SQLite, ids and the due order included', async () => {
    const both = differential(createOutboxRepo(db), createPgOutboxRepo(store));
    assert.equal(await both('nextDue, empty', (r) => r.nextDue()), null);
    assert.deepEqual(await both('due, empty', (r) => r.due(10_000, 10)), []);
    for (const [key, at, monitor] of [
      ['k-1', 1_000, 'mon-1'],
      ['k-2', 500, 'mon-2'],
      ['k-3', 1_000, null],
      ['k-4', 500, 'mon-1'],
      ['k-5', 20_000, 'mon-1'],
    ] as const)
      assert.equal(
        await both(`insert ${key}`, (r) => r.insert(outboxRow(key, { created_at: at, monitor_id: monitor }))),
        true,
      );
    assert.equal(await both('duplicate key', (r) => r.insert(outboxRow('k-1', { created_at: 7 }))), false);
    // a row after the duplicate gets the next id on both
    await both('insert after the duplicate', (r) => r.insert(outboxRow('k-6', { created_at: 1_000 })));
    const due = await both('due', (r) => r.due(10_000, 10));
    assert.deepEqual(
      due.map((row) => row.idempotency_key),
      ['k-2', 'k-4', 'k-1', 'k-3', 'k-6'],
    );
    await both('due, limited', (r) => r.due(10_000, 2));
    await both('due, none yet', (r) => r.due(499, 10));
    assert.equal(await both('nextDue', (r) => r.nextDue()), 500);
    const [first, second, third] = due;
    assert.equal(await both('claim', (r) => r.claim(first!.id)), true);
    assert.equal(await both('claim again', (r) => r.claim(first!.id)), false);
    assert.equal(await both('claim missing', (r) => r.claim(9_999)), false);
    assert.equal(await both('claim second', (r) => r.claim(second!.id)), true);
    assert.equal(await both('claim third', (r) => r.claim(third!.id)), true);
    await both('markSent', (r) => r.markSent(first!.id, 1_234));
    await both('retryAt', (r) => r.retryAt(second!.id, 3_000, 'HTTP 503'));
    await both('markFailed', (r) => r.markFailed(third!.id, 'HTTP 404'));
    assert.equal(await both('claim a sent row', (r) => r.claim(first!.id)), false);
    assert.equal(await both('claim a failed row', (r) => r.claim(third!.id)), false);
    await both('due after', (r) => r.due(10_000, 10));
    await both('byMonitor', (r) => r.byMonitor('mon-1'));
    await both('byMonitor, none', (r) => r.byMonitor('mon-404'));
    // rows left sending by a stop
    assert.equal(await both('claim retried', (r) => r.claim(second!.id)), true);
    assert.equal(await both('claim k-3', (r) => r.claim(due[3]!.id)), true);
    assert.equal(await both('resumeInterrupted', (r) => r.resumeInterrupted()), 2);
    assert.equal(await both('resumeInterrupted, none', (r) => r.resumeInterrupted()), 0);
    await both('nextDue after', (r) => r.nextDue());
    const all = await both('all', (r) => r.all());
    assert.equal(all.length, 6);
    assert.equal(typeof all[0]!.id, 'number');
  });

  describe('atomic units under concurrency (PostgreSQL)', () => {
    const CONC_ORG = 'org-c';
    const POS_ORG = 'org-pos';
    before(async () => {
      for (const org of [CONC_ORG, POS_ORG]) {
        await store.run("INSERT INTO organizations (id, name, slug, created_at) VALUES ($1, 'C', $1, 0)", [
          org,
        ]);
        await store.run(
          `INSERT INTO sources (id, organization_id, type, display_name, time_zone, beginning_of_week, granularities,
             default_timeframe, default_granularity, created_at)
           VALUES ($1, $2, 'project', 'c', 'UTC', 1, '["1h"]', '24h', '1h', 0)`,
          [`src-${org}`, org],
        );
      }
    });
    /** the repositories of each pool: this node's and the two others' */
    const repos = () => [store, ...nodes].map((s) => createPgDashboardsRepo(s));

    test('two updates at one version: exactly one writes', async () => {
      const [a, b] = repos();
      const base = dashboard('c-upd', { organizationId: CONC_ORG, sourceId: `src-${CONC_ORG}` });
      await a!.insert(base, false);
      for (let round = 0; round < 10; round++) {
        const from = 1_000 + round;
        const results = await Promise.all([
          a!.update({ ...base, name: `a${round}`, updatedAt: from + 1 }, from),
          b!.update({ ...base, name: `b${round}`, updatedAt: from + 1 }, from),
        ]);
        assert.equal(results.filter(Boolean).length, 1, `round ${round}: ${results}`);
        const stored = await a!.byId('c-upd', CONC_ORG);
        assert.equal(stored?.name, results[0] ? `a${round}` : `b${round}`);
      }
      // groups and removal the same way
      await a!.insertGroup(group('c-g', { organizationId: CONC_ORG }), true);
      const groupResults = await Promise.all(
        repos().map((r, i) =>
          r.updateGroup(group('c-g', { organizationId: CONC_ORG, name: `n${i}`, updatedAt: 2_000 }), 1_000),
        ),
      );
      assert.equal(groupResults.filter(Boolean).length, 1);
      const removal = await Promise.all([
        a!.remove('c-upd', CONC_ORG, 1_010),
        b!.update({ ...base, name: 'late', updatedAt: 1_011 }, 1_010),
      ]);
      assert.equal(removal.filter(Boolean).length, 1, `remove vs update: ${removal}`);
    });

    test('20 dashboards inserted at the end at once get positions 1..20', async () => {
      const all = repos();
      const placed = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          all[i % all.length]!.insert(
            dashboard(`pos-${i}`, { organizationId: POS_ORG, sourceId: `src-${POS_ORG}` }),
            true,
          ),
        ),
      );
      const expected = Array.from({ length: 20 }, (_, i) => i + 1);
      assert.deepEqual(
        placed.map((d) => d!.position).sort((a, b) => a - b),
        expected,
      );
      const stored = await store.rows<{ position: number }>(
        'SELECT position FROM dashboards WHERE organization_id = $1 ORDER BY position',
        [POS_ORG],
      );
      assert.deepEqual(
        stored.map((r) => r.position),
        expected,
      );
      // groups the same way
      const groups = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          all[i % all.length]!.insertGroup(group(`pos-g-${i}`, { organizationId: POS_ORG }), true),
        ),
      );
      assert.deepEqual(
        groups.map((g) => g.position).sort((a, b) => a - b),
        expected,
      );
    });

    test('a group removed while a dashboard is inserted into it: refused, or there and ungrouped', async () => {
      const [a, b] = repos();
      for (let round = 0; round < 10; round++) {
        const g = `c-race-g-${round}`;
        const d = `c-race-d-${round}`;
        await a!.insertGroup(group(g, { organizationId: CONC_ORG }), true);
        const [inserted] = await Promise.all([
          b!.insert(
            dashboard(d, { organizationId: CONC_ORG, sourceId: `src-${CONC_ORG}`, groupId: g }),
            true,
          ),
          a!.removeGroup(g, CONC_ORG, 9_000),
        ]);
        const stored = await a!.byId(d, CONC_ORG);
        if (inserted === undefined) assert.equal(stored, undefined);
        else {
          assert.equal(stored?.groupId, null);
          assert.equal(stored?.updatedAt, 9_000, 'ungrouped by removeGroup, so marked as updated');
        }
      }
    });

    test('150 channels inserted at once against the cap of 100: exactly 100', async () => {
      const all = [store, ...nodes].map((s) => createPgChannelsRepo(s));
      const results = await Promise.all(
        Array.from({ length: 150 }, (_, i) =>
          all[i % all.length]!.insert(
            channel(`c-ch-${i}`, { organizationId: CONC_ORG, insertedAt: 1_000 + i }),
            100,
          ),
        ),
      );
      assert.equal(results.filter(Boolean).length, 100);
      assert.equal(await all[0]!.count(CONC_ORG), 100);
    });

    test('channel changes of different fields at once from 3 pools: every field kept (10 rounds)', async () => {
      const all = [store, ...nodes].map((s) => createPgChannelsRepo(s));
      const c = channel('c-edit', { organizationId: CONC_ORG });
      assert.equal(await all[0]!.insert(c, 1_000), true);
      for (let round = 0; round < 10; round++) {
        const results = await Promise.all([
          all[0]!.update(CONC_ORG, c.id, (read) => ({ ...read, name: `name ${round}` })),
          all[1]!.update(CONC_ORG, c.id, (read) => ({
            ...read,
            settings: { ...read.settings, url: `https://example.test/${round}` },
          })),
          all[2]!.update(CONC_ORG, c.id, (read) => ({
            ...read,
            secrets: { token: `enc:v1:${round}` },
            updatedAt: 2_000 + round,
          })),
        ]);
        assert.ok(results.every((r) => r !== null));
        const stored = (await all[0]!.get(CONC_ORG, c.id))!;
        assert.deepEqual(
          [stored.name, stored.settings.url, stored.secrets.token, stored.updatedAt],
          [`name ${round}`, `https://example.test/${round}`, `enc:v1:${round}`, 2_000 + round],
          `round ${round}`,
        );
      }
    });

    test('a channel change waits for a change of the row in progress, then is made of what it wrote', async () => {
      const repo = createPgChannelsRepo(nodes[0]!);
      const c = channel('c-wait', { organizationId: CONC_ORG });
      assert.equal(await repo.insert(c, 1_000), true);
      const client = await store.pool.connect();
      try {
        await client.query('BEGIN');
        await client.query("UPDATE channels SET name = 'Renamed elsewhere' WHERE id = $1", [c.id]);
        let settled = false;
        const changing = repo.update(CONC_ORG, c.id, (read) => ({ ...read, preset: 'slack' }));
        void changing.finally(() => (settled = true));
        await new Promise((resolve) => setTimeout(resolve, 150));
        assert.equal(settled, false, 'the change waits for the row');
        await client.query('COMMIT');
        assert.equal((await changing)!.name, 'Renamed elsewhere');
      } finally {
        client.release();
      }
      const stored = (await repo.get(CONC_ORG, c.id))!;
      assert.deepEqual([stored.name, stored.preset], ['Renamed elsewhere', 'slack']);
    });

    test('one outbox row claimed 10 times at once from 3 pools: exactly one claim', async () => {
      const all = [store, ...nodes].map((s) => createPgOutboxRepo(s));
      for (let round = 0; round < 5; round++) {
        assert.equal(
          await all[0]!.insert(outboxRow(`c-claim-${round}`, { organization_id: CONC_ORG })),
          true,
        );
        const [row] = (await all[0]!.all()).filter((r) => r.idempotency_key === `c-claim-${round}`);
        const claims = await Promise.all(
          Array.from({ length: 10 }, (_, i) => all[i % all.length]!.claim(row!.id)),
        );
        assert.equal(claims.filter(Boolean).length, 1, `round ${round}`);
        const [after] = (await all[1]!.all()).filter((r) => r.id === row!.id);
        assert.equal(after?.status, 'sending');
        assert.equal(after?.attempts, 1);
      }
    });
  });
});
