// The outbox through the real server (SPEC 13): a notification is retried with back-off when the
// receiver fails, given up after the bounded attempts or a permanent refusal, a hung receiver holds
// only its own attempt (evaluation and ingest answer meanwhile), and a notification survives a
// SIGKILL of the server between its state change and a completed send: the next start sends it
// with the same idempotency key, and a start after that sends nothing again.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { startService } from '../helpers/process';
import { createMonitor, monitorBody } from '../helpers/monitors';
import { startReceiver, type Receiver } from './channels-receiver';
import { loadConfig } from '../../src/config';
import { startServer } from '../../src/server';
import { createLogger } from '../../src/lib/log';

const MIN = 60_000;

async function webhook(server: { url: string }, token: string, url: string): Promise<string> {
  const res = await request(
    server,
    'POST',
    '/api/v1/channels',
    { name: 'hook', type: 'webhook', settings: { url } },
    { token },
  );
  assert.equal(res.status, 201, res.text);
  return res.body.data.id;
}

async function ingest(server: { url: string }, agent: ProjectAgent, key: string, atMs: number, load: number) {
  const res = await request(
    server,
    'POST',
    '/api/v1/metrics',
    { key, at: new Date(atMs).toISOString(), values: { load } },
    { token: agent.sourceToken, sourceId: agent.sourceId },
  );
  assert.equal(res.status, 201, res.text);
}

describe('the outbox with a failing or hung receiver', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  let receiver: Receiver;
  let channelId: string;
  const base = Math.floor(Date.now() / MIN) * MIN - 120 * MIN;
  let clock = base;

  before(async () => {
    server = await startTestServer(
      {},
      {
        now: () => clock,
        alertsTimer: false,
        outbox: { timeoutMs: 2000, maxAttempts: 3, baseDelayMs: 1000, random: () => 0.5 },
      },
    );
    agent = await createProjectWithToken(server);
    receiver = await startReceiver();
    channelId = await webhook(server, agent.userToken, `${receiver.url}/hook`);
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  /** a firing monitor on `key`: its row is queued by one round `m` minutes on */
  async function fire(key: string, m: number) {
    const monitor = await createMonitor(
      server,
      agent.userToken,
      monitorBody(agent.sourceId, {
        name: key,
        alert_metric_key: key,
        delivery_channels: [{ channel_id: channelId }],
      }),
    );
    const minute = Math.floor(clock / MIN) * MIN + m * MIN;
    await ingest(server, agent, key, minute - MIN + 10_000, 99);
    clock = minute + 30_000;
    const stats = await server.deps.ops.alerts.evaluator.round();
    assert.ok(stats.queued >= 1);
    return monitor;
  }
  const rows = (monitorId: string) => server.deps.outbox.byMonitor(monitorId);
  /** each test starts with no monitor and an empty outbox queue */
  async function clean() {
    const list = await request(server, 'GET', '/api/v1/monitors', undefined, { token: agent.userToken });
    for (const m of list.body.data) {
      await request(server, 'DELETE', `/api/v1/monitors/${m.id}`, undefined, { token: agent.userToken });
    }
    clock += 60 * MIN;
    await server.deps.ops.alerts.outbox.drain();
    receiver.received.length = 0;
    receiver.answer.length = 0;
  }

  test('a failing receiver: retried with exponential back-off, same key, sent once it answers', async () => {
    await clean();
    receiver.answer.push({ status: 500 }, { status: 503 });
    const m = await fire('retry.me', 1);
    const outbox = server.deps.ops.alerts.outbox;
    await outbox.drain();
    let [row] = await rows(m.id);
    assert.deepEqual([row!.status, row!.attempts, row!.next_attempt_at - clock], ['pending', 1, 1000]);
    await outbox.drain();
    assert.equal(receiver.received.length, 1, 'not before its time');
    clock += 1000;
    await outbox.drain();
    [row] = await rows(m.id);
    assert.deepEqual(
      [row!.status, row!.attempts, row!.next_attempt_at - clock],
      ['pending', 2, 2000],
      'doubled',
    );
    clock += 2000;
    await outbox.drain();
    [row] = await rows(m.id);
    assert.deepEqual([row!.status, row!.attempts], ['sent', 3]);
    assert.equal(receiver.received.length, 3);
    const keys = new Set(receiver.received.map((r) => r.headers['x-idempotency-key']));
    assert.deepEqual([...keys], [row!.idempotency_key], 'every attempt carries the same key');
    clock += 60 * MIN;
    await outbox.drain();
    assert.equal(receiver.received.length, 3, 'a sent row is never sent again');
  });

  test('bounded: given up after max attempts, at once on a permanent refusal', async () => {
    await clean();
    receiver.answer.push({ status: 500 }, { status: 500 }, { status: 500 });
    const m = await fire('always.down', 1);
    const outbox = server.deps.ops.alerts.outbox;
    for (let i = 0; i < 5; i++) {
      await outbox.drain();
      clock += 10_000;
    }
    let [row] = await rows(m.id);
    assert.deepEqual([row!.status, row!.attempts], ['failed', 3]);
    assert.match(row!.last_error!, /500/);
    receiver.answer.push({ status: 400, body: '{"error":"bad"}' });
    const refused = await fire('refused', 1);
    await outbox.drain();
    [row] = await rows(refused.id);
    assert.deepEqual([row!.status, row!.attempts], ['failed', 1]);
  });

  test('a hung receiver holds only its own attempt: evaluation and ingest answer meanwhile; it times out and retries', async () => {
    await clean();
    receiver.answer.push({ status: 200, delayMs: 60_000 });
    const m = await fire('hung', 1);
    const outbox = server.deps.ops.alerts.outbox;
    outbox.kick();
    // the row is claimed after the outbox's reads (a round trip each on PostgreSQL), then sent
    for (const until = performance.now() + 5_000; outbox.inFlight === 0 && performance.now() < until;)
      await new Promise((resolve) => setTimeout(resolve, 5));
    assert.equal(outbox.inFlight, 1);
    const t0 = performance.now();
    const stats = await server.deps.ops.alerts.evaluator.round();
    const roundMs = performance.now() - t0;
    const t1 = performance.now();
    await ingest(server, agent, 'other', clock - 5_000, 1);
    const ingestMs = performance.now() - t1;
    assert.ok(stats.monitors >= 1);
    assert.equal(outbox.inFlight, 1, 'the attempt is still hung');
    assert.ok(
      roundMs < 1000 && ingestMs < 1000,
      `round ${roundMs.toFixed(0)} ms, ingest ${ingestMs.toFixed(0)} ms`,
    );
    await outbox.drain(); // ends with the attempt's 2 s timeout
    let [row] = await rows(m.id);
    assert.deepEqual([row!.status, row!.attempts], ['pending', 1]);
    assert.match(row!.last_error!, /timed out|no answer/);
    clock += 1000;
    await outbox.drain();
    [row] = await rows(m.id);
    assert.equal(row!.status, 'sent');
    assert.equal(receiver.received.length, 2);
  });
});

describe('the outbox across a SIGKILL', () => {
  test('a notification whose send was cut by SIGKILL is sent after the restart with the same key, and never again', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-outbox-'));
    const receiver = await startReceiver();
    // The receiver never answers the first request: the killed server's attempt cannot complete.
    receiver.answer.push({ status: 200, delayMs: 600_000 });
    const env = {
      SERVICE_DATA_DIR: dataDir,
      SERVICE_PORT: '0',
      SERVICE_LOG_LEVEL: 'warn',
      SERVICE_ALERTS_INTERVAL: '1s',
    };
    const child = await startService([], env);
    try {
      const agent = await createProjectWithToken(child);
      const channelId = await webhook(child, agent.userToken, `${receiver.url}/hook`);
      const m = await createMonitor(
        child,
        agent.userToken,
        monitorBody(agent.sourceId, { delivery_channels: [{ channel_id: channelId }] }),
      );
      await ingest(child, agent, 'cpu', Date.now() - MIN, 99);
      const deadline = Date.now() + 20_000;
      while (receiver.received.length === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal(receiver.received.length, 1, 'the first attempt reached the receiver');
      child.child.kill('SIGKILL');
      await child.exited;
      const firstKey = receiver.received[0]!.headers['x-idempotency-key'];

      for (let start = 0; start < 2; start++) {
        const config = loadConfig({ env: { ...env, SERVICE_LOG_LEVEL: 'silent' }, cwd: dataDir });
        const server = await startServer(config, { log: createLogger('silent'), alertsTimer: false });
        try {
          await server.deps.ops.alerts.outbox.drain();
          const rows = await server.deps.outbox.byMonitor(m.id);
          assert.equal(rows.length, 1);
          assert.equal(rows[0]!.status, 'sent');
          const state = (await server.deps.monitors.instances(m.id))[0]!;
          assert.equal(state.state, 'firing', 'the state change survived the kill');
        } finally {
          await server.close();
        }
      }
      assert.equal(receiver.received.length, 2, 'resent once after the kill, not after the second start');
      assert.equal(
        receiver.received[1]!.headers['x-idempotency-key'],
        firstKey,
        'with the same idempotency key',
      );
    } finally {
      if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
