// The background jobs stop and start again, as a node of cluster mode does when it loses the
// jobs' lease and takes it back (src/ops/jobs.ts): the outbox sender, the retention sweeper and the
// alert evaluator's timer, on a service.db in a temporary directory.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createOutboxRepo } from '../../src/storage/outbox';
import { createOutboxWorker } from '../../src/domain/alerts/outbox';
import { createEvaluator } from '../../src/domain/alerts/evaluator';
import { createRetentionSweeper } from '../../src/ops/retention-sweeper';
import { backgroundJobs } from '../../src/ops/jobs';
import type { ChannelSender, DeliveryResult } from '../../src/domain/alerts/delivery-port';
import type { MonitorsRepo } from '../../src/storage/monitors';
import { createLogger } from '../../src/lib/log';

const log = createLogger('silent');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, probe: () => boolean, ms = 2000): Promise<void> {
  const end = performance.now() + ms;
  while (!probe()) {
    if (performance.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(2);
  }
}

describe('background jobs stopped and started again', () => {
  let dir = '';
  let db: Db;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'jobs-restart-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the outbox: a stop aborts the attempt in flight and keeps its row; a start sends it again', async () => {
    const outbox = createOutboxRepo(db);
    await outbox.insert({
      idempotency_key: 'k-1',
      organization_id: 'org',
      monitor_id: null,
      channel_id: 'channel',
      notification: JSON.stringify({ idempotency_key: 'k-1' }),
      created_at: 0,
    });
    const status = () =>
      db.prepare("SELECT status, attempts FROM alert_outbox WHERE idempotency_key = 'k-1'").get();
    let hang = true;
    const attempts: Array<'aborted' | 'sent'> = [];
    const sender: ChannelSender = {
      send: (_org, _channel, _n, signal) =>
        hang
          ? new Promise<DeliveryResult>((resolve) =>
              signal.addEventListener('abort', () => {
                attempts.push('aborted');
                resolve({ ok: false, retryable: true, error: 'aborted' });
              }),
            )
          : (attempts.push('sent'), Promise.resolve({ ok: true, retryable: false })),
    };
    const worker = createOutboxWorker({ outbox, sender, now: () => 1_000, log, timeoutMs: 60_000 });
    worker.start(0);
    worker.kick();
    await until('an attempt in flight', () => worker.inFlight === 1);
    await worker.stop();
    assert.equal(worker.inFlight, 0);
    assert.deepEqual(attempts, ['aborted']);
    assert.deepEqual(status(), { status: 'sending', attempts: 1 }); // for the next holder
    hang = false;
    worker.kick();
    await worker.drain();
    await sleep(20);
    assert.deepEqual(attempts, ['aborted'], 'nothing sent while stopped');
    worker.start(0); // the lease taken back: the row is resumed and sent, with a live signal
    await worker.drain();
    assert.deepEqual(attempts, ['aborted', 'sent']);
    assert.deepEqual(status(), { status: 'sent', attempts: 2 });
    await worker.close();
  });

  test('the sweeper and the evaluator: no sweep or round while stopped, one timer each after a restart', async () => {
    const sweeper = createRetentionSweeper({
      open: () => openDatabase(path.join(dir, 'service.db')),
      now: () => Date.now(),
      log,
      intervalMs: 20,
      initialDelayMs: 0,
    });
    let rounds = 0;
    // the evaluator's ports: a round with no monitors reads one empty page, slowly, so that the
    // stops below mostly come while a round runs
    const monitors = {
      activePage: async () => {
        rounds++;
        await sleep(15);
        return [];
      },
    } as unknown as MonitorsRepo;
    const evaluator = createEvaluator({
      monitors,
      outbox: createOutboxRepo(db),
      sources: { byId: async () => undefined },
      metrics: {
        readSeries: async () => assert.fail('no series to read'),
        readSeriesMany: async () => [],
      },
      now: () => Date.now(),
      log,
    });
    const outbox = createOutboxWorker({
      outbox: createOutboxRepo(db),
      sender: { send: async () => ({ ok: true, retryable: false }) },
      now: () => Date.now(),
      log,
    });
    const jobs = backgroundJobs({ sweeper, evaluator, outbox, alertsIntervalMs: 5 });
    jobs.start();
    await sleep(300);
    await jobs.stop();
    const [sweeps1, rounds1] = [sweeper.stats.sweeps, rounds];
    assert.ok(sweeps1 >= 3 && rounds1 >= 3, `sweeps ${sweeps1}, rounds ${rounds1} in 300 ms`);
    await sleep(200);
    assert.equal(sweeper.stats.sweeps, sweeps1, 'no sweep while stopped');
    assert.equal(rounds, rounds1, 'no round while stopped');
    // stopped and started again quickly, twice: still one timer each (at most one per 20 ms)
    jobs.start();
    await jobs.stop();
    jobs.start();
    await jobs.stop();
    jobs.start();
    await sleep(300);
    await jobs.stop();
    const sweeps2 = sweeper.stats.sweeps - sweeps1;
    const rounds2 = rounds - rounds1;
    assert.ok(sweeps2 >= 3 && sweeps2 <= 300 / 20 + 3, `sweeps after the restart: ${sweeps2}`);
    assert.ok(rounds2 >= 3 && rounds2 <= 300 / 20 + 3, `rounds after the restart: ${rounds2}`);
    await sleep(100);
    assert.equal(rounds - rounds1, rounds2, 'no round after the last stop');
    await evaluator.close();
    await outbox.close();
    await sweeper.close();
  });
});
