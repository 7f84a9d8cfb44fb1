// Two alert evaluators ("nodes") over two connections to one SQLite file, clocks 3 ms apart,
// evaluating the same due monitors at once: an evaluation is written only while the monitor's
// evaluation stamp is still the one it started from (storage/monitors.ts saveEvaluations), so each
// transition's history entry and notifications are written once. PostgreSQL's twin:
// test/drivers/pg-monitors.test.ts.
import { after, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createMonitorsRepo, type MonitorsRepo } from '../../src/storage/monitors';
import { createOutboxRepo } from '../../src/storage/outbox';
import { evaluateOnTwoNodes, evaluatorNode, nodeMonitor, nodeSource } from '../helpers/evaluator-nodes';
import { muteMonitor } from '../../src/domain/alerts/monitors';

const ORG = 'org-1';
const USER = 'user-1';
const MIN = 60_000;

describe('alert evaluation on two nodes sharing one SQLite file', () => {
  const opened: Db[] = [];
  const dirs: string[] = [];
  let dbA: Db;
  let dbB: Db;
  let holder: Db;

  /** A new database file and three connections to it: node A's, node B's, and another. */
  beforeEach(() => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'alerts-nodes-test-'));
    dirs.push(dir);
    const file = path.join(dir, 'service.db');
    dbA = openDatabase(file);
    migrate(dbA);
    dbB = openDatabase(file);
    holder = openDatabase(file);
    opened.push(dbA, dbB, holder);
    dbA
      .prepare(
        "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES (?, 'a@b.c', 'a@b.c', 'A', 'x', 0)",
      )
      .run(USER);
    dbA
      .prepare("INSERT INTO organizations (id, name, slug, created_at) VALUES (?, 'Org', 'org', 0)")
      .run(ORG);
  });
  after(() => {
    for (const db of opened) db.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  const count = async (table: 'monitor_history' | 'alert_outbox', monitorId: string) =>
    (dbA.prepare(`SELECT count(*) AS n FROM ${table} WHERE monitor_id = ?`).get(monitorId) as { n: number })
      .n;

  test('concurrent rounds: each transition written and notified once', async () => {
    await evaluateOnTwoNodes(
      {
        repos: [createMonitorsRepo(dbA), createMonitorsRepo(dbB)],
        outboxes: [createOutboxRepo(dbA), createOutboxRepo(dbB)],
        organizationId: ORG,
        userId: USER,
        // Another connection takes the write lock: both rounds read, judge, and wait to commit.
        hold: async () => {
          holder.prepare('BEGIN IMMEDIATE').run();
          return async () => void holder.prepare('COMMIT').run();
        },
        count,
      },
      'lite',
      assert,
    );
  });

  test('an evaluation from a stamp that moved is dropped whole, and done again at the next round', async () => {
    const a = createMonitorsRepo(dbA);
    const b = createMonitorsRepo(dbB);
    await a.insert(nodeMonitor('again', ORG, USER), 1000);
    // Node B's commits wait at a gate (after it has read the monitor and its instances).
    let open: () => void = () => undefined;
    let gate: Promise<void> = Promise.resolve();
    let atGate: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (atGate = resolve));
    const gated: MonitorsRepo = {
      ...b,
      saveEvaluations: async (evaluations, options) => {
        atGate();
        await gate;
        return b.saveEvaluations(evaluations, options);
      },
    };
    const base = Math.floor(Date.now() / MIN) * MIN - 30 * MIN;
    let clock = base + 30_000;
    let load = 95;
    const nodeA = evaluatorNode(
      a,
      createOutboxRepo(dbA),
      ORG,
      () => clock,
      () => load,
    );
    const nodeB = evaluatorNode(
      gated,
      createOutboxRepo(dbB),
      ORG,
      () => clock + 3,
      () => load,
    );
    try {
      gate = new Promise<void>((resolve) => (open = resolve));
      const late = nodeB.evaluator.round();
      await arrived;
      const first = await nodeA.evaluator.round();
      assert.equal(first.changes, 1, 'node A: OK -> Firing');
      assert.equal(first.queued, 2);
      open();
      const dropped = await late;
      assert.equal(dropped.changes, 0, 'node B judged OK -> Firing from the state before: dropped');
      assert.equal(dropped.stale, 1);
      assert.equal(dropped.queued, 0);
      assert.equal(dropped.errors, 0);
      assert.equal(await count('monitor_history', 'again'), 1);
      assert.equal(await count('alert_outbox', 'again'), 2);
      assert.equal((await a.byId('again', ORG))?.alerts[0]?.last_evaluated_at, clock, "node A's stamp");
      // The next round of node B alone: judged from the Firing node A wrote.
      clock += MIN;
      const still = await nodeB.evaluator.round();
      assert.equal(still.changes, 0, 'still Firing: nothing new');
      assert.equal(still.stale, 0);
      assert.equal((await a.byId('again', ORG))?.alerts[0]?.last_evaluated_at, clock + 3, 'written');
      clock += MIN;
      load = 10;
      const next = await nodeB.evaluator.round();
      assert.equal(next.changes, 1, 'Firing -> OK');
      assert.equal(await count('alert_outbox', 'again'), 4);
      const history = await a.history('again', 10);
      assert.deepEqual(
        history.map((h) => `${h.from}>${h.to}`),
        ['firing>ok', 'ok>firing'],
      );
      // The same clock again (a clock a test holds, or a node whose clock is behind): the stamp
      // written is still later than the one read.
      const held = await nodeB.evaluator.round();
      assert.equal(held.changes, 0);
      assert.equal((await a.byId('again', ORG))?.alerts[0]?.last_evaluated_at, clock + 4);
      // and node A, 3 ms behind, after it
      const behind = await nodeA.evaluator.round();
      assert.equal(behind.changes, 0);
      assert.equal((await a.byId('again', ORG))?.alerts[0]?.last_evaluated_at, clock + 5);
      assert.equal(await count('monitor_history', 'again'), 2);
    } finally {
      await nodeA.evaluator.close();
      await nodeB.evaluator.close();
    }
  });

  test('a mute written over an evaluation, from a node whose clock is behind, still drops an evaluation planned before', async () => {
    const a = createMonitorsRepo(dbA);
    const b = createMonitorsRepo(dbB);
    const id = '5e0c1d2a-3b4c-4d5e-8f90-a1b2c3d4e5f6';
    const base = Math.floor(Date.now() / MIN) * MIN - 30 * MIN;
    const clock = base + 30_000;
    // saved last by a node whose clock is ahead of this one's
    await a.insert({ ...nodeMonitor(id, ORG, USER), updatedAt: clock + 50 }, 1000);
    const gate = () => {
      let open: () => void = () => undefined;
      let arrive: () => void = () => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      return { open, arrived, pass: async () => (arrive(), opened) };
    };
    const evaluationGate = gate();
    const muteGate = gate();
    const gatedB: MonitorsRepo = {
      ...b,
      saveEvaluations: async (evaluations, options) => {
        await evaluationGate.pass();
        return b.saveEvaluations(evaluations, options);
      },
    };
    const nodeA = evaluatorNode(
      a,
      createOutboxRepo(dbA),
      ORG,
      () => clock,
      () => 95,
    );
    const nodeB = evaluatorNode(
      gatedB,
      createOutboxRepo(dbB),
      ORG,
      () => clock + 3,
      () => 95,
    );
    try {
      // Node B reads the monitor and its instances, judges OK -> Firing, and waits to commit.
      const late = nodeB.evaluator.round();
      await evaluationGate.arrived;
      // A mute reads the monitor (no evaluation yet) and waits to write.
      const muting = muteMonitor(
        {
          monitors: {
            ...a,
            update: async (m, fromUpdatedAt, clear) => {
              await muteGate.pass();
              return a.update(m, fromUpdatedAt, clear);
            },
          },
          sources: { inOrganization: async () => nodeSource(ORG), byId: async () => nodeSource(ORG) },
          projectsEnabled: true,
          now: () => clock,
        },
        { kind: 'user', tokenId: 't', userId: USER, organizationId: ORG, role: 'admin' },
        id,
        clock + 60 * MIN,
      );
      await muteGate.arrived;
      // Node A evaluates and commits: OK -> Firing, notified.
      assert.equal((await nodeA.evaluator.round()).changes, 1);
      // The mute is written with the rules as it read them (no stamp) ...
      muteGate.open();
      const muted = await muting;
      assert.ok(muted.updatedAt > clock + 50, 'a later version, though the clock is behind');
      // ... and node B's evaluation, from the state before node A's, is dropped.
      evaluationGate.open();
      const dropped = await late;
      assert.equal(dropped.changes, 0);
      assert.equal(dropped.stale, 1);
      assert.equal(await count('monitor_history', id), 1);
      assert.equal(await count('alert_outbox', id), 2);
    } finally {
      evaluationGate.open();
      muteGate.open();
      await nodeA.evaluator.close();
      await nodeB.evaluator.close();
    }
  });
});
