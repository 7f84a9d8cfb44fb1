// /api/v1/monitors through the real server (SPEC 13): Trifle App's payload accepted unchanged, the
// tokens and locking of dashboards, organization isolation, 422s naming the field, size limits.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { createMonitor, monitorBody, trifleMonitorPayload } from '../helpers/monitors';

describe('monitors API', () => {
  let server: TestServer;
  let a: ProjectAgent;
  let b: ProjectAgent;
  const call = (method: string, path: string, body: unknown, token: string) =>
    request(server, method, path, body, { token });

  before(async () => {
    server = await startTestServer();
    a = await createProjectWithToken(server);
    b = await createProjectWithToken(server);
  });
  after(() => server.stop());

  test('a monitor saved by Trifle App is accepted unchanged, top level or under `monitor`', async () => {
    for (const wrap of [false, true]) {
      const payload = trifleMonitorPayload(a.sourceId);
      const res = await call('POST', '/api/v1/monitors', wrap ? { monitor: payload } : payload, a.userToken);
      assert.equal(res.status, 201, res.text);
      const m = res.body.data;
      assert.match(m.id, /^[0-9a-f-]{36}$/);
      for (const field of [
        'name',
        'description',
        'type',
        'status',
        'locked',
        'source_type',
        'source_id',
        'alert_metric_key',
        'alert_metric_path',
        'alert_series',
        'alert_timeframe',
        'alert_granularity',
        'alert_notify_every',
        'delivery_channels',
        'target',
        'segment_values',
        'delivery_media',
      ]) {
        assert.deepEqual(m[field], payload[field], field);
      }
      assert.equal(m.trigger_status, 'idle');
      assert.equal(m.alerts.length, 1);
      const rule = m.alerts[0];
      assert.equal(rule.id, (payload.alerts as any)[0].id, 'a rule id sent is kept');
      assert.equal(rule.analysis_strategy, 'threshold');
      assert.equal(rule.status, 'passed');
      assert.equal(rule.settings.threshold_direction, 'above');
      assert.equal(rule.settings.threshold_value, 350);
      assert.equal(rule.settings.value, 350, 'our spelling is shown too');
      assert.equal(rule.settings.treat_nil_as_zero, false);
      assert.equal(m.for, '0m');
      assert.equal(m.repeat_every, null);
      assert.equal(m.notify_recovery, true);
      assert.equal(m.notify_no_data, false);
      assert.equal(m.muted_until, null);
      assert.equal(m.state, 'ok');
      assert.deepEqual(m.instances, []);
      // ...and saved back unchanged, as Trifle App's clients do after a GET.
      const shown = await call('GET', `/api/v1/monitors/${m.id}`, undefined, a.userToken);
      assert.equal(shown.status, 200);
      assert.deepEqual(shown.body.data, m);
      const put = await call('PUT', `/api/v1/monitors/${m.id}`, { monitor: shown.body.data }, a.userToken);
      assert.equal(put.status, 200, put.text);
      assert.deepEqual({ ...put.body.data, updated_at: null }, { ...m, updated_at: null });
    }
  });

  test('list, show, update, delete; extensions round-trip', async () => {
    const m = await createMonitor(
      server,
      a.userToken,
      monitorBody(a.sourceId, {
        for: '5m',
        repeat_every: '2h',
        notify_recovery: false,
        notify_no_data: true,
        muted_until: '2030-01-01T00:00:00Z',
      }),
    );
    assert.deepEqual(
      [m.for, m.repeat_every, m.notify_recovery, m.notify_no_data, m.muted_until],
      ['5m', '2h', false, true, '2030-01-01T00:00:00Z'],
    );
    const list = await call('GET', '/api/v1/monitors', undefined, a.userToken);
    assert.equal(list.status, 200);
    assert.ok(list.body.data.some((x: { id: string }) => x.id === m.id));
    assert.equal(typeof list.body.meta.total, 'number');
    const put = await call(
      'PUT',
      `/api/v1/monitors/${m.id}`,
      { name: 'CPU very high', repeat_every: null },
      a.userToken,
    );
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.data.name, 'CPU very high');
    assert.equal(put.body.data.repeat_every, null);
    assert.equal(put.body.data.for, '5m', 'fields not sent are kept');
    const del = await call('DELETE', `/api/v1/monitors/${m.id}`, undefined, a.userToken);
    assert.equal(del.status, 200);
    assert.equal(del.body.data.id, m.id);
    const gone = await call('GET', `/api/v1/monitors/${m.id}`, undefined, a.userToken);
    assert.equal(gone.status, 404);
  });

  test("another organization's monitor is 404 for every route, and its source cannot be used", async () => {
    const m = await createMonitor(server, a.userToken, monitorBody(a.sourceId));
    for (const [method, path, body] of [
      ['GET', `/api/v1/monitors/${m.id}`, undefined],
      ['PUT', `/api/v1/monitors/${m.id}`, { name: 'mine' }],
      ['DELETE', `/api/v1/monitors/${m.id}`, undefined],
      ['GET', `/api/v1/monitors/${m.id}/history`, undefined],
      ['POST', `/api/v1/monitors/${m.id}/mute`, { until: '2030-01-01T00:00:00Z' }],
      ['DELETE', `/api/v1/monitors/${m.id}/mute`, undefined],
    ] as const) {
      for (const token of [b.userToken, b.sourceToken]) {
        const res = await call(method, path, body, token);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      }
    }
    const list = await call('GET', '/api/v1/monitors', undefined, b.userToken);
    assert.ok(!list.body.data.some((x: { id: string }) => x.id === m.id));
    const steal = await call('POST', '/api/v1/monitors', monitorBody(a.sourceId), b.userToken);
    assert.equal(steal.status, 422);
    assert.ok(steal.body.errors.source_id, steal.text);
    const preview = await call('POST', '/api/v1/monitors/preview', monitorBody(a.sourceId), b.userToken);
    assert.equal(preview.status, 422);
    const still = await call('GET', `/api/v1/monitors/${m.id}`, undefined, a.userToken);
    assert.equal(still.body.data.name, m.name);
  });

  test('tokens: none is 401; a read-only source token reads but cannot write', async () => {
    const none = await request(server, 'GET', '/api/v1/monitors');
    assert.equal(none.status, 401);
    const reader = await request(
      server,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: a.sourceId, read: true, write: false },
      { token: a.userToken },
    );
    assert.equal(reader.status, 201, reader.text);
    const token = reader.body.data.token.value as string;
    assert.equal((await call('GET', '/api/v1/monitors', undefined, token)).status, 200);
    assert.equal((await call('POST', '/api/v1/monitors', monitorBody(a.sourceId), token)).status, 403);
    const viaSource = await call('POST', '/api/v1/monitors', monitorBody(a.sourceId), a.sourceToken);
    assert.equal(viaSource.status, 201, viaSource.text);
    assert.equal(
      viaSource.body.data.user_id,
      (await call('GET', '/api/v1/bootstrap/me', undefined, a.userToken)).body.data.user.id,
    );
  });

  test('locking: a locked monitor refuses changes with 409 until a PUT unlocks it; stale versions are 409', async () => {
    const m = await createMonitor(server, a.userToken, monitorBody(a.sourceId, { locked: true }));
    const put = await call('PUT', `/api/v1/monitors/${m.id}`, { name: 'x' }, a.userToken);
    assert.deepEqual([put.status, put.body], [409, { errors: { detail: 'Monitor is locked' } }]);
    const del = await call('DELETE', `/api/v1/monitors/${m.id}`, undefined, a.userToken);
    assert.equal(del.status, 409);
    const unlock = await call('PUT', `/api/v1/monitors/${m.id}`, { locked: false, name: 'y' }, a.userToken);
    assert.equal(unlock.status, 200, unlock.text);
    assert.equal(unlock.body.data.locked, false);
    const stale = await call(
      'PUT',
      `/api/v1/monitors/${m.id}`,
      { name: 'z', updated_at: '2001-01-01T00:00:00Z' },
      a.userToken,
    );
    assert.equal(stale.status, 409, stale.text);
  });

  test('422 names the field: strategy, settings, timeframe, granularity, path, key pattern, channel, durations', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ alerts: [{ analysis_strategy: 'anomaly', settings: {} }] }, 'alerts[0].analysis_strategy'],
      [{ alerts: [{ analysis_strategy: 'threshold', settings: {} }] }, 'alerts[0].settings.value'],
      [
        { alerts: [{ analysis_strategy: 'threshold', settings: { threshold_value: 'lots' } }] },
        'alerts[0].settings.threshold_value',
      ],
      [
        { alerts: [{ analysis_strategy: 'range', settings: { range_min_value: 5, range_max_value: 1 } }] },
        'alerts[0].settings.range_max_value',
      ],
      [
        { alerts: [{ analysis_strategy: 'hampel', settings: { window: 0, k: 3 } }] },
        'alerts[0].settings.window',
      ],
      [{ alerts: [{ analysis_strategy: 'cusum', settings: { k: 0.5 } }] }, 'alerts[0].settings.h'],
      [
        { alerts: [{ analysis_strategy: 'absence', settings: { period: 'soon' } }] },
        'alerts[0].settings.period',
      ],
      [
        { alerts: [{ analysis_strategy: 'absence', settings: { period: '2h' } }] },
        'alerts[0].settings.period',
      ],
      [{ alerts: [{ analysis_strategy: 'change', settings: {} }] }, 'alerts[0].settings.percent'],
      [{ alert_timeframe: 'yesterday' }, 'alert_timeframe'],
      [{ alert_granularity: '7s' }, 'alert_granularity'],
      [{ alert_metric_path: 'a.*' }, 'alert_metric_path'],
      [{ alert_metric_key: 'cpu,host=(?<host>(a+)+)' }, 'alert_metric_key'],
      [{ delivery_channels: [{ channel_id: 'nope' }] }, 'delivery_channels[0].channel_id'],
      [{ delivery_channels: [{ label: 'x' }] }, 'delivery_channels[0]'],
      [{ for: 'a while' }, 'for'],
      [{ repeat_every: '2 hours' }, 'repeat_every'],
      [{ muted_until: 'tomorrow' }, 'muted_until'],
      [{ status: 'sleeping' }, 'status'],
      [{ type: 'page' }, 'type'],
      [{ alert_notify_every: 0 }, 'alert_notify_every'],
      [{ name: '  ' }, 'name'],
      [{ description: 'x'.repeat(10_001) }, 'description'],
      [
        {
          alerts: Array.from({ length: 21 }, () => ({
            analysis_strategy: 'threshold',
            settings: { value: 1 },
          })),
        },
        'alerts',
      ],
    ];
    for (const [change, field] of cases) {
      const res = await call('POST', '/api/v1/monitors', monitorBody(a.sourceId, change), a.userToken);
      assert.equal(res.status, 422, `${JSON.stringify(change).slice(0, 80)}: ${res.text}`);
      assert.ok(res.body.errors[field], `${field} in ${res.text}`);
    }
    const missing = await call('POST', '/api/v1/monitors', { type: 'alert' }, a.userToken);
    assert.equal(missing.status, 422);
    assert.ok(missing.body.errors.name && missing.body.errors.source, missing.text);
    const notObject = await call('POST', '/api/v1/monitors', [1, 2], a.userToken);
    assert.equal(notObject.status, 400);
  });

  test('size limits: a document over 64 KiB or nested too deep is 422, never 500', async () => {
    const big = { config: { blob: 'x'.repeat(70_000) } };
    const res = await call(
      'POST',
      '/api/v1/monitors',
      monitorBody(a.sourceId, {
        delivery_channels: [{ channel: 'webhook', target: 'https://example.com', ...big }],
      }),
      a.userToken,
    );
    assert.equal(res.status, 422, res.text);
    let deep: unknown = 1;
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const nested = await call(
      'POST',
      '/api/v1/monitors',
      monitorBody(a.sourceId, { target: deep }),
      a.userToken,
    );
    assert.equal(nested.status, 422, nested.text);
  });

  test('mute and unmute', async () => {
    const m = await createMonitor(server, a.userToken, monitorBody(a.sourceId, { locked: true }));
    const mute = await call(
      'POST',
      `/api/v1/monitors/${m.id}/mute`,
      { until: '2031-02-03T04:05:06Z' },
      a.userToken,
    );
    assert.equal(mute.status, 200, mute.text);
    assert.equal(mute.body.data.muted_until, '2031-02-03T04:05:06Z');
    assert.equal(mute.body.data.muted, true);
    const bad = await call('POST', `/api/v1/monitors/${m.id}/mute`, { until: 'later' }, a.userToken);
    assert.equal(bad.status, 422);
    assert.ok(bad.body.errors.until);
    const unmute = await call('DELETE', `/api/v1/monitors/${m.id}/mute`, undefined, a.userToken);
    assert.equal(unmute.status, 200);
    assert.equal(unmute.body.data.muted_until, null);
    const history = await call('GET', `/api/v1/monitors/${m.id}/history?limit=5`, undefined, a.userToken);
    assert.deepEqual([history.status, history.body], [200, { data: [] }]);
    const badLimit = await call('GET', `/api/v1/monitors/${m.id}/history?limit=0`, undefined, a.userToken);
    assert.equal(badLimit.status, 400);
  });
});
