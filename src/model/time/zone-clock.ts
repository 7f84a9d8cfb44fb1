// UTC offsets of one IANA zone, from luxon, cached per UTC day.
//
// luxon answers "offset at instant t" (through Intl, several microseconds per call) but not "when
// does the offset change". The clock probes the offset at the start of every UTC day it is asked
// about; when two consecutive day starts disagree, a binary search on whole seconds finds the
// instant of the change (tz database changes happen on whole seconds). Assumption, true for the
// tz database: a zone changes its offset at most once within one UTC day.
//
// Offsets are rounded to whole minutes (RFC 3339 offsets have no seconds); this only touches
// local mean time before standard time was adopted (e.g. +00:57:44 becomes +00:58).

import { IANAZone, Info, type Zone } from 'luxon';
import { DAY_MS, MINUTE_MS, SECOND_MS } from './calendar';

const MAX_CACHED_DAYS = 8_192;

/** Whether luxon knows `name` as an IANA zone; luxon's other spellings ('local', 'UTC+1') are not. */
export function isIanaZone(name: string): boolean {
  return IANAZone.isValidZone(name); // not cached by luxon: unknown names leave nothing behind
}

/**
 * Resolves an already validated IANA zone name through luxon's zone cache (cheap after the first
 * call), or null when it is not one. UTC comes back as luxon's fixed zone, so the clock skips look-ups.
 */
export function resolveZone(timeZone: string): Zone | null {
  const zone = IANAZone.create(timeZone);
  if (!zone.isValid) return null;
  const normalized = Info.normalizeZone(timeZone);
  return normalized.isUniversal ? normalized : zone;
}

/** Offset in whole minutes at `ms`; 0 outside the range the zone data covers. */
export function offsetMinutes(zone: Zone, ms: number): number {
  const minutes = zone.offset(ms);
  return Number.isFinite(minutes) ? Math.round(minutes) || 0 : 0;
}

export class ZoneClock {
  private readonly zone: Zone;
  /** Offset in ms for zones that never change (UTC); null otherwise. */
  private readonly fixed: number | null;
  /** Offset (ms) at the start of UTC day k. */
  private readonly dayStartOffsets = new Map<number, number>();
  /** Instant of the offset change inside UTC day k (k*DAY exclusive .. (k+1)*DAY inclusive), NaN if none. */
  private readonly changes = new Map<number, number>();

  constructor(timeZone: string) {
    const zone = resolveZone(timeZone);
    if (!zone) throw new RangeError(`Unknown time zone: ${timeZone}`);
    this.zone = zone;
    this.fixed = zone.isUniversal ? this.probe(0) : null;
  }

  /** UTC offset (ms) in effect at instant `t`. */
  offsetAt(t: number): number {
    if (this.fixed !== null) return this.fixed;
    const day = Math.floor(t / DAY_MS);
    // NaN (no change that day) compares false: the day's own offset.
    return this.changeIn(day) <= t ? this.dayStartOffset(day + 1) : this.dayStartOffset(day);
  }

  /** Earliest offset change in (lo, hi], or NaN. */
  earliestChange(lo: number, hi: number): number {
    if (this.fixed !== null || !(hi > lo)) return NaN;
    const last = Math.floor(hi / DAY_MS);
    for (let day = Math.floor(lo / DAY_MS); day <= last; day++) {
      const change = this.changeIn(day);
      if (change > lo && change <= hi) return change;
    }
    return NaN;
  }

  /** Latest offset change in (lo, hi], or NaN. */
  latestChange(lo: number, hi: number): number {
    if (this.fixed !== null || !(hi > lo)) return NaN;
    const first = Math.floor(lo / DAY_MS);
    for (let day = Math.floor(hi / DAY_MS); day >= first; day--) {
      const change = this.changeIn(day);
      if (change > lo && change <= hi) return change;
    }
    return NaN;
  }

  private probe(ms: number): number {
    return offsetMinutes(this.zone, ms) * MINUTE_MS;
  }

  private dayStartOffset(day: number): number {
    let offset = this.dayStartOffsets.get(day);
    if (offset === undefined) {
      if (this.dayStartOffsets.size >= MAX_CACHED_DAYS) this.forget();
      offset = this.probe(day * DAY_MS);
      this.dayStartOffsets.set(day, offset);
    }
    return offset;
  }

  /** Instant of the offset change within day `day` (NaN when none); compares false with any number. */
  private changeIn(day: number): number {
    let change = this.changes.get(day);
    if (change === undefined) {
      change = this.findChange(day);
      if (this.changes.size >= MAX_CACHED_DAYS) this.forget();
      this.changes.set(day, change);
    }
    return change;
  }

  private findChange(day: number): number {
    const before = this.dayStartOffset(day);
    if (this.dayStartOffset(day + 1) === before) return NaN;
    let lo = day * DAY_MS; // offset here is `before`
    let hi = lo + DAY_MS; // offset here differs
    while (hi - lo > SECOND_MS) {
      const mid = lo + Math.floor((hi - lo) / (2 * SECOND_MS)) * SECOND_MS;
      if (this.probe(mid) === before) lo = mid;
      else hi = mid;
    }
    return hi;
  }

  private forget(): void {
    this.dayStartOffsets.clear();
    this.changes.clear();
  }
}
