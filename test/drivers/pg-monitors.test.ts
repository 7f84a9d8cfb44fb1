// The monitors repository on PostgreSQL (src/storage/pg/monitors.ts) against its SQLite twin: the
// same calls on both give the same answers and leave the same rows (a differential test), and its
// atomic units hold under real concurrency on PostgreSQL (the organization's cap, one of two nodes'
// evaluations from the same state written, a report period or failure recorded once, `tryOnly`
// giving up at once on a locked monitor), up to two real evaluators on two pools evaluating the
// same monitors at once.
// Against the local PostgreSQL (a scratch database, dropped at the end); skipped without one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import {
  createMonitorsRepo,
  type Evaluation,
  type MonitorsRepo,
  type ReportState,
} from '../../src/storage/monitors';
import type { NewOutboxRow } from '../../src/storage/outbox';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { createPgMonitorsRepo } from '../../src/storage/pg/monitors';
import { createPgOutboxRepo } from '../../src/storage/pg/outbox';
import { evaluateOnTwoNodes } from '../helpers/evaluator-nodes';
import type { HistoryEntry, Monitor, MonitorInstance } from '../../src/model/monitor';
import { pgSkip, pgUrl, scratchPgStore, type ScratchStore } from '../helpers/pg-store';
import { SERVERS, scratchName } from './network';
import { migratePostgres } from '../../src/storage/pg/migrations';

const skip = pgSkip();
const ORG = 'org-1';
const ORG_B = 'Org-B';
const USER = 'user-1';

function monitor(id: string, organizationId = ORG, extra: Partial<Monitor> = {}): Monitor {
  return {
    id,
    organizationId,
    userId: USER,
    name: `name ${id}`,
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
    extra: { note: 'ünïcode' },
    insertedAt: 1000,
    updatedAt: 1000,
    updatedBy: USER,
    ...extra,
  };
}

const instance = (monitorId: string, key: string, extra: Partial<MonitorInstance> = {}): MonitorInstance => ({
  monitorId,
  instance: key,
  labels: { host: key },
  state: 'firing',
  since: 50,
  pendingSince: null,
  lastValue: 1.5,
  lastEvaluatedAt: 60,
  lastNotifiedAt: null,
  rules: { r1: { firing: true, summary: 'over' } },
  firingBuckets: 1,
  countedBucket: 60_000,
  ...extra,
});

const entry = (at: number, key: string, extra: Partial<HistoryEntry> = {}): HistoryEntry => ({
  at,
  instance: key,
  from: 'ok',
  to: 'firing',
  value: 2.25,
  summary: `fired ${key}`,
  ...extra,
});

const notification = (monitorId: string, key: string, organizationId = ORG): NewOutboxRow => ({
  idempotency_key: key,
  organization_id: organizationId,
  monitor_id: monitorId,
  channel_id: 'c1',
  notification: JSON.stringify({ key }),
  created_at: 70,
});

const evaluation = (
  evaluated: Monitor,
  writes: Partial<Evaluation['writes']> = {},
  from: number | null = null,
): Evaluation => ({
  evaluated,
  from,
  writes: { history: [], instances: [], removed: [], outbox: [], ...writes },
});

/** A threshold rule whose last evaluation (the monitor's evaluation stamp) was at `stamp`. */
const rule = (id: string, stamp: number | null): Monitor['alerts'][number] => ({
  id,
  analysis_strategy: 'threshold',
  settings: {},
  status: 'passed',
  last_summary: null,
  last_evaluated_at: stamp,
});

/**
 * A scratch database whose default collation is not byte order (ICU's root locale: 'a' < 'B'), as
 * a database created under en_US would be, so that an ORDER BY without COLLATE "C" shows; the
 * ordinary scratch database where ICU is missing.
 */
async function scratchIcuStore(): Promise<ScratchStore> {
  const name = scratchName('trifle_test_icu');
  const admin = new pg.Client({ ...SERVERS.postgres, database: 'postgres' });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und'`);
  } catch {
    return scratchPgStore();
  } finally {
    await admin.end();
  }
  const url = pgUrl(name);
  await migratePostgres(url);
  const store = createPgStore(url);
  return {
    url,
    store,
    async drop() {
      await store.close().catch(() => undefined);
      const c = new pg.Client({ ...SERVERS.postgres, database: 'postgres' });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}

const OUTBOX_COLUMNS = `idempotency_key, organization_id, monitor_id, channel_id, notification, status, attempts,
  next_attempt_at, last_error, created_at, sent_at`;

/** A result with its Errors named only (SQLite's and PostgreSQL's messages differ), or the refusal. */
async function settle(p: Promise<unknown>): Promise<unknown> {
  try {
    const v = await p;
    return { ok: Array.isArray(v) ? v.map((x: unknown) => (x instanceof Error ? 'Error' : x)) : v };
  } catch {
    return { rejected: true };
  }
}

describe('monitors on PostgreSQL: the same answers and rows as SQLite', { skip }, () => {
  let dir: string;
  let db: Db;
  let scratch: ScratchStore;
  let lite: MonitorsRepo;
  let pgRepo: MonitorsRepo;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pg-monitors-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
    scratch = await scratchIcuStore();
    const seed: Array<[string, unknown[]]> = [
      [
        "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES ($1, 'a@b.c', 'a@b.c', 'A', 'x', 0)",
        [USER],
      ],
      ["INSERT INTO organizations (id, name, slug, created_at) VALUES ($1, 'Org', 'org', 0)", [ORG]],
      ["INSERT INTO organizations (id, name, slug, created_at) VALUES ($1, 'Org B', 'org-b', 0)", [ORG_B]],
    ];
    for (const [sql, params] of seed) {
      db.prepare(sql.replace(/\$\d+/g, '?')).run(...params);
      await scratch.store.run(sql, params);
    }
    lite = createMonitorsRepo(db);
    pgRepo = createPgMonitorsRepo(scratch.store);
  });
  after(async () => {
    db?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await scratch?.drop();
  });

  /** The call on both repositories: the same answer (returned for further checks). */
  async function same(label: string, call: (repo: MonitorsRepo) => Promise<unknown>): Promise<unknown> {
    const expected = await settle(call(lite));
    const actual = await settle(call(pgRepo));
    assert.deepEqual(actual, expected, label);
    return expected;
  }
  /** The outbox's rows on both, in insertion order (ids aside: PostgreSQL's identity skips on conflict). */
  async function sameOutbox(label: string): Promise<unknown[]> {
    const expected = db.prepare(`SELECT ${OUTBOX_COLUMNS} FROM alert_outbox ORDER BY id`).all();
    const actual = await scratch.store.rows(`SELECT ${OUTBOX_COLUMNS} FROM alert_outbox ORDER BY id`);
    assert.deepEqual(actual, expected, label);
    return expected;
  }

  test('insert with the cap, reads, order by bytes, pages of active monitors', async () => {
    // Ids and organizations of mixed case: SQLite orders them by bytes.
    for (const id of ['m-b', 'M-a', 'm-a', 'Z', '_x'])
      assert.deepEqual(
        await same(`insert ${id}`, (r) => r.insert(monitor(id, ORG, { insertedAt: 1000 }), 5)),
        {
          ok: true,
        },
      );
    assert.deepEqual(await same('at the cap', (r) => r.insert(monitor('over'), 5)), { ok: false });
    assert.deepEqual(await same('a duplicate id', (r) => r.insert(monitor('m-a', ORG_B), 10)), {
      rejected: true,
    });
    assert.deepEqual(
      await same('an organization that does not exist', (r) => r.insert(monitor('n', 'nope'), 5)),
      {
        rejected: true,
      },
    );
    await same('another organization', (r) => r.insert(monitor('b-1', ORG_B, { insertedAt: 900 }), 5));
    await same('paused', (r) => r.insert(monitor('b-0', ORG_B, { status: 'paused' }), 5));
    await same('later', (r) => r.insert(monitor('B-2', ORG_B, { insertedAt: 2000, type: 'report' }), 5));

    assert.equal(((await same('byId', (r) => r.byId('M-a', ORG))) as { ok: Monitor }).ok.id, 'M-a');
    assert.deepEqual(await same('byId in another organization', (r) => r.byId('M-a', ORG_B)), {
      ok: undefined,
    });
    assert.deepEqual(await same('byId missing', (r) => r.byId('none', ORG)), { ok: undefined });
    const listed = (await same('list', (r) => r.list(ORG, 10, 0))) as { ok: Monitor[] };
    assert.deepEqual(
      listed.ok.map((m) => m.id),
      ['M-a', 'Z', '_x', 'm-a', 'm-b'],
    );
    await same('list, a page', (r) => r.list(ORG, 2, 1));
    await same('list, past the end', (r) => r.list(ORG, 5, 10));
    await same('list of another organization', (r) => r.list(ORG_B, 10, 0));
    assert.deepEqual(await same('count', (r) => r.count(ORG)), { ok: 5 });
    assert.deepEqual(await same('count, none', (r) => r.count('nope')), { ok: 0 });
    const active = (await same('active', (r) => r.active())) as { ok: Monitor[] };
    assert.deepEqual(
      active.ok.map((m) => `${m.organizationId}/${m.id}`),
      ['Org-B/B-2', 'Org-B/b-1', 'org-1/M-a', 'org-1/Z', 'org-1/_x', 'org-1/m-a', 'org-1/m-b'],
    );
    // activePage walked in pages of two gives `active`.
    const walk = async (r: MonitorsRepo) => {
      const pages: string[][] = [];
      let last: Monitor | null = null;
      for (;;) {
        const page = await r.activePage(last, 2);
        if (page.length === 0) return pages;
        pages.push(page.map((m) => m.id));
        last = page[page.length - 1]!;
      }
    };
    assert.deepEqual(await same('activePage', walk), {
      ok: [['B-2', 'b-1'], ['M-a', 'Z'], ['_x', 'm-a'], ['m-b']],
    });
    await same('activePage after a monitor that is gone', (r) =>
      r.activePage({ organizationId: ORG, id: 'N' }, 3),
    );
  });

  test('update, mute and remove only at the version read; instances cleared when asked', async () => {
    assert.deepEqual(
      await same('update', (r) => r.update(monitor('m-a', ORG, { name: 'renamed', updatedAt: 2000 }), 1000)),
      { ok: true },
    );
    assert.deepEqual(
      await same('update at a stale version', (r) =>
        r.update(monitor('m-a', ORG, { name: 'x', updatedAt: 3000 }), 1000),
      ),
      { ok: false },
    );
    assert.deepEqual(
      await same('update in another organization', (r) =>
        r.update(monitor('m-a', ORG_B, { updatedAt: 3000 }), 2000),
      ),
      { ok: false },
    );
    assert.deepEqual(await same('update of a missing monitor', (r) => r.update(monitor('none'), 1000)), {
      ok: false,
    });
    assert.deepEqual(
      await same('mute', (r) =>
        r.update(
          monitor('m-a', ORG, {
            name: 'renamed',
            mutedUntil: 9_000,
            locked: true,
            updatedAt: 2500,
            updatedBy: null,
          }),
          2000,
        ),
      ),
      { ok: true },
    );
    await same('the muted monitor', (r) => r.byId('m-a', ORG));

    const ev = evaluation(
      monitor('m-a', ORG, {
        name: 'renamed',
        mutedUntil: 9_000,
        locked: true,
        updatedAt: 2500,
        updatedBy: null,
      }),
      {
        instances: [instance('m-a', 'h1'), instance('m-a', 'h2')],
        history: [entry(10, 'h1')],
      },
    );
    assert.deepEqual(await same('instances to clear', (r) => r.saveEvaluations([ev], { tryOnly: false })), {
      ok: [0],
    });
    await same('update keeping instances', (r) =>
      r.update(monitor('m-a', ORG, { name: 'kept', updatedAt: 2600 }), 2500, false),
    );
    assert.equal(
      ((await same('kept instances', (r) => r.instances('m-a'))) as { ok: unknown[] }).ok.length,
      2,
    );
    await same('update clearing instances', (r) =>
      r.update(monitor('m-a', ORG, { name: 'cleared', updatedAt: 2700 }), 2600, true),
    );
    assert.deepEqual(await same('cleared instances', (r) => r.instances('m-a')), { ok: [] });
    assert.equal(
      ((await same('history stays', (r) => r.history('m-a', 10))) as { ok: unknown[] }).ok.length,
      1,
    );

    assert.deepEqual(await same('remove at a stale version', (r) => r.remove('m-a', ORG, 2600)), {
      ok: false,
    });
    assert.deepEqual(await same('remove in another organization', (r) => r.remove('m-a', ORG_B, 2700)), {
      ok: false,
    });
    assert.deepEqual(await same('remove', (r) => r.remove('m-a', ORG, 2700)), { ok: true });
    assert.deepEqual(await same('remove again', (r) => r.remove('m-a', ORG, 2700)), { ok: false });
    assert.deepEqual(await same('history goes with it', (r) => r.history('m-a', 10)), { ok: [] });
    assert.deepEqual(await same('count after', (r) => r.count(ORG)), { ok: 4 });
  });

  test('saveEvaluations: stale, paused and missing monitors skipped, a failing one rolled back alone', async () => {
    const good = monitor('m-b');
    const batch = [
      evaluation(
        {
          ...good,
          alerts: [
            {
              id: 'r1',
              analysis_strategy: 'threshold',
              settings: {},
              status: 'alerted',
              last_summary: 'over',
              last_evaluated_at: 60,
            },
          ],
        },
        {
          history: [
            entry(60, 'Zeta'),
            entry(60, 'alpha', { value: Number.NaN }),
            entry(60, 'Beta', { value: null, to: 'nodata' }),
          ],
          instances: [
            instance('m-b', 'alpha', { lastValue: Number.POSITIVE_INFINITY }),
            instance('m-b', 'Zeta', { pendingSince: 40, countedBucket: null }),
            instance('m-b', 'Beta', { state: 'nodata', lastValue: null }),
            instance('m-b', 'Beta', { state: 'error', lastValue: 3 }),
            instance('m-b', 'gone'),
          ],
          removed: ['gone', 'never-there'],
          outbox: [notification('m-b', 'n-1'), notification('m-b', 'n-2'), notification('m-b', 'n-1')],
        },
      ),
      // stale: the monitor changed since it was read
      evaluation(monitor('Z', ORG, { updatedAt: 999 }), {
        history: [entry(60, 'z')],
        outbox: [notification('Z', 'n-z')],
      }),
      // fails: an instance of a monitor that does not exist (a foreign key), after writes that must not stay
      evaluation(monitor('_x'), {
        history: [entry(60, 'x1')],
        instances: [instance('_x', 'x1'), instance('none', 'x2')],
        outbox: [notification('_x', 'n-x')],
      }),
      // paused, of another organization, missing: skipped
      evaluation(monitor('b-0', ORG_B, { status: 'paused' }), { history: [entry(60, 'p')] }),
      evaluation(monitor('M-a', ORG_B), { history: [entry(60, 'o')] }),
      evaluation(monitor('none'), { history: [entry(60, 'n')] }),
      // good, after the failing one
      evaluation(monitor('M-a'), {
        instances: [instance('M-a', 'a1', { monitorId: 'M-a' })],
        history: [entry(61, 'a1')],
        outbox: [notification('M-a', 'n-a')],
      }),
    ];
    assert.deepEqual(await same('the batch', (r) => r.saveEvaluations(batch, { tryOnly: false })), {
      ok: [2, null, 'Error', null, null, null, 1],
    });
    // The same batch again: m-b's evaluation stamp moved (60), so its evaluation is dropped; M-a has
    // no rules, so no stamp, and is written again (its notification's key known: none queued).
    assert.deepEqual(
      await same('tryOnly with nothing in the way', (r) => r.saveEvaluations(batch, { tryOnly: true })),
      {
        ok: [null, null, 'Error', null, null, null, 0],
      },
    );
    assert.deepEqual(await same('an empty batch', (r) => r.saveEvaluations([], { tryOnly: true })), {
      ok: [],
    });
    for (const id of ['m-b', 'Z', '_x', 'M-a']) {
      await same(`instances of ${id}`, (r) => r.instances(id));
      await same(`history of ${id}`, (r) => r.history(id, 100));
    }
    const instances = (await same('instance order', (r) => r.instances('m-b'))) as { ok: MonitorInstance[] };
    assert.deepEqual(
      instances.ok.map((i) => [i.instance, i.state, i.lastValue]),
      [
        ['Beta', 'error', 3],
        ['Zeta', 'firing', 1.5],
        ['alpha', 'firing', null],
      ],
    );
    assert.deepEqual(await same('history, the last two', (r) => r.history('m-b', 2)), {
      ok: [entry(60, 'Beta', { value: null, to: 'nodata' }), entry(60, 'alpha', { value: null })],
    });
    assert.deepEqual(await same('the failing one left no instances', (r) => r.instances('_x')), { ok: [] });
    assert.deepEqual(await same('and no history', (r) => r.history('_x', 10)), { ok: [] });
    const rules = (await same('what the evaluation learned of the rules', (r) => r.byId('m-b', ORG))) as {
      ok: Monitor;
    };
    assert.equal(rules.ok.alerts[0]?.status, 'alerted');
    assert.equal(rules.ok.updatedAt, 1000, 'the version is kept');
    const outbox = await sameOutbox('the outbox');
    assert.deepEqual(
      outbox.map((r) => (r as { idempotency_key: string }).idempotency_key),
      ['n-1', 'n-2', 'n-a'],
    );
  });

  test('saveEvaluations: written only while the evaluation stamp is the one it started from', async () => {
    const rules = (a: number | null, b: number | null) => ({ alerts: [rule('r1', a), rule('r2', b)] });
    await same('a monitor with two rules', (r) => r.insert(monitor('st', ORG, rules(null, null)), 100));
    const ev = (stamps: [number | null, number | null], from: number | null, key: string) =>
      evaluation(
        monitor('st', ORG, rules(...stamps)),
        { history: [entry(stamps[0] ?? 0, key)], outbox: [notification('st', key)] },
        from,
      );
    assert.deepEqual(
      await same('from a stamp it never had', (r) =>
        r.saveEvaluations([ev([70, 70], 50, 's-0')], { tryOnly: false }),
      ),
      { ok: [null] },
    );
    assert.deepEqual(
      await same('the first evaluation', (r) =>
        r.saveEvaluations([ev([70, 70], null, 's-1')], { tryOnly: false }),
      ),
      { ok: [1] },
    );
    assert.deepEqual(
      await same('another from before it', (r) =>
        r.saveEvaluations([ev([73, 73], null, 's-2')], { tryOnly: false }),
      ),
      { ok: [null] },
    );
    // The stamp is the latest of the rules' (a rule added since has none yet).
    assert.deepEqual(
      await same('in one batch: from 70, then from 70 again', (r) =>
        r.saveEvaluations([ev([80, null], 70, 's-3'), ev([81, 81], 70, 's-4')], { tryOnly: true }),
      ),
      { ok: [1, null] },
    );
    assert.deepEqual(
      await same('from 80, the latest of 80 and none', (r) =>
        r.saveEvaluations([ev([90, 90], 80, 's-5')], { tryOnly: false }),
      ),
      { ok: [1] },
    );
    assert.deepEqual(await same('dropped ones left nothing', (r) => r.history('st', 10)), {
      ok: [entry(90, 's-5'), entry(80, 's-3'), entry(70, 's-1')],
    });
    await same('the stored rules', (r) => r.byId('st', ORG));
    await sameOutbox('the outbox with the stamped evaluations');
  });

  test('saveReport: once per period, only at the version planned and while active', async () => {
    const m = monitor('B-2', ORG_B, { insertedAt: 2000, type: 'report' });
    const writes = (
      key: string,
      periodStart: number | null,
      error: string | null = null,
      from: ReportState | undefined = undefined,
    ) => ({
      from,
      outbox: [notification('B-2', key, ORG_B)],
      state: { periodStart, ranAt: 80, error },
      entry: entry(80, '', { from: 'ok', to: error ? 'error' : 'ok', value: null, summary: key }),
    });
    const failed = { periodStart: null, ranAt: 80, error: 'boom' };
    const sent5 = { periodStart: 5, ranAt: 80, error: null };
    assert.deepEqual(await same('no state yet', (r) => r.reportState('B-2')), { ok: undefined });
    assert.deepEqual(await same('a failed run', (r) => r.saveReport(m, null, writes('fail', null, 'boom'))), {
      ok: 0,
    });
    assert.deepEqual(await same('the failure', (r) => r.reportState('B-2')), { ok: failed });
    assert.deepEqual(
      await same('another failed run from no state', (r) =>
        r.saveReport(m, null, writes('fail-2', null, 'bang')),
      ),
      { ok: null },
    );
    assert.deepEqual(await same('period 5 from no state', (r) => r.saveReport(m, 5, writes('r-5', 5))), {
      ok: null,
    });
    assert.deepEqual(await same('period 5', (r) => r.saveReport(m, 5, writes('r-5', 5, null, failed))), {
      ok: 1,
    });
    assert.deepEqual(
      await same('period 5 again', (r) => r.saveReport(m, 5, writes('r-5b', 5, null, sent5))),
      { ok: null },
    );
    assert.deepEqual(
      await same('at a stale version', (r) =>
        r.saveReport({ ...m, updatedAt: 1 }, 6, writes('r-6', 6, null, sent5)),
      ),
      { ok: null },
    );
    assert.deepEqual(
      await same('a paused monitor', (r) =>
        r.saveReport(monitor('b-0', ORG_B, { status: 'paused' }), 6, writes('r-p', 6)),
      ),
      { ok: null },
    );
    assert.deepEqual(
      await same('a missing monitor, with a period', (r) =>
        r.saveReport(monitor('none'), 6, writes('r-n', 6)),
      ),
      { ok: null },
    );
    assert.deepEqual(
      await same('a missing monitor, without', (r) =>
        r.saveReport(monitor('none'), null, writes('r-n', null)),
      ),
      { rejected: true },
    );
    assert.deepEqual(await same('period 6', (r) => r.saveReport(m, 6, writes('r-6', 6, null, sent5))), {
      ok: 1,
    });
    assert.deepEqual(await same('the state', (r) => r.reportState('B-2')), {
      ok: { periodStart: 6, ranAt: 80, error: null },
    });
    await same('its history', (r) => r.history('B-2', 10));
    await sameOutbox('the outbox with the reports');
  });
});

describe('monitors on PostgreSQL: atomic under concurrency', { skip }, () => {
  let scratch: ScratchStore;
  let repo: MonitorsRepo;
  let holder: pg.Client;
  const extra: PgStore[] = [];

  before(async () => {
    scratch = await scratchPgStore();
    await scratch.store.run(
      "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES ($1, 'a@b.c', 'a@b.c', 'A', 'x', 0)",
      [USER],
    );
    for (const [id, slug] of [
      [ORG, 'org'],
      [ORG_B, 'org-b'],
    ])
      await scratch.store.run(
        "INSERT INTO organizations (id, name, slug, created_at) VALUES ($1, 'O', $2, 0)",
        [id, slug],
      );
    repo = createPgMonitorsRepo(scratch.store);
    holder = new pg.Client({ connectionString: scratch.url });
    await holder.connect();
  });
  after(async () => {
    await holder?.end().catch(() => undefined);
    for (const s of extra) await s.close().catch(() => undefined);
    await scratch?.drop();
  });

  const count = async (table: string, monitorId: string) =>
    (await scratch.store.one<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE monitor_id = $1`, [
      monitorId,
    ]))!.n;

  test('20 concurrent inserts against a cap of 5: exactly 5', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => repo.insert(monitor(`cap-${i}`, ORG_B), 5)),
    );
    assert.equal(results.filter(Boolean).length, 5);
    assert.equal(await repo.count(ORG_B), 5);
  });

  test('two concurrent updates at one version: exactly one wins', async () => {
    await repo.insert(monitor('u1'), 100);
    const results = await Promise.all(
      ['a', 'b'].map((name) => repo.update(monitor('u1', ORG, { name, updatedAt: 2000 }), 1000, true)),
    );
    assert.deepEqual(results.sort(), [false, true]);
  });

  test('two nodes saving evaluations from the same state at once: one is written, whole', async () => {
    const nodeA = createPgMonitorsRepo(scratch.store);
    const other = createPgStore(scratch.url);
    extra.push(other);
    const nodeB = createPgMonitorsRepo(other);
    for (let round = 0; round < 5; round++) {
      const id = `same-${round}`;
      await repo.insert(monitor(id, ORG, { alerts: [rule('r1', 10)] }), 100);
      // Each node's own clock (60, 63), so its own idempotency keys: the outbox's unique key alone
      // would let both in.
      const ev = (at: number) =>
        evaluation(
          monitor(id, ORG, { alerts: [rule('r1', at)] }),
          {
            history: [entry(at, 'h')],
            instances: [instance(id, 'h', { lastEvaluatedAt: at })],
            outbox: [notification(id, `${id}-firing-${at}-c1`), notification(id, `${id}-firing-${at}-c2`)],
          },
          10,
        );
      // Both start while a third connection holds the monitor; released, they race for it.
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM monitors WHERE id = $1 FOR UPDATE', [id]);
      const both = Promise.all([
        nodeA.saveEvaluations([ev(60)], { tryOnly: false }),
        nodeB.saveEvaluations([ev(63)], { tryOnly: false }),
      ]);
      await new Promise((resolve) => setTimeout(resolve, 30));
      await holder.query('COMMIT');
      const [a, b] = await both;
      assert.deepEqual([a![0], b![0]].sort(), [2, null], `round ${round}: one written`);
      const at = a![0] === 2 ? 60 : 63;
      assert.equal(await count('alert_outbox', id), 2, `round ${round}: its notifications once`);
      assert.deepEqual(await repo.history(id, 10), [entry(at, 'h')], `round ${round}: its history once`);
      assert.equal((await repo.instances(id))[0]!.lastEvaluatedAt, at, `round ${round}: its instance`);
      assert.equal((await repo.byId(id, ORG))!.alerts[0]!.last_evaluated_at, at, `round ${round}: its stamp`);
    }
  });

  test('two nodes running the same report period, or recording the same failure: once', async () => {
    await repo.insert(monitor('rep', ORG, { type: 'report' }), 100);
    const other = createPgStore(scratch.url);
    extra.push(other);
    const nodeB = createPgMonitorsRepo(other);
    const m = (await repo.byId('rep', ORG))!;
    const failure = (ranAt: number) => ({
      from: undefined,
      outbox: [],
      state: { periodStart: null, ranAt, error: 'boom' },
      entry: entry(ranAt, '', { to: 'error', summary: 'boom' }),
    });
    const failed = await Promise.all([
      repo.saveReport(m, null, failure(1)),
      nodeB.saveReport(m, null, failure(2)),
    ]);
    assert.deepEqual(failed.sort(), [0, null]);
    assert.equal(await count('monitor_history', 'rep'), 1);
    const from = await repo.reportState('rep');
    const writes = (ranAt: number) => ({
      from,
      outbox: [notification('rep', `rep-5-${ranAt}`)],
      state: { periodStart: 5, ranAt, error: null },
      entry: entry(ranAt, ''),
    });
    const results = await Promise.all([repo.saveReport(m, 5, writes(3)), nodeB.saveReport(m, 5, writes(4))]);
    assert.deepEqual(results.sort(), [1, null]);
    assert.equal(await count('alert_outbox', 'rep'), 1);
    assert.equal(await count('monitor_history', 'rep'), 2);
  });

  test('tryOnly gives up at once, writing nothing, while another connection holds what it needs', async () => {
    await repo.insert(monitor('busy'), 100);
    await repo.insert(monitor('free'), 100);
    await repo.saveEvaluations([evaluation(monitor('busy'), { instances: [instance('busy', 'h')] })], {
      tryOnly: false,
    });
    const ev = (id: string) =>
      evaluation(monitor(id, ORG, { name: `evaluated ${id}` }), {
        history: [entry(60, 'h')],
        instances: [instance(id, 'h', { state: 'ok' })],
        outbox: [notification(id, `${id}-n`)],
      });
    const nothingWritten = async () => {
      for (const id of ['busy', 'free']) {
        assert.equal(await count('monitor_history', id), 0);
        assert.equal(await count('alert_outbox', id), 0);
        assert.equal((await repo.byId(id, ORG))!.name, `name ${id}`);
      }
      assert.equal((await repo.instances('busy'))[0]!.state, 'firing');
    };
    // The monitor's row held (an update on another node, say).
    await holder.query('BEGIN');
    await holder.query("UPDATE monitors SET user_id = user_id WHERE id = 'busy'");
    let started = performance.now();
    assert.equal(await repo.saveEvaluations([ev('free'), ev('busy')], { tryOnly: true }), null);
    const lockedMonitorMs = performance.now() - started;
    await nothingWritten();
    await holder.query('ROLLBACK');
    assert.ok(lockedMonitorMs < 100, `gave up in ${lockedMonitorMs.toFixed(1)} ms`);

    // An instance's row held, the monitor's free: the wait for it ends the try too (lock_timeout).
    await holder.query('BEGIN');
    await holder.query("SELECT * FROM monitor_instances WHERE monitor_id = 'busy' FOR UPDATE");
    started = performance.now();
    assert.equal(await repo.saveEvaluations([ev('free'), ev('busy')], { tryOnly: true }), null);
    const lockedInstanceMs = performance.now() - started;
    await nothingWritten();

    // Without tryOnly it waits for the row, then writes.
    const waiting = repo.saveEvaluations([ev('free'), ev('busy')], { tryOnly: false });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await nothingWritten();
    await holder.query('ROLLBACK');
    assert.deepEqual(await waiting, [1, 1]);
    assert.ok(lockedInstanceMs < 100, `gave up in ${lockedInstanceMs.toFixed(1)} ms`);
    assert.equal((await repo.instances('busy'))[0]!.state, 'ok');
    assert.deepEqual(await repo.saveEvaluations([ev('busy')], { tryOnly: true }), [0], 'free again: written');
  });
});

describe('monitors on PostgreSQL: two evaluators on one database', { skip }, () => {
  let scratch: ScratchStore;
  let other: PgStore;
  let holder: pg.Client;

  before(async () => {
    scratch = await scratchPgStore();
    await scratch.store.run(
      "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES ($1, 'a@b.c', 'a@b.c', 'A', 'x', 0)",
      [USER],
    );
    await scratch.store.run(
      "INSERT INTO organizations (id, name, slug, created_at) VALUES ($1, 'O', 'o', 0)",
      [ORG],
    );
    other = createPgStore(scratch.url);
    holder = new pg.Client({ connectionString: scratch.url });
    await holder.connect();
  });
  after(async () => {
    await holder?.end().catch(() => undefined);
    await other?.close().catch(() => undefined);
    await scratch?.drop();
  });

  test('concurrent rounds, clocks 3 ms apart: each transition written and notified once', async () => {
    await evaluateOnTwoNodes(
      {
        repos: [createPgMonitorsRepo(scratch.store), createPgMonitorsRepo(other)],
        outboxes: [createPgOutboxRepo(scratch.store), createPgOutboxRepo(other)],
        organizationId: ORG,
        userId: USER,
        // Another connection holds the monitors' rows: both rounds read, judge, and wait to commit.
        hold: async (ids) => {
          await holder.query('BEGIN');
          await holder.query('SELECT id FROM monitors WHERE id = ANY($1::text[]) FOR UPDATE', [ids]);
          return async () => void (await holder.query('COMMIT'));
        },
        count: async (table, monitorId) =>
          (await scratch.store.one<{ n: number }>(
            `SELECT count(*) AS n FROM ${table} WHERE monitor_id = $1`,
            [monitorId],
          ))!.n,
      },
      'pg',
      assert,
    );
  });
});
