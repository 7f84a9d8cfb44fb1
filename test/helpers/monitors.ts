// Monitors for tests: a payload as Trifle App's API renders a monitor (what its clients save back),
// and a small monitor of this service's own shape.
import assert from 'node:assert/strict';
import { request } from './server';

/** A monitor exactly as Trifle App's MonitorsJSON renders one, on `sourceId`. */
export function trifleMonitorPayload(sourceId: string): Record<string, unknown> {
  return {
    id: 'c2a6f0de-3b8e-4d1c-9a57-3f0f2b8f6a11',
    name: 'Latency Alerts',
    description: 'p95 of the checkout service',
    type: 'alert',
    status: 'active',
    locked: false,
    target: {},
    segment_values: {},
    trigger_status: 'idle',
    source_type: 'project',
    source_id: sourceId,
    dashboard_id: null,
    alert_metric_key: 'service.latency',
    alert_metric_path: 'p95',
    alert_series: [
      {
        kind: 'path',
        path: 'p95',
        expression: '',
        label: '',
        visible: true,
        color_selector: 'default.*',
      },
    ],
    alert_timeframe: '1h',
    alert_granularity: '1m',
    alert_notify_every: 1,
    report_settings: null,
    delivery_channels: [{ channel: 'email', label: 'Primary', target: 'ops@example.com', config: {} }],
    delivery_media: [],
    alerts: [
      {
        id: '5b0c8f5e-8d0e-4b8a-a6f3-6f1d2c3b4a55',
        analysis_strategy: 'threshold',
        status: 'passed',
        settings: {
          threshold_direction: 'above',
          threshold_value: 350.0,
          range_min_value: null,
          range_max_value: null,
          hampel_window_size: null,
          hampel_k: null,
          hampel_mad_floor: null,
          treat_nil_as_zero: false,
          cusum_k: null,
          cusum_h: null,
        },
        last_summary: null,
        last_evaluated_at: null,
        continuous_trigger_count: 0,
        inserted_at: '2026-01-15T09:30:00',
        updated_at: '2026-01-15T09:30:00',
      },
    ],
    inserted_at: '2026-01-15T09:30:00',
    updated_at: '2026-01-15T09:30:00',
  };
}

/** A threshold monitor on `key`/`path` of a project source, with this service's extensions. */
export function monitorBody(sourceId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'CPU high',
    type: 'alert',
    status: 'active',
    source_type: 'project',
    source_id: sourceId,
    alert_metric_key: 'cpu',
    alert_metric_path: 'load',
    alert_timeframe: '10m',
    alert_granularity: '1m',
    alerts: [{ analysis_strategy: 'threshold', settings: { direction: 'above', value: 90 } }],
    ...extra,
  };
}

export async function createMonitor(
  server: { url: string },
  token: string,
  body: Record<string, unknown>,
): Promise<Record<string, any>> {
  const res = await request(server, 'POST', '/api/v1/monitors', body, { token });
  assert.equal(res.status, 201, res.text);
  return res.body.data;
}
