// Where buckets start in real time, given segment boundaries on the local wall clock (model/time/calendar.ts)
// and the zone's offsets (model/time/zone-clock.ts). The rules are explained at the top of model/time/granularity.ts.
//
// Sub-day units (s, m, h): a bucket starts at every instant whose wall clock reads a boundary, and
// at every offset change where the clock jumps forward onto or over one (the instant of the jump).
// Day and larger units: a bucket starts where the wall clock first reaches a boundary; a later
// repeat of the same local time (fall back) stays in the bucket already open.
// floor(t) is the latest start at or before t, so buckets are contiguous and never overlap.

import type { Calendar, Granularity } from './granularity';
import { DAY_MS, HOUR_MS, floorWall, isSubDay, nextBoundaryWall } from './calendar';
import { ZoneClock } from './zone-clock';

/** Longest backward jump of a wall clock taken into account (tz data has at most one day). */
const LOOKBACK_MS = 2 * DAY_MS;
/** Larger than any UTC offset, so the wall clock at W - margin is always before W. */
const OFFSET_MARGIN_MS = 16 * HOUR_MS;
/** Offset changes crossed by one computation; real zones need at most two. */
const MAX_STEPS = 8;

export class BucketEngine {
  private readonly clock: ZoneClock;
  private readonly g: Granularity;
  private readonly beginningOfWeek: number;
  private readonly subDay: boolean;

  constructor(g: Granularity, cal: Calendar) {
    if (!Number.isInteger(g.n) || g.n < 1) throw new RangeError(`Invalid granularity: ${g.text}`);
    const bow = cal.beginningOfWeek;
    if (!Number.isInteger(bow) || bow < 1 || bow > 7) {
      throw new RangeError(`beginningOfWeek must be 1..7, got ${bow}`);
    }
    this.g = g;
    this.beginningOfWeek = bow;
    this.subDay = isSubDay(g);
    this.clock = new ZoneClock(cal.timeZone);
  }

  /** Start of the bucket holding instant `t` (NaN for a non-finite `t`). */
  floor(t: number): number {
    if (!Number.isFinite(t)) return NaN;
    return this.subDay ? this.floorSubDay(t) : this.firstReach(this.highestBoundaryPassed(t));
  }

  /** Start of the bucket after the one starting at `start` (which must be a bucket start). */
  next(start: number): number {
    if (!Number.isFinite(start)) return NaN;
    return this.subDay ? this.nextSubDay(start) : this.nextDayOrLarger(start);
  }

  /** Segment boundary at or before a local wall-clock time. */
  private wallFloor(wall: number): number {
    return floorWall(wall, this.g, this.beginningOfWeek);
  }

  /** Segment boundary after a boundary, on the wall clock. */
  private wallNext(boundary: number): number {
    return nextBoundaryWall(boundary, this.g, this.beginningOfWeek);
  }

  private floorSubDay(t: number): number {
    let at = t;
    let reading = t;
    for (let step = 0; step < MAX_STEPS; step++) {
      const offset = this.clock.offsetAt(at);
      const boundary = this.wallFloor(at + offset);
      reading = boundary - offset;
      const change = this.clock.latestChange(reading, at);
      if (Number.isNaN(change)) return reading;
      // The offset changed after the boundary's reading: the change starts the bucket when the
      // clock jumped onto or over the boundary; otherwise the boundary was read before it.
      if (change + this.clock.offsetAt(change - 1) <= boundary) return change;
      at = change - 1;
    }
    return reading;
  }

  private nextSubDay(start: number): number {
    let cursor = start;
    let reading = start + 1;
    for (let step = 0; step < MAX_STEPS; step++) {
      const offset = this.clock.offsetAt(cursor);
      const boundary = this.wallNext(this.wallFloor(cursor + offset));
      reading = boundary - offset;
      const change = this.clock.earliestChange(cursor, reading);
      if (Number.isNaN(change)) return reading;
      const wallAfter = change + this.clock.offsetAt(change);
      const landed = this.wallFloor(wallAfter);
      // A new bucket when the jump lands exactly on a boundary or passes one going forward.
      if (landed === wallAfter || landed > change - 1 + offset) return change;
      cursor = change;
    }
    return reading;
  }

  /** Highest boundary the wall clock has reached by `t` (a fall back may have set it back since). */
  private highestBoundaryPassed(t: number): number {
    let top = t + this.clock.offsetAt(t);
    const since = t - LOOKBACK_MS;
    let change = this.clock.latestChange(since, t);
    for (let step = 0; step < MAX_STEPS && !Number.isNaN(change); step++) {
      top = Math.max(top, change - 1 + this.clock.offsetAt(change - 1));
      change = this.clock.latestChange(since, change - 1);
    }
    return this.wallFloor(top);
  }

  /** First instant at which the wall clock reads `boundary` or jumps past it. */
  private firstReach(boundary: number): number {
    let cursor = boundary - OFFSET_MARGIN_MS;
    let reading = cursor;
    for (let step = 0; step < MAX_STEPS; step++) {
      reading = boundary - this.clock.offsetAt(cursor);
      if (reading <= cursor) return cursor;
      const change = this.clock.earliestChange(cursor, reading);
      if (Number.isNaN(change)) return reading;
      if (change + this.clock.offsetAt(change) >= boundary) return change;
      cursor = change;
    }
    return reading;
  }

  private nextDayOrLarger(start: number): number {
    // At a bucket start the clock has just reached its highest reading so far: no look-back needed.
    let boundary = this.wallFloor(start + this.clock.offsetAt(start));
    for (let step = 0; step < MAX_STEPS; step++) {
      boundary = this.wallNext(boundary);
      const next = this.firstReach(boundary);
      if (next > start) return next;
    }
    return start + DAY_MS; // unreachable with real zone data; keeps ranges moving forward
  }
}
