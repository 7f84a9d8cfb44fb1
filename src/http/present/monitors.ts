// The JSON shape of monitors (SPEC 13): Trifle App's fields, then this service's extensions, every
// field always present. `state` is the worst over the instances; `trigger_status` is Trifle App's
// word for it.
import { formatTimestamp } from '../../shared/time';
import type {
  HistoryEntry,
  InstanceState,
  Monitor,
  MonitorInstance,
  TriggerStatus,
} from '../../model/monitor';
import { worstState } from '../../domain/alerts/evaluator';
import { parseRuleSettings, presentRuleSettings } from '../../domain/alerts/strategies';

const time = (ms: number | null) => (ms === null ? null : formatTimestamp(ms));

const TRIGGER: Record<InstanceState, TriggerStatus> = {
  ok: 'idle',
  pending: 'warning',
  nodata: 'warning',
  error: 'warning',
  firing: 'alerting',
};

export function presentMonitor(m: Monitor, instances: readonly MonitorInstance[], now: number) {
  const state = worstState(instances);
  return {
    id: m.id,
    name: m.name,
    description: m.description,
    type: m.type,
    status: m.status,
    locked: m.locked,
    organization_id: m.organizationId,
    user_id: m.userId,
    source_type: m.sourceType,
    source_id: m.sourceId,
    alert_metric_key: m.alertMetricKey,
    alert_metric_path: m.alertMetricPath,
    alert_series: m.alertSeries,
    alert_timeframe: m.alertTimeframe,
    alert_granularity: m.alertGranularity,
    alert_notify_every: m.alertNotifyEvery,
    delivery_channels: m.deliveryChannels,
    alerts: m.alerts.map((rule) => ({
      id: rule.id,
      analysis_strategy: rule.analysis_strategy,
      settings: presentRuleSettings(
        parseRuleSettings(rule.analysis_strategy, rule.settings, '', { add: () => undefined }),
        rule.settings,
      ),
      status: rule.status,
      last_summary: rule.last_summary,
      last_evaluated_at: time(rule.last_evaluated_at),
    })),
    trigger_status: m.status === 'paused' ? 'idle' : TRIGGER[state],
    target: m.extra.target ?? {},
    segment_values: m.extra.segment_values ?? {},
    dashboard_id: m.extra.dashboard_id ?? null,
    report_settings: m.extra.report_settings ?? null,
    delivery_media: m.extra.delivery_media ?? [],
    inserted_at: formatTimestamp(m.insertedAt),
    updated_at: formatTimestamp(m.updatedAt),
    for: m.for,
    repeat_every: m.repeatEvery,
    notify_recovery: m.notifyRecovery,
    notify_no_data: m.notifyNoData,
    muted_until: time(m.mutedUntil),
    muted: m.mutedUntil !== null && m.mutedUntil > now,
    state,
    instances: instances.map((i) => ({
      key: i.instance,
      labels: i.labels,
      state: i.state,
      since: formatTimestamp(i.since),
      last_value: i.lastValue,
      last_evaluated_at: time(i.lastEvaluatedAt),
    })),
  };
}

export function presentHistory(e: HistoryEntry) {
  return {
    at: formatTimestamp(e.at),
    instance: e.instance,
    from: e.from,
    to: e.to,
    value: e.value,
    summary: e.summary,
  };
}
