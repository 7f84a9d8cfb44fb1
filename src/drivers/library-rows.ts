// Rows the Trifle::Stats libraries wrote with the event's own UTC offset. The libraries floor a
// point to local wall-clock midnight (or hour, month, ...) but build that instant with the offset of
// the event, not of the bucket start: in Europe/Bratislava the day of 31 March 2024 starts at
// 23:00Z, yet an event at noon (+02:00) lands in a row at 22:00Z. The service writes zone-correct
// starts; reads also look up those shifted instants and fold them into the zone-correct bucket, so
// nothing a library wrote is invisible. Pure: no I/O, tested in test/unit/library-rows.test.ts.
//
// For a bucket starting at b (offset ob) and ending at e, every UTC offset o that occurs in [b, e)
// gives one library start b + (ob - o). Offsets are found by sampling the zone once a day over the
// whole range and bisecting each change to the minute, so a year of hourly buckets costs a few
// hundred offset look-ups, not one per bucket.
import { spanMs, UNIT_SPANS } from '../shared/spans';

const MINUTE = UNIT_SPANS.m.shortest;
const DAY = UNIT_SPANS.d.shortest;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** UTC offset of `timeZone` at `ms`, in minutes (east positive). */
export function zoneOffsetMinutes(timeZone: string, ms: number): number {
  const parts: Record<string, number> = {};
  for (const p of formatterFor(timeZone).formatToParts(new Date(ms))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return Math.round((wall - Math.floor(ms / 1000) * 1000) / MINUTE);
}

function isFixedZone(timeZone: string): boolean {
  return /^(UTC|Etc\/UTC|Etc\/GMT|GMT|Z)$/i.test(timeZone);
}

/** Offset changes in [from, to): (instant of the change, offset from then on), ascending. */
function transitions(timeZone: string, from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let t = from;
  let o = zoneOffsetMinutes(timeZone, t);
  while (t < to) {
    const next = Math.min(t + DAY, to);
    const on = zoneOffsetMinutes(timeZone, next);
    if (on !== o) {
      let lo = t; // offset o at lo, on at hi
      let hi = next;
      while (hi - lo > MINUTE) {
        const mid = lo + Math.max(MINUTE, Math.floor((hi - lo) / 2 / MINUTE) * MINUTE);
        if (zoneOffsetMinutes(timeZone, mid) === o) lo = mid;
        else hi = mid;
      }
      out.push([hi, on]);
      o = on;
    }
    t = next;
  }
  return out;
}

export interface LibraryRowPlan {
  /** every instant to look up (the starts and their library spellings), ascending, distinct */
  lookups: number[];
  /** the bucket index an instant folds into, or undefined */
  indexOf(instantMs: number): number | undefined;
}

/** Nominal span of the last bucket, when no next start is known (short side for months). */
function granularitySpan(granularity: string): number {
  return spanMs(granularity, 'shortest') ?? DAY;
}

/**
 * The instants to read for `startsMs` (zone-correct bucket starts, ascending) and where each folds.
 * A shifted instant that is itself one of the requested starts stays that bucket's own.
 */
export function libraryRowPlan(
  startsMs: readonly number[],
  granularity: string,
  timeZone: string,
): LibraryRowPlan {
  const index = new Map<number, number>();
  startsMs.forEach((ms, i) => index.set(ms, i));
  if (startsMs.length > 0 && !isFixedZone(timeZone)) addShifted(startsMs, granularity, timeZone, index);
  const lookups = [...index.keys()].sort((a, b) => a - b);
  return { lookups, indexOf: (ms) => index.get(ms) };
}

function addShifted(
  starts: readonly number[],
  granularity: string,
  timeZone: string,
  index: Map<number, number>,
): void {
  const last = starts[starts.length - 1]!;
  const end = last + granularitySpan(granularity);
  const changes = transitions(timeZone, starts[0]!, end);
  if (changes.length === 0) return;
  let c = 0;
  let offset = zoneOffsetMinutes(timeZone, starts[0]!);
  for (let i = 0; i < starts.length; i++) {
    const b = starts[i]!;
    const e = i + 1 < starts.length ? starts[i + 1]! : end;
    while (c < changes.length && changes[c]![0] <= b) offset = changes[c++]![1];
    const own = offset;
    for (let k = c; k < changes.length && changes[k]![0] < e; k++) {
      const shifted = b + (own - changes[k]![1]) * MINUTE;
      if (!index.has(shifted)) index.set(shifted, i);
    }
  }
}

/** Adds each leaf of `leaves` into `into` (rows folded into one bucket add up). */
export function addLeaves(into: Map<string, number>, leaves: Map<string, number>): void {
  for (const [path, value] of leaves) into.set(path, (into.get(path) ?? 0) + value);
}
