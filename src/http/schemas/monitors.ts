// Request bodies of /monitors (SPEC 13): the envelope (`monitor` or the top level) and the types of
// the top-level fields, in Trifle App's names plus this service's extensions. Every field is optional
// here: what a create needs, and the checks that need the database (source, granularity, channels),
// rule settings and series rows, live in src/domain/alerts/monitors.ts. Unknown fields are dropped.
import * as v from 'valibot';
import { badRequest } from '../../errors';
import { ErrorBag } from '../../domain/dashboards/issues';
import { PERIOD_MESSAGE, isPeriod } from '../../domain/dashboards/periods';
import { DEPTH_MESSAGE, depthWithin } from '../../domain/dashboards/limits';
import { SERIES_ROW } from '../../domain/dashboards/widget-series';
import { STRATEGIES } from '../../model/monitor';
import { parseTimestamp } from '../../shared/time';
import {
  isDuration,
  DURATION_MESSAGE,
  MAX_RULES,
  MAX_CHANNELS,
  MAX_SERIES_ROWS,
} from '../../domain/alerts/limits';

const MAX_TEXT = 255;
const MAX_DESCRIPTION = 10_000;
const MAX_DEPTH = 8;
const chars = (s: string) => [...s].length;

const text = v.string('must be a string');
const bounded = (max: number) =>
  v.pipe(
    text,
    v.check((s: string) => chars(s) <= max, `must be at most ${max} characters`),
  );
const name = v.pipe(
  bounded(MAX_TEXT),
  v.check((s: string) => s.trim() !== '', 'must not be blank'),
);
const flag = v.boolean('must be true or false');
const period = v.pipe(text, v.check(isPeriod, PERIOD_MESSAGE));
const duration = v.pipe(text, v.check(isDuration, DURATION_MESSAGE));
const object = v.pipe(
  v.record(v.string(), v.unknown(), 'must be an object'),
  v.check(
    (value: Record<string, unknown>) => depthWithin(value, MAX_DEPTH),
    `must be nested at most ${MAX_DEPTH} levels deep`,
  ),
);
const sourceType = v.picklist(['database', 'project'], 'must be one of database, project');
const timestamp = v.pipe(
  text,
  v.check((s: string) => parseTimestamp(s) !== null, 'must be an RFC 3339 timestamp with a time zone offset'),
);

const RULE = v.looseObject(
  {
    id: v.optional(v.nullable(text)),
    analysis_strategy: v.picklist(STRATEGIES, `must be one of ${STRATEGIES.join(', ')}`),
    settings: v.optional(v.nullable(object)),
    status: v.optional(v.nullable(text)),
    last_summary: v.optional(v.nullable(text)),
    last_evaluated_at: v.optional(v.nullable(text)),
  },
  'must be an alert rule object',
);

// Trifle App's own entries ({channel, label, target, config}) are kept as sent; ours name a channel.
const CHANNEL = v.pipe(
  v.looseObject(
    {
      channel_id: v.optional(text),
      channel: v.optional(text),
      label: v.optional(v.nullable(bounded(120))),
      target: v.optional(v.nullable(bounded(MAX_TEXT))),
      config: v.optional(v.nullable(object)),
    },
    'must be a delivery channel object',
  ),
  v.check(
    (entry) => entry.channel_id !== undefined || entry.channel !== undefined,
    "must name a channel: {channel_id} (or Trifle App's {channel, target})",
  ),
);

const MONITOR_FIELDS = v.object({
  name: v.optional(name),
  description: v.optional(v.nullable(bounded(MAX_DESCRIPTION))),
  type: v.optional(v.picklist(['alert', 'report'], 'must be one of alert, report')),
  status: v.optional(v.picklist(['active', 'paused'], 'must be one of active, paused')),
  locked: v.optional(flag),
  source: v.optional(v.object({ type: sourceType, id: text }, 'must be an object {type, id}')),
  source_type: v.optional(sourceType),
  source_id: v.optional(text),
  alert_metric_key: v.optional(v.nullable(v.pipe(bounded(MAX_TEXT), v.minLength(1, 'must not be empty')))),
  alert_metric_path: v.optional(v.nullable(bounded(MAX_TEXT))),
  alert_series: v.optional(
    v.nullable(
      v.pipe(
        v.array(SERIES_ROW, 'must be a list of series rows'),
        v.maxLength(MAX_SERIES_ROWS, `must hold at most ${MAX_SERIES_ROWS} rows`),
      ),
    ),
  ),
  alert_timeframe: v.optional(v.nullable(period)),
  alert_granularity: v.optional(v.nullable(period)),
  alert_notify_every: v.optional(
    v.pipe(
      v.number('must be an integer from 1 to 100'),
      v.integer('must be an integer from 1 to 100'),
      v.minValue(1, 'must be an integer from 1 to 100'),
      v.maxValue(100, 'must be an integer from 1 to 100'),
    ),
  ),
  delivery_channels: v.optional(
    v.nullable(
      v.pipe(
        v.array(CHANNEL, 'must be a list'),
        v.maxLength(MAX_CHANNELS, `must hold at most ${MAX_CHANNELS} channels`),
      ),
    ),
  ),
  alerts: v.optional(
    v.nullable(
      v.pipe(v.array(RULE, 'must be a list'), v.maxLength(MAX_RULES, `must hold at most ${MAX_RULES} rules`)),
    ),
  ),
  // Computed by the service; accepted (a client echoes a monitor back) and ignored.
  trigger_status: v.optional(v.nullable(text)),
  for: v.optional(duration),
  repeat_every: v.optional(v.nullable(duration)),
  notify_recovery: v.optional(flag),
  notify_no_data: v.optional(flag),
  muted_until: v.optional(v.nullable(timestamp)),
  // Trifle App's fields this service keeps as they are.
  target: v.optional(v.nullable(object)),
  segment_values: v.optional(v.nullable(object)),
  dashboard_id: v.optional(v.nullable(text)),
  report_settings: v.optional(v.nullable(object)),
  delivery_media: v.optional(
    v.nullable(v.pipe(v.array(object, 'must be a list'), v.maxLength(10, 'must hold at most 10 entries'))),
  ),
  updated_at: v.optional(v.unknown()),
});
export type MonitorFields = v.InferOutput<typeof MONITOR_FIELDS>;

/** Parses the fields; issues go to `bag` and broken fields are left out (one 422 names every one). */
export function parseMonitorFields(fields: Record<string, unknown>, bag: ErrorBag): MonitorFields {
  if (!depthWithin(fields, 16)) {
    bag.add('body', DEPTH_MESSAGE.replace('32', '16'));
    return {};
  }
  const first = v.safeParse(MONITOR_FIELDS, fields, { abortEarly: false });
  if (first.success) return first.output;
  bag.addIssues('', first.issues);
  const broken = new Set(first.issues.map((issue) => issue.path?.[0]?.key));
  const rest = Object.fromEntries(Object.entries(fields).filter(([field]) => !broken.has(field)));
  const second = v.safeParse(MONITOR_FIELDS, rest);
  if (!second.success) throw new Error('monitor fields schema must accept any subset of valid fields');
  return second.output;
}

const PREVIEW_RANGE = v.object({
  from: v.optional(timestamp),
  to: v.optional(timestamp),
});

/** The optional from/to of a preview body. */
export function parsePreviewRange(
  fields: Record<string, unknown>,
  bag: ErrorBag,
): { from?: number; to?: number } {
  const result = v.safeParse(PREVIEW_RANGE, { from: fields.from, to: fields.to }, { abortEarly: false });
  if (!result.success) {
    bag.addIssues('', result.issues);
    return {};
  }
  const from = result.output.from === undefined ? undefined : parseTimestamp(result.output.from)!;
  const to = result.output.to === undefined ? undefined : parseTimestamp(result.output.to)!;
  return { from, to };
}

const LIMIT = v.object({
  limit: v.optional(
    v.pipe(
      v.string('limit must be given once'),
      v.regex(/^\d{1,4}$/, 'limit must be an integer from 1 to 1000'),
      v.transform(Number),
      v.minValue(1, 'limit must be an integer from 1 to 1000'),
      v.maxValue(1000, 'limit must be an integer from 1 to 1000'),
    ),
    '100',
  ),
});

/** `?limit=` of the history (1..1000, default 100), else 400. */
export function parseHistoryQuery(query: Record<string, unknown>): { limit: number } {
  const result = v.safeParse(LIMIT, { limit: query.limit });
  if (!result.success) throw badRequest(result.issues[0].message);
  return result.output;
}

const MUTE = v.object({ until: timestamp });

/** Body of POST /monitors/:id/mute: `{until}`, an RFC 3339 time. */
export function parseMute(fields: Record<string, unknown>, bag: ErrorBag): { until?: number } {
  const result = v.safeParse(MUTE, { until: fields.until }, { abortEarly: false });
  if (!result.success) {
    bag.addIssues('', result.issues);
    return {};
  }
  return { until: parseTimestamp(result.output.until)! };
}
