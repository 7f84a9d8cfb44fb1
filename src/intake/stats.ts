// What the intake read and skipped, per server (keyed by its Deps), for GET /metrics and the logs.
import type { Deps } from '../deps';
import type { MappedBody } from './mapping';

export class IntakeCounters {
  /** samples (lines with fields) read, by format */
  readonly samples = new Map<string, number>();
  /** points handed to the write path */
  points = 0;
  /** string fields skipped (Proxmox VE's `name`, Home Assistant's `state`) */
  skippedStrings = 0;
  /** NaN and infinite values skipped */
  skippedNonFinite = 0;
  /** on listeners: datagrams and connections' text that did not parse, samples or points not stored */
  dropped = 0;
  /** points refused (HTTP) or dropped (listeners) because their key was new and over intake.max_keys_per_source */
  overKeyLimit = 0;

  lineProtocol(mapped: MappedBody): void {
    this.add('influx', mapped);
  }

  add(
    format: string,
    mapped: Pick<MappedBody, 'samples' | 'skippedStrings' | 'skippedNonFinite'> & {
      points: { readonly length: number };
    },
  ): void {
    this.samples.set(format, (this.samples.get(format) ?? 0) + mapped.samples);
    this.points += mapped.points.length;
    this.skippedStrings += mapped.skippedStrings;
    this.skippedNonFinite += mapped.skippedNonFinite;
  }
}

const counters = new WeakMap<object, IntakeCounters>();

/** The counters of one server. */
export function intakeCountersOf(deps: Pick<Deps, 'ops'>): IntakeCounters {
  let found = counters.get(deps.ops);
  if (!found) {
    found = new IntakeCounters();
    counters.set(deps.ops, found);
  }
  return found;
}

/** The counters in the Prometheus text format, appended to GET /metrics. */
export function renderIntakeMetrics(c: IntakeCounters): string {
  const lines: string[] = [];
  const family = (name: string, help: string) =>
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`);
  family(
    'service_intake_samples_total',
    'Samples read by the intake (InfluxDB line protocol, Graphite, StatsD, OTLP, Prometheus remote write), by format.',
  );
  for (const format of ['influx', 'graphite', 'statsd', 'otlp', 'prometheus'])
    lines.push(`service_intake_samples_total{format="${format}"} ${c.samples.get(format) ?? 0}`);
  family(
    'service_intake_points_total',
    'Metric points the intake handed to the write path (StatsD: at its flushes).',
  );
  lines.push(`service_intake_points_total ${c.points}`);
  family(
    'service_intake_skipped_total',
    'Field values the intake skipped: strings, and NaN or infinite numbers.',
  );
  lines.push(
    `service_intake_skipped_total{reason="string"} ${c.skippedStrings}`,
    `service_intake_skipped_total{reason="non_finite"} ${c.skippedNonFinite}`,
  );
  family(
    'service_intake_listener_dropped_total',
    'On the TCP/UDP listeners: text that did not parse, samples and points that could not be stored.',
  );
  lines.push(`service_intake_listener_dropped_total ${c.dropped}`);
  family(
    'service_intake_key_limit_points_total',
    'Points refused (HTTP: the whole request) or dropped (listeners) because their key would take the source past intake.max_keys_per_source.',
  );
  lines.push(`service_intake_key_limit_points_total ${c.overKeyLimit}`);
  return `${lines.join('\n')}\n`;
}
