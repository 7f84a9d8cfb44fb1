// Monitors (SPEC 13) as the domain sees them, in Trifle App's field names where it has them. Times
// are epoch milliseconds. The rest of the JSON a client sent that Trifle App knows but this service
// does not act on (target, segment_values, dashboard_id, report_settings, delivery_media) is kept in
// `extra` and returned as sent.
import type { SourceType } from './source';

export type MonitorType = 'alert' | 'report';
export type MonitorStatus = 'active' | 'paused';
export type TriggerStatus = 'idle' | 'warning' | 'recovering' | 'alerting';
export type Strategy = 'threshold' | 'range' | 'hampel' | 'cusum' | 'absence' | 'change';
export type InstanceState = 'ok' | 'pending' | 'firing' | 'nodata' | 'error';
/** Trifle App's per-rule status. */
export type RuleStatus = 'passed' | 'alerted' | 'suppressed' | 'failed';

export const STRATEGIES: readonly Strategy[] = ['threshold', 'range', 'hampel', 'cusum', 'absence', 'change'];
export const INSTANCE_STATES: readonly InstanceState[] = ['ok', 'pending', 'firing', 'nodata', 'error'];

export interface AlertRule {
  id: string;
  analysis_strategy: Strategy;
  /** as sent (Trifle App's names or ours), normalised by domain/alerts/strategies/settings.ts */
  settings: Record<string, unknown>;
  status: RuleStatus;
  last_summary: string | null;
  last_evaluated_at: number | null;
}

export interface Monitor {
  id: string;
  organizationId: string;
  userId: string;
  name: string;
  description: string | null;
  type: MonitorType;
  status: MonitorStatus;
  locked: boolean;
  sourceType: SourceType;
  sourceId: string;
  alertMetricKey: string | null;
  alertMetricPath: string | null;
  alertSeries: unknown[];
  alertTimeframe: string | null;
  alertGranularity: string | null;
  alertNotifyEvery: number;
  deliveryChannels: Record<string, unknown>[];
  alerts: AlertRule[];
  triggerStatus: TriggerStatus;
  /** pending period (`5m`), `0m` fires at once */
  for: string;
  /** reminder period while firing (`2h`), null: none */
  repeatEvery: string | null;
  notifyRecovery: boolean;
  notifyNoData: boolean;
  mutedUntil: number | null;
  extra: Record<string, unknown>;
  insertedAt: number;
  updatedAt: number;
  updatedBy?: string | null;
}

/** The state of one monitored instance (one key; the monitor's one key when it is not a pattern). */
export interface MonitorInstance {
  monitorId: string;
  /** the key read */
  instance: string;
  labels: Record<string, string>;
  state: InstanceState;
  since: number;
  /** when the condition began to hold (Pending), null when it does not */
  pendingSince: number | null;
  lastValue: number | null;
  lastEvaluatedAt: number | null;
  lastNotifiedAt: number | null;
  /** per rule id: whether it fired in the last evaluation */
  rules: Record<string, { firing: boolean; summary: string }>;
  /** completed buckets seen while Firing (1 for the bucket that made it fire), 0 when not Firing */
  firingBuckets: number;
  /** the end (ms) of the last completed bucket counted in firingBuckets */
  countedBucket: number | null;
}

export interface HistoryEntry {
  at: number;
  instance: string;
  from: InstanceState;
  to: InstanceState;
  value: number | null;
  summary: string;
}
