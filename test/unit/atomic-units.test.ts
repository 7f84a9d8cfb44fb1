// The repository methods that keep a check and its write together (docs/cluster.md, "Step 1 as
// built"): each refuses when what the caller checked no longer holds, and then writes nothing.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mintToken, SOURCE_TOKEN_PREFIX } from '../../src/lib/tokens';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createAccountsRepo, type InvitationRow, type MembershipRow } from '../../src/storage/accounts';
import { createSourcesRepo } from '../../src/storage/sources';
import { createDashboardsRepo } from '../../src/storage/dashboards';
import { createSharesRepo } from '../../src/storage/shares';
import { createMonitorsRepo } from '../../src/storage/monitors';
import { createOutboxRepo } from '../../src/storage/outbox';
import { createChannelsRepo, type StoredChannel } from '../../src/storage/channels';
import {
  createEnabledTransponders,
  createTranspondersRepo,
  type Transponder,
} from '../../src/storage/transponders';
import type { Source } from '../../src/domain/types';
import type { Ports } from '../../src/domain/ports';
import { updateDatabase, updateProject, ZONE_FIXED } from '../../src/domain/sources';
import { parseDatabaseUpdate, parseProjectUpdate } from '../../src/http/schemas/bootstrap';
import { AppError } from '../../src/errors';
import type { Dashboard } from '../../src/model/dashboard';
import type { Monitor } from '../../src/model/monitor';
import { testSource } from '../helpers/pg-store';

const ORG = 'org-1';
const USER = 'user-1';
const OTHER = 'user-2';

let dir: string;
let db: Db;
const count = (table: string): number =>
  (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'atomic-units-test-'));
  db = openDatabase(path.join(dir, 'service.db'));
  migrate(db);
  for (const [id, email] of [
    [USER, 'a@b.c'],
    [OTHER, 'd@e.f'],
  ])
    db.prepare(
      "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES (?, ?, ?, 'A', 'x', 0)",
    ).run(id, email, email);
  db.prepare("INSERT INTO organizations (id, name, slug, created_at) VALUES (?, 'Org', 'org', 0)").run(ORG);
  db.prepare(
    "INSERT INTO memberships (id, user_id, organization_id, role, created_at) VALUES ('m-owner', ?, ?, 'owner', 0)",
  ).run(USER, ORG);
});
afterEach(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const membership = (id: string, userId: string, role = 'viewer'): MembershipRow => ({
  id,
  user_id: userId,
  organization_id: ORG,
  role,
  created_at: 1,
});

function invitation(id: string, now: number): InvitationRow {
  const minted = mintToken('svc_inv_');
  return {
    id,
    organization_id: ORG,
    role: 'viewer',
    token_hash: minted.hash,
    last5: minted.last5,
    created_by: USER,
    created_at: now,
    expires_at: now + 60_000,
    accepted_by: null,
    accepted_at: null,
  };
}

function source(id: string): Source {
  return testSource(id, { organizationId: ORG, displayName: id, granularities: ['1h', '1d'], createdAt: 1 });
}

function dashboard(id: string, sourceId: string, groupId: string | null = null): Dashboard {
  return {
    id,
    organizationId: ORG,
    userId: USER,
    sourceType: 'project',
    sourceId,
    databaseId: null,
    groupId,
    name: id,
    key: 'k',
    visibility: true,
    locked: false,
    position: 7,
    defaultTimeframe: '24h',
    defaultGranularity: '1h',
    payload: {},
    segments: [],
    insertedAt: 1000,
    updatedAt: 1000,
    updatedBy: USER,
  };
}

describe('accounts: atomic units', () => {
  test('createOrganization refuses a user who already belongs to one, and a taken slug; writes nothing', async () => {
    const accounts = createAccountsRepo(db);
    const org = { id: 'org-2', name: 'Two', slug: 'two', created_at: 1 };
    const owner = { ...membership('m-2', USER, 'owner'), organization_id: 'org-2' };
    assert.equal(await accounts.createOrganization(org, owner), 'member');
    const taken = { ...org, slug: 'org' };
    assert.equal(await accounts.createOrganization(taken, { ...owner, user_id: OTHER }), 'slug_taken');
    assert.equal(count('organizations'), 1);
    assert.equal(await accounts.createOrganization(org, { ...owner, user_id: OTHER }), null);
    assert.equal(count('organizations'), 2);
  });

  test('insertInvitation counts and inserts together: the cap holds', async () => {
    const accounts = createAccountsRepo(db);
    const now = 10_000;
    assert.equal(await accounts.insertInvitation(invitation('i1', now), 2, now), true);
    assert.equal(await accounts.insertInvitation(invitation('i2', now), 2, now), true);
    assert.equal(await accounts.insertInvitation(invitation('i3', now), 2, now), false);
    assert.equal(count('invitations'), 2);
  });

  test('acceptInvitation: once only, never for a member, never once expired; the role is the invitation’s', async () => {
    const accounts = createAccountsRepo(db);
    const now = 10_000;
    await accounts.insertInvitation({ ...invitation('i1', now), role: 'editor' }, 100, now);
    assert.equal(await accounts.acceptInvitation('i1', membership('m-x', USER), now), 'member');
    assert.equal(await accounts.acceptInvitation('i1', membership('m-y', OTHER), now + 60_000), 'gone');
    assert.equal(await accounts.acceptInvitation('i1', membership('m-y', OTHER), now), null);
    assert.equal((await accounts.membershipByUser(OTHER))?.role, 'editor');
    db.prepare('DELETE FROM memberships WHERE user_id = ?').run(OTHER);
    assert.equal(await accounts.acceptInvitation('i1', membership('m-z', OTHER), now), 'gone');
    assert.equal(count('memberships'), 1);
  });

  test('updateRole and deleteMembership write only while the member has the role that was checked', async () => {
    const accounts = createAccountsRepo(db);
    db.prepare(
      "INSERT INTO memberships (id, user_id, organization_id, role, created_at) VALUES ('m-2', ?, ?, 'editor', 0)",
    ).run(OTHER, ORG);
    assert.equal(await accounts.updateRole('m-2', ORG, 'viewer', 'admin'), false);
    assert.equal(await accounts.deleteMembership('m-2', ORG, 'viewer'), false);
    assert.equal((await accounts.membershipById('m-2', ORG))?.role, 'editor');
    assert.equal(await accounts.updateRole('m-2', ORG, 'editor', 'admin'), true);
    assert.equal(await accounts.deleteMembership('m-2', ORG, 'admin'), true);
    assert.equal(await accounts.membershipById('m-2', ORG), undefined);
  });
});

describe('sources, shares and dashboards: atomic units', () => {
  test('a source token is inserted only while its source is there with the type checked', async () => {
    const sources = createSourcesRepo(db);
    await sources.insert(source('s1'));
    const minted = mintToken(SOURCE_TOKEN_PREFIX);
    const row = {
      id: 't1',
      source_id: 's1',
      organization_id: ORG,
      user_id: USER,
      name: 't',
      token_hash: minted.hash,
      last5: minted.last5,
      can_read: 1,
      can_write: 1,
      created_at: 1,
    };
    assert.equal(await sources.insertToken(row, 'database'), false, 'the type checked is not the stored one');
    await sources.remove('s1');
    assert.equal(await sources.insertToken(row, 'project'), false, 'the source is gone');
    assert.equal(count('source_tokens'), 0);
  });

  test("a source's settings edit is made of the source as stored when it is written: two edits keep each other", async () => {
    const sources = createSourcesRepo(db);
    await sources.insert(source('s1'));
    await sources.setSetupStatus('s1', 'ready');
    const cached = await sources.cachedById('s1');
    const [named, timed] = await Promise.all([
      sources.updateSettings('s1', (read) => ({ ...read, displayName: 'Renamed' })),
      sources.updateSettings('s1', (read) => ({ ...read, defaultTimeframe: '7d', setupStatus: 'failed' })),
    ]);
    assert.equal(named!.read.displayName, 's1');
    assert.equal(timed!.read.displayName, 'Renamed', 'the second edit is made of the row the first wrote');
    const stored = (await sources.byId('s1'))!;
    assert.deepEqual(
      [stored.displayName, stored.defaultTimeframe, stored.setupStatus],
      ['Renamed', '7d', 'ready'],
      'both edits kept; a column that is not a setting is not written',
    );
    assert.notEqual(await sources.cachedById('s1'), cached, 'the cached source is dropped');
    assert.equal((await sources.cachedById('s1'))!.defaultTimeframe, '7d');

    const nothing = await sources.updateSettings('s1', () => null);
    assert.deepEqual(nothing, { read: stored, written: null }, 'null writes nothing');
    await assert.rejects(
      sources.updateSettings('s1', (read) => {
        read.displayName = 'changed in place';
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(await sources.byId('s1'), stored, 'a change that throws writes nothing');
    assert.equal(await sources.updateSettings('gone', () => assert.fail('no source')), undefined);
  });

  test('a share link is inserted only while its dashboard is there', async () => {
    const sources = createSourcesRepo(db);
    const dashboards = createDashboardsRepo(db);
    const shares = createSharesRepo(db);
    await sources.insert(source('s1'));
    await dashboards.insert(dashboard('d1', 's1'), false);
    const share = (id: string) => ({
      id,
      dashboard_id: 'd1',
      organization_id: ORG,
      user_id: USER,
      token_hash: `h-${id}`,
      last5: 'abcde',
      created_at: 1,
    });
    assert.equal(await shares.insert(share('a')), true);
    assert.equal(await dashboards.remove('d1', ORG, 1000), true);
    assert.equal(await shares.insert(share('b')), false);
    assert.equal(count('dashboard_shares'), 0);
  });

  test('a dashboard is inserted only while its source and group are there, at last + 1 when asked', async () => {
    const sources = createSourcesRepo(db);
    const dashboards = createDashboardsRepo(db);
    await sources.insert(source('s1'));
    assert.equal((await dashboards.insert(dashboard('d1', 's1'), true))?.position, 1);
    assert.equal((await dashboards.insert(dashboard('d2', 's1'), true))?.position, 2);
    assert.equal(await dashboards.insert(dashboard('d3', 's1', 'no-such-group'), false), undefined);
    assert.equal(await dashboards.insert(dashboard('d4', 'no-such-source'), false), undefined);
    assert.equal(count('dashboards'), 2);
  });

  test('a dashboard is saved or deleted only at the version that was read', async () => {
    const sources = createSourcesRepo(db);
    const dashboards = createDashboardsRepo(db);
    await sources.insert(source('s1'));
    const d = (await dashboards.insert(dashboard('d1', 's1'), false))!;
    const first = { ...d, name: 'first', updatedAt: 2000 };
    assert.equal(await dashboards.update(first, 1000), true);
    assert.equal(await dashboards.update({ ...d, name: 'stale', updatedAt: 2000 }, 1000), false);
    assert.equal(await dashboards.remove('d1', ORG, 1000), false);
    assert.equal((await dashboards.byId('d1', ORG))?.name, 'first');
    assert.equal(await dashboards.remove('d1', ORG, 2000), true);
  });
});

function monitor(id: string): Monitor {
  return {
    id,
    organizationId: ORG,
    userId: USER,
    name: id,
    description: null,
    type: 'alert',
    status: 'active',
    locked: false,
    sourceType: 'project',
    sourceId: 's1',
    alertMetricKey: 'k',
    alertMetricPath: 'a',
    alertSeries: [],
    alertTimeframe: null,
    alertGranularity: null,
    alertNotifyEvery: 1,
    deliveryChannels: [],
    alerts: [],
    triggerStatus: 'idle',
    for: '0m',
    repeatEvery: null,
    notifyRecovery: true,
    notifyNoData: false,
    mutedUntil: null,
    extra: {},
    insertedAt: 1000,
    updatedAt: 1000,
    updatedBy: USER,
  };
}

describe('source settings edits: the checks that read the source hold for the source written over', () => {
  let flushes = 0;
  /** The domain's ports for a settings edit: the real sources repository; the embedded store's flush counted. */
  const portsOf = (sources: ReturnType<typeof createSourcesRepo>) =>
    ({
      sources,
      metrics: {
        cluster: () => undefined,
        flush: async () => {
          flushes++;
        },
      },
    }) as unknown as Ports;
  const failsWith = (fields: Record<string, string[]>) => (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.deepEqual(err.options.fields, fields);
    return true;
  };
  beforeEach(() => {
    flushes = 0;
  });

  test('a zone moved since the project was read is checked again: refused once the project holds data', async () => {
    const sources = createSourcesRepo(db);
    await sources.insert(source('p1'));
    const read = (await sources.byId('p1'))!;
    // Another edit moves the zone (the project held no data then), and points are stored.
    await sources.updateSettings('p1', (s) => ({ ...s, timeZone: 'Europe/Berlin' }));
    db.prepare("INSERT INTO metric_series (source_id, key, granularity) VALUES ('p1', 'hits', '1h')").run();
    // "UTC" is no change of the project as read; it is one of the project as stored.
    await assert.rejects(
      updateProject(portsOf(sources), read, (c) => parseProjectUpdate({ time_zone: 'UTC', name: 'A' }, c)),
      failsWith({ time_zone: [ZONE_FIXED] }),
    );
    const stored = (await sources.byId('p1'))!;
    assert.deepEqual([stored.timeZone, stored.displayName], ['Europe/Berlin', 'p1'], 'nothing written');
    assert.equal(flushes, 1, 'checked against the project as stored');
  });

  test('a zone moved since the project was read, no data: the edit is written over the stored project', async () => {
    const sources = createSourcesRepo(db);
    await sources.insert(source('p1'));
    const read = (await sources.byId('p1'))!;
    await sources.updateSettings('p1', (s) => ({ ...s, timeZone: 'Europe/Berlin', defaultTimeframe: '7d' }));
    const written = await updateProject(portsOf(sources), read, (c) =>
      parseProjectUpdate({ time_zone: 'UTC', name: 'A' }, c),
    );
    assert.deepEqual(
      [written.timeZone, written.displayName, written.defaultTimeframe],
      ['UTC', 'A', '7d'],
      "this edit's fields and the other edit's",
    );
    assert.deepEqual(await sources.byId('p1'), written);
    assert.equal(flushes, 1);
    // A rename of a project holding data, sent with its zone as stored: no check, written.
    db.prepare("INSERT INTO metric_series (source_id, key, granularity) VALUES ('p1', 'hits', '1h')").run();
    const renamed = await updateProject(portsOf(sources), written, (c) =>
      parseProjectUpdate({ time_zone: 'UTC', name: 'B' }, c),
    );
    assert.equal(renamed.displayName, 'B');
    assert.equal(flushes, 1);
  });

  test('the default granularity is checked against the granularities as stored, for projects and databases', async () => {
    const sources = createSourcesRepo(db);
    await sources.insert(source('p1'));
    await sources.insert({ ...source('d1'), type: 'database', driver: 'sqlite' });
    const project = (await sources.byId('p1'))!;
    const database = (await sources.byId('d1'))!;
    for (const id of ['p1', 'd1'])
      await sources.updateSettings(id, (s) => ({ ...s, granularities: ['1d'], defaultGranularity: '1d' }));
    const misfit = { default_granularity: ['must be one of the granularities'] };
    await assert.rejects(
      updateProject(portsOf(sources), project, (c) => parseProjectUpdate({ default_granularity: '1h' }, c)),
      failsWith(misfit),
    );
    await assert.rejects(
      updateDatabase(portsOf(sources), database, (c) =>
        parseDatabaseUpdate({ default_granularity: '1h', display_name: 'x' }, c.granularities),
      ),
      failsWith(misfit),
    );
    for (const id of ['p1', 'd1']) {
      const stored = (await sources.byId(id))!;
      assert.deepEqual([stored.defaultGranularity, stored.displayName], ['1d', id], 'nothing written');
    }
    const renamed = await updateDatabase(portsOf(sources), database, (c) =>
      parseDatabaseUpdate({ display_name: 'Renamed' }, c.granularities),
    );
    assert.deepEqual([renamed.displayName, renamed.granularities], ['Renamed', ['1d']]);
    await sources.remove('d1');
    await assert.rejects(
      updateDatabase(portsOf(sources), database, (c) =>
        parseDatabaseUpdate({ display_name: 'y' }, c.granularities),
      ),
      (err: unknown) => err instanceof AppError && err.kind === 'not_found',
    );
  });
});

describe('monitors and outbox: atomic units', () => {
  const notification = (key: string) => ({
    idempotency_key: key,
    organization_id: ORG,
    monitor_id: 'm1',
    channel_id: 'c1',
    notification: '{}',
    created_at: 1,
  });
  const entry = { at: 1, instance: '', from: 'ok' as const, to: 'ok' as const, value: null, summary: '' };

  test('the monitor cap is counted with the insert; saves and deletes only at the version read', async () => {
    const monitors = createMonitorsRepo(db);
    assert.equal(await monitors.insert(monitor('m1'), 1), true);
    assert.equal(await monitors.insert(monitor('m2'), 1), false);
    assert.equal(await monitors.update({ ...monitor('m1'), name: 'new', updatedAt: 2000 }, 1000), true);
    assert.equal(await monitors.update({ ...monitor('m1'), name: 'stale', updatedAt: 2000 }, 1000), false);
    assert.equal(await monitors.remove('m1', ORG, 1000), false);
    assert.equal((await monitors.byId('m1', ORG))?.name, 'new');
    assert.equal(await monitors.remove('m1', ORG, 2000), true);
  });

  test('an evaluation is written only at the version and evaluation stamp it started from; its notifications once', async () => {
    const monitors = createMonitorsRepo(db);
    const outbox = createOutboxRepo(db);
    const ruled = (stamp: number | null, extra: Partial<Monitor> = {}): Monitor => ({
      ...monitor('m1'),
      alerts: [
        {
          id: 'r1',
          analysis_strategy: 'threshold',
          settings: {},
          status: 'passed',
          last_summary: null,
          last_evaluated_at: stamp,
        },
      ],
      ...extra,
    });
    await monitors.insert(ruled(null), 10);
    const writes = { history: [entry], instances: [], removed: [], outbox: [notification('n1')] };
    const saveEvaluation = async (evaluated: Monitor, from: number | null, w: typeof writes) =>
      (await monitors.saveEvaluations([{ evaluated, from, writes: w }], { tryOnly: false }))![0];
    assert.equal(await saveEvaluation(ruled(60, { updatedAt: 999 }), null, writes), null);
    assert.equal(count('alert_outbox') + count('monitor_history'), 0);
    assert.equal(await saveEvaluation(ruled(60), null, writes), 1);
    // A second evaluation from the same state (another node's, its own clock and idempotency keys).
    assert.equal(
      await saveEvaluation(ruled(61), null, { ...writes, outbox: [notification('n1-b')] }),
      null,
      'the stamp moved: dropped whole',
    );
    assert.equal(count('alert_outbox'), 1);
    assert.equal(count('monitor_history'), 1);
    assert.equal((await monitors.byId('m1', ORG))?.alerts[0]?.last_evaluated_at, 60);
    assert.equal(await saveEvaluation(ruled(70), 60, writes), 0, 'a known idempotency key is skipped');
    assert.equal(count('monitor_history'), 2, 'an evaluation from the stamp written: written');
    assert.equal((await outbox.byMonitor('m1')).length, 1);
    assert.equal(await outbox.claim((await outbox.byMonitor('m1'))[0]!.id), true);
    assert.equal(await outbox.claim((await outbox.byMonitor('m1'))[0]!.id), false, 'one sender takes a row');
  });

  test('a report period is queued once; a run is recorded only from the state it read', async () => {
    const monitors = createMonitorsRepo(db);
    await monitors.insert({ ...monitor('m1'), type: 'report' }, 10);
    const m = (await monitors.byId('m1', ORG))!;
    const failed = { periodStart: null, ranAt: 1, error: 'boom' };
    const failure = { from: undefined, outbox: [], state: failed, entry: { ...entry, to: 'error' as const } };
    assert.equal(await monitors.saveReport(m, null, failure), 0);
    assert.equal(await monitors.saveReport(m, null, { ...failure, state: { ...failed, ranAt: 2 } }), null);
    assert.equal(count('monitor_history'), 1, 'a second failure from the same state: not written');
    const writes = {
      from: failed,
      outbox: [notification('r1')],
      state: { periodStart: 5, ranAt: 3, error: null },
      entry,
    };
    assert.equal(await monitors.saveReport(m, 5, writes), 1);
    assert.equal(await monitors.saveReport(m, 5, { ...writes, outbox: [notification('r2')] }), null);
    assert.equal(
      await monitors.saveReport(m, 5, { ...writes, from: writes.state, outbox: [notification('r3')] }),
      null,
      'the period was sent',
    );
    assert.equal(count('alert_outbox'), 1);
    assert.equal(count('monitor_history'), 2);
  });
});

function channel(id: string): StoredChannel {
  return {
    id,
    organizationId: ORG,
    name: id,
    type: 'webhook',
    preset: null,
    settings: { url: 'https://example.com/hook' },
    secrets: {},
    insertedAt: 1,
    updatedAt: 1,
  };
}

function transponder(id: string, sourceId: string, order = 0): Transponder {
  return {
    id,
    organizationId: ORG,
    sourceType: 'project',
    sourceId,
    name: id,
    key: 'k',
    paths: ['a'],
    expression: 'a',
    response: 'r',
    enabled: true,
    order,
    insertedAt: 1,
    updatedAt: 1,
  };
}

describe('channels and transponders: atomic units', () => {
  test('channels.insert counts and inserts together: the cap holds', async () => {
    const channels = createChannelsRepo(db);
    assert.equal(await channels.insert(channel('c1'), 2), true);
    assert.equal(await channels.insert(channel('c2'), 2), true);
    assert.equal(await channels.insert(channel('c3'), 2), false);
    assert.equal(count('channels'), 2);
    assert.equal(await channels.get(ORG, 'c3'), null);
  });

  test('a channel deleted since it was read is neither changed nor brought back', async () => {
    const channels = createChannelsRepo(db);
    await channels.insert(channel('c1'), 10);
    const read = (await channels.get(ORG, 'c1'))!;
    assert.equal(await channels.remove(ORG, 'c1'), true);
    const never = () => assert.fail('no change is made of a channel that is not there');
    assert.equal(await channels.update(ORG, read.id, never), null);
    assert.equal(await channels.remove(ORG, 'c1'), false);
    assert.equal(count('channels'), 0);
    await channels.insert(channel('c9'), 10);
    assert.equal(await channels.update('org-other', 'c9', never), null, "another organization's id");
    assert.equal((await channels.get(ORG, 'c9'))!.name, 'c9');
  });

  test('a channel change is made of the channel as stored when it is written: two changes keep each other', async () => {
    const channels = createChannelsRepo(db);
    await channels.insert(channel('c1'), 10);
    const [named, moved] = await Promise.all([
      channels.update(ORG, 'c1', (read) => ({ ...read, name: 'renamed', updatedAt: 2 })),
      channels.update(ORG, 'c1', (read) => ({
        ...read,
        settings: { url: 'https://example.com/other' },
        updatedAt: 3,
      })),
    ]);
    assert.equal(named!.name, 'renamed');
    assert.equal(moved!.name, 'renamed', 'the second change is made of the row the first wrote');
    const stored = (await channels.get(ORG, 'c1'))!;
    assert.deepEqual([stored.name, stored.settings.url], ['renamed', 'https://example.com/other']);
    assert.deepEqual(stored, moved, 'what update answers is what is stored');
    await assert.rejects(
      channels.update(ORG, 'c1', (read) => {
        assert.equal(read.updatedAt, 3);
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(await channels.get(ORG, 'c1'), stored, 'a change that throws writes nothing');
  });

  test('transponders.insert only while its source is there (in its organization); writes nothing else', async () => {
    const sources = createSourcesRepo(db);
    const transponders = createTranspondersRepo(db);
    await sources.insert(source('s1'));
    assert.equal(
      await transponders.insert({ ...transponder('t1', 's1'), organizationId: 'org-other' }, true),
      null,
    );
    assert.equal(await transponders.insert(transponder('t2', 'nowhere'), true), null);
    assert.equal(count('transponders'), 0);
    assert.notEqual(await transponders.insert(transponder('t3', 's1'), true), null);
    await sources.remove('s1');
    assert.equal(await transponders.insert(transponder('t4', 's1'), true), null, 'the source is gone');
    assert.equal(count('transponders'), 0, 'the delete took its transponder, nothing came after');
  });

  test("transponders.insert at the end takes the source's last order + 1 in its own transaction", async () => {
    const sources = createSourcesRepo(db);
    const transponders = createTranspondersRepo(db);
    await sources.insert(source('s1'));
    assert.equal((await transponders.insert(transponder('t1', 's1'), true))!.order, 1);
    assert.equal(
      (await transponders.insert(transponder('t2', 's1', 7), false))!.order,
      7,
      'an order given is kept',
    );
    const [a, b] = await Promise.all([
      transponders.insert(transponder('t3', 's1'), true),
      transponders.insert(transponder('t4', 's1'), true),
    ]);
    assert.deepEqual([a!.order, b!.order], [8, 9], 'two creates in flight get distinct places');
    assert.deepEqual(
      (await transponders.list('s1')).map((t) => [t.id, t.order]),
      [
        ['t1', 1],
        ['t2', 7],
        ['t3', 8],
        ['t4', 9],
      ],
    );
  });

  test('a transponder deleted since it was read is neither changed nor brought back', async () => {
    const sources = createSourcesRepo(db);
    const transponders = createTranspondersRepo(db);
    await sources.insert(source('s1'));
    const read = (await transponders.insert(transponder('t1', 's1'), true))!;
    assert.equal(await transponders.remove('s1', 't1'), true);
    const never = () => assert.fail('no change is made of a transponder that is not there');
    assert.equal(await transponders.update('s1', read.id, never), null);
    assert.equal(await transponders.remove('s1', 't1'), false);
    assert.equal(count('transponders'), 0);
  });

  test('a transponder change is made of the transponder as stored when it is written: two changes keep each other', async () => {
    const sources = createSourcesRepo(db);
    const transponders = createTranspondersRepo(db);
    await sources.insert(source('s1'));
    await sources.insert(source('s2'));
    await transponders.insert(transponder('t1', 's1'), true);
    const [, moved] = await Promise.all([
      transponders.update('s1', 't1', (read) => ({ ...read, name: 'renamed', updatedAt: 2 })),
      transponders.update('s1', 't1', (read) => ({ ...read, enabled: false, updatedAt: 3 })),
    ]);
    const stored = (await transponders.get('s1', 't1'))!;
    assert.deepEqual([stored.name, stored.enabled], ['renamed', false]);
    assert.deepEqual(stored, moved, 'what update answers is what is stored');
    assert.equal(await transponders.update('s2', 't1', () => assert.fail('another source')), null);
    await assert.rejects(
      transponders.update('s1', 't1', () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.deepEqual(await transponders.get('s1', 't1'), stored, 'a change that throws writes nothing');
  });

  test("the read path's cache of enabled transponders is cleared by every write of the repository", async () => {
    const sources = createSourcesRepo(db);
    const transponders = createTranspondersRepo(db);
    const reader = createEnabledTransponders(db);
    await sources.insert(source('s1'));
    const none = reader.enabled('s1');
    assert.deepEqual(none, []);
    assert.equal(reader.enabled('s1'), none, 'kept between reads: no query per read');
    const t = (await transponders.insert(transponder('t1', 's1'), true))!;
    assert.deepEqual(
      reader.enabled('s1').map((x) => x.id),
      ['t1'],
    );
    await transponders.update('s1', t.id, (read) => ({ ...read, enabled: false }));
    assert.deepEqual(reader.enabled('s1'), []);
    await transponders.update('s1', t.id, (read) => ({ ...read, enabled: true }));
    assert.equal(reader.enabled('s1').length, 1);
    await transponders.remove('s1', 't1');
    assert.deepEqual(reader.enabled('s1'), []);
  });
});
