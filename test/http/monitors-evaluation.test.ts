// The evaluation loop through the real server (SPEC 13), with a clock the test controls: the server
// is started with `now` (deps.now, which the evaluator reads) and without the alert timers, and the
// test runs each round itself (deps.ops.alerts.evaluator.round(), then the outbox's drain()), so
// every step is deterministic. Points are ingested over HTTP, notifications go through a real
// webhook channel to a receiver on loopback.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';
import { createMonitor, monitorBody } from '../helpers/monitors';
import { startReceiver, type Receiver } from './channels-receiver';
import { formatTimestamp } from '../../src/shared/time';
import Database from 'better-sqlite3';
import path from 'node:path';

const MIN = 60_000;

describe('monitor evaluation with a controlled clock', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  let receiver: Receiver;
  let channelId: string;
  // a minute boundary two hours ago, so that every point is in the past of the real clock too
  const base = Math.floor(Date.now() / MIN) * MIN - 120 * MIN;
  let clock = base;

  const call = (method: string, path: string, body?: unknown) =>
    request(server, method, path, body, { token: agent.userToken });
  /** a point in minute `m` (its bucket), 10 s into it */
  async function point(key: string, m: number, load: number) {
    const res = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key, at: new Date(base + m * MIN + 10_000).toISOString(), values: { load } },
      { token: agent.sourceToken, sourceId: agent.sourceId },
    );
    assert.equal(res.status, 201, `${res.status} ${res.text}`);
  }
  /** moves the clock to 30 s into minute `m` (so minute m-1 is the last completed bucket) and runs a round */
  async function roundAt(m: number) {
    clock = base + m * MIN + 30_000;
    const stats = await server.deps.ops.alerts.evaluator.round();
    await server.deps.ops.alerts.outbox.drain();
    return stats;
  }
  const sent = () => receiver.received.map((r) => JSON.parse(r.body) as Record<string, any>);
  const show = async (id: string) => (await call('GET', `/api/v1/monitors/${id}`)).body.data;
  const history = async (id: string) =>
    ((await call('GET', `/api/v1/monitors/${id}/history`)).body.data as any[])
      .map((h) => `${h.from}>${h.to}`)
      .reverse();

  before(async () => {
    server = await startTestServer({}, { now: () => clock, alertsTimer: false });
    agent = await createProjectWithToken(server);
    receiver = await startReceiver();
    const channel = await call('POST', '/api/v1/channels', {
      name: 'hook',
      type: 'webhook',
      settings: { url: `${receiver.url}/hook` },
    });
    assert.equal(channel.status, 201, channel.text);
    channelId = channel.body.data.id;
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  test('OK -> Pending -> Firing -> reminder -> recovery, muted, paused', async () => {
    const m = await createMonitor(
      server,
      agent.userToken,
      monitorBody(agent.sourceId, {
        alert_metric_key: 'cpu',
        alert_timeframe: '5m',
        for: '2m',
        repeat_every: '10m',
        delivery_channels: [{ channel_id: channelId }],
      }),
    );
    await point('cpu', 0, 50);
    await roundAt(1);
    assert.equal((await show(m.id)).state, 'ok');
    await point('cpu', 1, 95);
    await roundAt(2);
    let shown = await show(m.id);
    assert.equal(shown.state, 'pending', 'the condition holds, for 2m not yet');
    assert.equal(shown.trigger_status, 'warning');
    assert.equal(shown.instances[0].last_value, 95);
    assert.equal(sent().length, 0);
    await point('cpu', 2, 96);
    await roundAt(3);
    assert.equal((await show(m.id)).state, 'pending');
    await point('cpu', 3, 97);
    await roundAt(4);
    shown = await show(m.id);
    assert.equal(shown.state, 'firing', 'held for 2 minutes');
    assert.equal(shown.trigger_status, 'alerting');
    assert.equal(shown.alerts[0].status, 'alerted');
    assert.match(shown.alerts[0].last_summary, /above 90: 97/);
    assert.deepEqual(
      sent().map((n) => n.kind ?? n.event),
      ['firing'],
    );
    const firstKey = receiver.received[0]!.headers['x-idempotency-key'];
    assert.ok(firstKey, 'the webhook carries the idempotency key');
    for (let minute = 4; minute < 13; minute++) await point('cpu', minute, 97);
    await roundAt(9);
    assert.equal(sent().length, 1, 'no reminder before repeat_every');
    await roundAt(14);
    assert.equal(sent().length, 2);
    assert.equal(sent()[1]!.kind, 'reminder');
    assert.match(sent()[1]!.title, /Still firing for 10 m/);
    await point('cpu', 14, 10);
    await roundAt(15);
    shown = await show(m.id);
    assert.equal(shown.state, 'ok');
    assert.equal(sent()[2]!.kind, 'resolved', 'a recovery is notified by default');
    assert.deepEqual(await history(m.id), ['ok>pending', 'pending>firing', 'firing>ok']);

    // Muted: evaluated and recorded, nothing sent.
    const put = await call('PUT', `/api/v1/monitors/${m.id}`, { for: '0m' });
    assert.equal(put.status, 200);
    await call('POST', `/api/v1/monitors/${m.id}/mute`, { until: new Date(base + 60 * MIN).toISOString() });
    await point('cpu', 15, 99);
    await roundAt(16);
    assert.equal((await show(m.id)).state, 'firing');
    assert.equal((await show(m.id)).alerts[0].status, 'suppressed');
    await point('cpu', 16, 10);
    await roundAt(17);
    assert.equal((await show(m.id)).state, 'ok');
    assert.equal(sent().length, 3, 'nothing sent while muted');
    assert.deepEqual(
      (await history(m.id)).slice(-2),
      ['ok>firing', 'firing>ok'],
      'muted changes are in the history',
    );
    await call('DELETE', `/api/v1/monitors/${m.id}/mute`);

    // Paused: not evaluated at all.
    await call('PUT', `/api/v1/monitors/${m.id}`, { status: 'paused' });
    await point('cpu', 17, 99);
    await roundAt(18);
    shown = await show(m.id);
    assert.equal(shown.state, 'ok');
    assert.equal(shown.trigger_status, 'idle');
    assert.equal((await history(m.id)).length, 5, 'no change recorded while paused');
    assert.equal(sent().length, 3);
    // Active again: fires at once (for 0m) and notifies.
    await call('PUT', `/api/v1/monitors/${m.id}`, { status: 'active' });
    await roundAt(18);
    assert.equal((await show(m.id)).state, 'firing');
    assert.equal(sent().length, 4);
    assert.equal(sent()[3]!.kind, 'firing');
    const keys = new Set(receiver.received.map((r) => r.headers['x-idempotency-key']));
    assert.equal(keys.size, 4, 'every notification has its own key');
    await call('DELETE', `/api/v1/monitors/${m.id}`);
  });

  test('alert_notify_every: a reminder on every Nth completed bucket Firing, a bucket counted once', async () => {
    const before = sent().length;
    const mine = () =>
      sent()
        .slice(before)
        .filter((n) => n.monitor?.name === 'every third');
    const m = await createMonitor(
      server,
      agent.userToken,
      monitorBody(agent.sourceId, {
        name: 'every third',
        alert_metric_key: 'fan',
        alert_timeframe: '5m',
        alert_notify_every: 3,
        delivery_channels: [{ channel_id: channelId }],
      }),
    );
    assert.equal((await show(m.id)).alert_notify_every, 3);
    for (let minute = 50; minute < 60; minute++) await point('fan', minute, 99);
    await roundAt(51);
    assert.deepEqual(
      mine().map((n) => n.kind),
      ['firing'],
      'the first trigger notifies',
    );
    // A second round in the same minute sees the same last bucket: not a trigger of its own.
    await roundAt(51);
    await roundAt(52);
    await roundAt(53);
    assert.equal(mine().length, 1, 'the 2nd and 3rd buckets Firing are quiet');
    await roundAt(54);
    assert.deepEqual(
      mine().map((n) => n.kind),
      ['firing', 'reminder'],
      'the 4th (N+1) bucket reminds',
    );
    assert.match(mine()[1]!.title, /Still firing for 3 m: every third/);
    await roundAt(55);
    await roundAt(56);
    assert.equal(mine().length, 2);
    await roundAt(57);
    assert.deepEqual(
      mine().map((n) => n.kind),
      ['firing', 'reminder', 'reminder'],
      'the 7th (2N+1) bucket reminds',
    );
    // Back to OK resets the count: the next Firing notifies at once and counts from 1 again.
    await point('fan', 60, 10);
    await roundAt(61);
    await point('fan', 61, 99);
    await point('fan', 62, 99);
    await roundAt(62);
    await roundAt(63);
    assert.deepEqual(
      mine().map((n) => n.kind),
      ['firing', 'reminder', 'reminder', 'resolved', 'firing'],
    );
    // 1 (Trifle App's default) adds no reminder: notifications on changes only.
    const put = await call('PUT', `/api/v1/monitors/${m.id}`, { alert_notify_every: 1 });
    assert.equal(put.status, 200, put.text);
    for (let minute = 63; minute < 70; minute++) await point('fan', minute, 99);
    for (let minute = 64; minute <= 70; minute++) await roundAt(minute);
    assert.equal(mine().length, 5, 'no reminder with alert_notify_every 1 and no repeat_every');
    await call('DELETE', `/api/v1/monitors/${m.id}`);
  });

  test('NoData (opt-in) and Error (the source cannot be read)', async () => {
    const before = sent().length;
    const quiet = await createMonitor(
      server,
      agent.userToken,
      monitorBody(agent.sourceId, {
        name: 'quiet',
        alert_metric_key: 'disk',
        notify_no_data: true,
        delivery_channels: [{ channel_id: channelId }],
      }),
    );
    const silent = await createMonitor(
      server,
      agent.userToken,
      monitorBody(agent.sourceId, {
        name: 'silent',
        alert_metric_key: 'disk',
        delivery_channels: [{ channel_id: channelId }],
      }),
    );
    await roundAt(30);
    assert.equal((await show(quiet.id)).state, 'nodata');
    assert.equal((await show(silent.id)).state, 'ok', 'no data is OK unless notify_no_data');
    assert.deepEqual(
      sent()
        .slice(before)
        .map((n) => n.kind),
      ['nodata'],
    );
    await point('disk', 30, 1);
    await roundAt(31);
    assert.equal((await show(quiet.id)).state, 'ok');
    assert.deepEqual(
      sent()
        .slice(before)
        .map((n) => n.kind),
      ['nodata', 'resolved'],
    );

    // The source unreachable: its reads fail (as a database source's would with its server down).
    // The round reads ahead many keys at a time (readSeriesMany), then key by key: both fail.
    const metrics = server.deps.metrics;
    const original = { one: metrics.readSeries, many: metrics.readSeriesMany };
    const refuse = async (): Promise<never> => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
    };
    metrics.readSeries = refuse;
    metrics.readSeriesMany = refuse;
    try {
      await roundAt(32);
    } finally {
      metrics.readSeries = original.one;
      metrics.readSeriesMany = original.many;
    }
    const failed = await show(silent.id);
    assert.equal(failed.state, 'error');
    assert.equal(failed.alerts[0].status, 'failed');
    assert.match(failed.alerts[0].last_summary, /source unreachable/);
    const h = (await call('GET', `/api/v1/monitors/${silent.id}/history?limit=1`)).body.data;
    assert.equal(h.length, 1);
    assert.deepEqual([h[0].from, h[0].to], ['ok', 'error']);
    assert.match(h[0].summary, /ECONNREFUSED/);
    assert.ok(
      sent()
        .slice(before)
        .some((n) => n.kind === 'error'),
    );
    await roundAt(33);
    assert.equal((await show(silent.id)).state, 'ok', 'back once the source answers');
  });

  test('a key pattern with a named group: one instance per matching key, notified per instance', async () => {
    const before = sent().length;
    const m = await createMonitor(
      server,
      agent.userToken,
      monitorBody(agent.sourceId, {
        name: 'per host',
        alert_metric_key: 'temp,host=(?<host>[^,]+)',
        delivery_channels: [{ channel_id: channelId }],
      }),
    );
    await point('temp,host=pve1', 40, 95);
    await point('temp,host=pve2', 40, 20);
    await point('temp,host=pve2,rack=1', 40, 99);
    await roundAt(41);
    const shown = await show(m.id);
    assert.equal(shown.state, 'firing');
    assert.deepEqual(
      shown.instances.map((i: any) => [i.key, i.labels, i.state]),
      [
        ['temp,host=pve1', { host: 'pve1' }, 'firing'],
        ['temp,host=pve2', { host: 'pve2' }, 'ok'],
      ],
    );
    const news = sent()
      .slice(before)
      .filter((n) => JSON.stringify(n).includes('per host'));
    assert.equal(news.length, 1, JSON.stringify(news));
    assert.deepEqual(news[0]!.instance, { host: 'pve1' });
  });
});

describe('a paced round of many monitors', () => {
  let server: TestServer;
  let agent: ProjectAgent;
  const base = Math.floor(Date.now() / MIN) * MIN - 120 * MIN;
  let clock = base;
  const MONITORS = 120;

  before(async () => {
    server = await startTestServer({}, { now: () => clock, alertsTimer: false });
    agent = await createProjectWithToken(server);
  });
  after(async () => {
    await server.stop();
  });

  async function points(keys: string[], m: number) {
    const res = await request(
      server,
      'POST',
      '/api/v1/metrics/batch',
      {
        points: keys.map((key) => ({
          key,
          at: new Date(base + m * MIN + 10_000).toISOString(),
          values: { load: 95 },
        })),
      },
      { token: agent.sourceToken, sourceId: agent.sourceId },
    );
    assert.ok(res.status === 201 || res.status === 200, `${res.status} ${res.text}`);
  }
  const roundAt = (m: number) => {
    clock = base + m * MIN + 30_000;
    return server.deps.ops.alerts.evaluator.round();
  };
  const all = async () => {
    const res = await request(server, 'GET', '/api/v1/monitors?limit=1000', undefined, {
      token: agent.userToken,
    });
    assert.equal(res.status, 200, res.text);
    return res.body.data as any[];
  };
  const historyOf = async (id: string) =>
    (
      await request(server, 'GET', `/api/v1/monitors/${id}/history`, undefined, {
        token: agent.userToken,
      })
    ).body.data as any[];

  test('spread over many turns, a round judges every monitor once, at its own clock, and finds a new key', async () => {
    for (let i = 0; i < MONITORS; i++)
      await createMonitor(
        server,
        agent.userToken,
        monitorBody(agent.sourceId, { name: `fleet ${i}`, alert_metric_key: 'fleet\\.(?<host>h\\d+)' }),
      );
    await points(['fleet.h1', 'fleet.h2', 'fleet.h3', 'other.h1'], 0);
    let stats = await roundAt(1);
    assert.equal(stats.monitors, MONITORS);
    assert.equal(stats.errors, 0);
    assert.equal(stats.instances, MONITORS * 3, 'three matching keys for every monitor');
    assert.ok(stats.turns > 1, `the round was spread over turns with pauses (${stats.turns} turns)`);
    for (const m of await all()) {
      assert.equal(m.state, 'firing', m.name);
      assert.deepEqual(m.instances.map((i: any) => i.key).sort(), ['fleet.h1', 'fleet.h2', 'fleet.h3']);
      assert.equal(m.alerts[0].last_evaluated_at, formatTimestamp(clock), "judged at the round's clock");
    }
    const first = await all();
    for (const m of first) assert.equal((await historyOf(m.id)).length, 3, 'one change per instance');
    // The same keys in the next period: nothing changes, nothing is judged twice.
    await points(['fleet.h1', 'fleet.h2', 'fleet.h3'], 1);
    stats = await roundAt(2);
    assert.equal(stats.instances, MONITORS * 3);
    assert.equal(stats.changes, 0);
    // A new key: every pattern matched afresh, though the matches of the last round were kept.
    await points(['fleet.h4'], 2);
    stats = await roundAt(3);
    assert.equal(stats.instances, MONITORS * 4, 'the new key is an instance of every monitor');
    assert.equal(stats.changes, MONITORS, 'the new instance of each monitor moved to firing, once');
    for (const m of await all()) assert.equal((await historyOf(m.id)).length, 4);
  });

  test(
    'while another connection holds the write lock, the round waits off the event loop',
    embeddedOnly("SQLite's write lock (tryOnly); PostgreSQL locks rows"),
    async () => {
      // The metric writer folds what it holds first: a fold waiting for the lock below would hold
      // the round's reads (which the writer answers) until the lock is released, and the round would
      // then find the lock free at its commit.
      await server.deps.metrics.flush();
      // Another writer of service.db (as the metric writer's fold is) takes the lock for 4 s.
      const other = new Database(path.join(server.dataDir, 'service.db'));
      other.pragma('busy_timeout = 5000');
      other.prepare('BEGIN IMMEDIATE').run();
      const released = new Promise<number>((resolve) => {
        setTimeout(() => {
          other.prepare('COMMIT').run();
          other.close();
          resolve(performance.now());
        }, 4000);
      });
      // the event loop's longest gap meanwhile: a 5 ms timer's lateness
      let last = performance.now();
      let longestGap = 0;
      const ticker = setInterval(() => {
        const at = performance.now();
        longestGap = Math.max(longestGap, at - last);
        last = at;
      }, 5);
      try {
        const stats = await roundAt(4);
        const freedAt = await released;
        assert.ok(performance.now() >= freedAt, 'the round committed after the lock was released');
        assert.equal(stats.errors, 0);
        assert.ok(
          longestGap < 2000,
          `the event loop was held ${longestGap.toFixed(0)} ms (the lock: 4,000 ms)`,
        );
        assert.ok(stats.lockWaits > 0, 'the round found the lock taken and tried again');
        for (const m of await all())
          for (const i of m.instances) assert.equal(i.last_evaluated_at, formatTimestamp(clock), m.name);
      } finally {
        clearInterval(ticker);
        await released;
      }
    },
  );
});
