// What merging needs of a source: its id and a bucketer per allowed granularity, built once per
// source and settings.
import { nominalMaxMs } from './time/calendar';
import type { BucketSettings } from './wire';
import { BucketEngine } from './time/bucket-engine';
import { createBucketer, parseGranularity, type Calendar } from './time/granularity';

export interface GranularityPlan {
  text: string;
  bucketer: (atMs: number) => number;
  /** start of the bucket after the one starting at `startMs` */
  next: (startMs: number) => number;
}

/** What merging needs of a source: its id and a bucketer per allowed granularity. */
export interface SourcePlan {
  sourceId: string;
  granularities: GranularityPlan[];
  /** index of the granularity with the shortest buckets */
  finest: number;
}

/** A source's bucketing settings (model/wire.ts BucketSettings). */
export type PlanInput = BucketSettings & Calendar;

export function planFor(source: PlanInput): SourcePlan {
  const granularities: GranularityPlan[] = [];
  let finest = 0;
  let shortest = Infinity;
  for (const text of new Set(source.granularities)) {
    const g = parseGranularity(text);
    if (!g) continue;
    if (nominalMaxMs(g) < shortest) {
      shortest = nominalMaxMs(g);
      finest = granularities.length;
    }
    const engine = new BucketEngine(g, source);
    granularities.push({
      text,
      bucketer: createBucketer(g, source),
      next: (startMs) => engine.next(startMs),
    });
  }
  return { sourceId: source.id, granularities, finest };
}

/**
 * Plans cached per source and settings; a full cache is simply emptied (plans are cheap to rebuild).
 * A frozen source (the auth cache hands those out) cannot change, so its plan is also found by
 * identity, without building the settings key on every request.
 */
export class PlanCache {
  private readonly plans = new Map<string, SourcePlan>();
  private readonly frozen = new WeakMap<PlanInput, SourcePlan>();
  constructor(private readonly limit = 1000) {}

  get(source: PlanInput): SourcePlan {
    const known = this.frozen.get(source);
    if (known) return known;
    const plan = this.bySettings(source);
    if (Object.isFrozen(source) && Object.isFrozen(source.granularities)) this.frozen.set(source, plan);
    return plan;
  }

  private bySettings(source: PlanInput): SourcePlan {
    const id = `${source.id}|${source.timeZone}|${source.beginningOfWeek}|${source.granularities.join(',')}`;
    let plan = this.plans.get(id);
    if (!plan) {
      if (this.plans.size >= this.limit) this.plans.clear();
      plan = planFor(source);
      this.plans.set(id, plan);
    }
    return plan;
  }
}
