// The interface's reading of monitors (web/lib/monitors.ts): the state a badge shows, the form field
// a 422 names, which dashboards a monitor marks, and the lines its rule draws.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  dashboardMonitors,
  describeRule,
  formFieldOf,
  keyCovers,
  ruleLines,
  shownState,
  writableOf,
  type Monitor,
} from '../../web/lib/monitors';

const NOW = Date.parse('2026-11-27T12:00:00Z');

function monitor(over: Partial<Monitor> = {}): Monitor {
  return {
    id: 'm1',
    name: 'Revenue dropped',
    type: 'alert',
    status: 'active',
    source_type: 'project',
    source_id: 's1',
    alert_metric_key: 'shop::SK::orders',
    alert_metric_path: 'revenue',
    alert_timeframe: '1h',
    alert_granularity: '1h',
    alerts: [{ id: 'r1', analysis_strategy: 'threshold', settings: { direction: 'below', value: 200 } }],
    state: 'firing',
    instances: [],
    muted_until: null,
    ...over,
  };
}

describe('web monitors', () => {
  test('the badge: paused, then muted while the mute is ahead, then the evaluated state', () => {
    assert.equal(shownState(monitor(), NOW), 'firing');
    assert.equal(shownState(monitor({ muted_until: '2026-11-27T13:00:00Z' }), NOW), 'muted');
    assert.equal(shownState(monitor({ muted_until: '2026-11-27T11:00:00Z' }), NOW), 'firing');
    assert.equal(
      shownState(monitor({ status: 'paused', muted_until: '2026-11-27T13:00:00Z' }), NOW),
      'paused',
    );
    assert.equal(shownState(monitor({ state: undefined }), NOW), 'ok');
  });

  test("a 422's field names map to the form's fields, in our spelling and Trifle App's", () => {
    assert.equal(formFieldOf('alert_metric_key', 'threshold'), 'key');
    assert.equal(formFieldOf('alert_metric_path', 'threshold'), 'path');
    assert.equal(formFieldOf('alerts[0].settings.value', 'threshold'), 'value');
    assert.equal(formFieldOf('alerts.0.settings.threshold_value', 'threshold'), 'value');
    assert.equal(formFieldOf('alerts[0].settings.hampel_window_size', 'hampel'), 'window');
    assert.equal(formFieldOf('alerts[0].settings.period', 'absence'), 'period');
    assert.equal(formFieldOf('alerts[0].analysis_strategy', 'threshold'), 'strategy');
    assert.equal(formFieldOf('alerts', 'threshold'), 'strategy');
    assert.equal(formFieldOf('delivery_channels[1].channel_id', 'threshold'), 'channels');
    assert.equal(formFieldOf('for', 'threshold'), 'for');
    assert.equal(formFieldOf('something_else', 'threshold'), null);
  });

  test('a monitor marks the dashboards on its source whose key it covers, firing by its instance there', () => {
    assert.ok(keyCovers('shop::SK::orders', 'shop::SK::orders', 'x'));
    assert.ok(keyCovers('shop::(?<c>[^:]+)::orders', 'shop::CZ::orders', 'shop::(?<country>[^:]+)::orders'));
    assert.ok(!keyCovers('shop::SK::orders', 'shop::CZ::orders', 'shop::(?<country>[^:]+)::orders'));
    assert.ok(!keyCovers('shop::(unclosed', 'shop::CZ::orders', 'x'));

    const pattern = monitor({
      id: 'm2',
      alert_metric_key: 'shop::(?<c>[^:]+)::orders',
      state: 'firing',
      instances: [
        {
          labels: { c: 'SK' },
          key: 'shop::SK::orders',
          state: 'ok',
          since: null,
          last_value: 1,
          last_evaluated_at: null,
        },
        {
          labels: { c: 'CZ' },
          key: 'shop::CZ::orders',
          state: 'firing',
          since: null,
          last_value: 9,
          last_evaluated_at: null,
        },
      ],
    });
    const list = [
      monitor(),
      pattern,
      monitor({ id: 'other', source_id: 's2' }),
      monitor({ id: 'nopath', alert_metric_path: null }),
    ];
    const onSk = dashboardMonitors(list, 's1', 'shop::SK::orders', 'shop::(?<country>[^:]+)::orders', NOW);
    assert.deepEqual(
      onSk.map((m) => [m.id, m.firing]),
      [
        ['m1', true],
        ['m2', false],
      ],
    );
    assert.deepEqual(onSk[0]!.lines, [{ value: 200, label: 'below 200' }]);
    const onCz = dashboardMonitors(list, 's1', 'shop::CZ::orders', 'shop::(?<country>[^:]+)::orders', NOW);
    assert.deepEqual(
      onCz.map((m) => [m.id, m.firing]),
      [['m2', true]],
    );
    // muted or paused: the line stays, the badge goes
    const quiet = dashboardMonitors(
      [monitor({ muted_until: '2026-11-27T13:00:00Z' })],
      's1',
      'shop::SK::orders',
      '',
      NOW,
    );
    assert.equal(quiet[0]!.firing, false);
  });

  test("a rule's lines and words, in our spelling and Trifle App's", () => {
    assert.deepEqual(
      ruleLines({
        analysis_strategy: 'threshold',
        settings: { threshold_direction: 'above', threshold_value: 5 },
      }),
      [{ value: 5, label: 'above 5' }],
    );
    assert.deepEqual(
      ruleLines({ analysis_strategy: 'range', settings: { range_min_value: 1, range_max_value: 9 } }).map(
        (l) => l.value,
      ),
      [1, 9],
    );
    assert.deepEqual(ruleLines({ analysis_strategy: 'hampel', settings: { window: 5, k: 3, floor: 0 } }), []);
    assert.equal(describeRule({ analysis_strategy: 'range', settings: { min: 1, max: 9 } }), 'outside 1..9');
    assert.equal(
      describeRule({ analysis_strategy: 'absence', settings: { period: '15m' } }),
      'no data for 15m',
    );
  });

  test("a saved monitor's preview body leaves out what the server keeps to itself", () => {
    const body = writableOf({ ...monitor(), instances: [], state: 'ok', inserted_at: 'x' } as Monitor);
    assert.equal(body.state, undefined);
    assert.equal(body.instances, undefined);
    assert.equal(body.id, undefined);
    assert.equal(body.alert_metric_key, 'shop::SK::orders');
    assert.deepEqual(body.alerts, [
      { id: 'r1', analysis_strategy: 'threshold', settings: { direction: 'below', value: 200 } },
    ]);
  });
});
