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

  lineProtocol(mapped: MappedBody): void {
    this.add('influx', mapped);
  }

  add(format: string, mapped: Pick<MappedBody, 'samples' | 'points' | 'skippedStrings' | 'skippedNonFinite'>): void {
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
