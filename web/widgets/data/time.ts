// Time helpers for charts: a granularity's rough length, the still-filling bucket, and tick and
// read-out labels in the source's IANA zone (Intl does the zone arithmetic; formatters are cached).
import { spanMs } from '../../../src/shared/spans';

/** The longest a bucket of `granularity` can last, in ms (months as 31 days); null if unreadable. */
export function granularityMs(granularity: string): number | null {
  return spanMs(granularity, 'longest');
}

/** Index of the bucket holding `now` (still filling), or -1 when the range ended before it. */
export function currentBucketIndex(at: readonly number[], now: number, granularity: string): number {
  for (let i = at.length - 1; i >= 0; i--) {
    if (at[i]! > now) continue;
    if (i < at.length - 1) return i;
    const span = granularityMs(granularity);
    return span !== null && now < at[i]! + span ? i : -1;
  }
  return -1;
}

// Formatters by option set (the constants below, so the look-up is by identity) and zone: a table or
// an axis formats thousands of times per draw.
const formatters = new WeakMap<Intl.DateTimeFormatOptions, Map<string, Intl.DateTimeFormat>>();

function formatter(timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  let byZone = formatters.get(options);
  if (!byZone) formatters.set(options, (byZone = new Map()));
  let f = byZone.get(timeZone);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-GB', { timeZone, ...options });
    } catch {
      f = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', ...options });
    }
    byZone.set(timeZone, f);
  }
  return f;
}

const YEAR: Intl.DateTimeFormatOptions = { year: 'numeric' };
const MONTH_YEAR: Intl.DateTimeFormatOptions = { month: 'short', year: 'numeric' };
const DAY_MONTH: Intl.DateTimeFormatOptions = { day: 'numeric', month: 'short' };
const CLOCK: Intl.DateTimeFormatOptions = { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' };
const CLOCK_SECONDS: Intl.DateTimeFormatOptions = { ...CLOCK, second: '2-digit' };
const WEEKDAY_DATE: Intl.DateTimeFormatOptions = { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' };
const WEEKDAY_TIME: Intl.DateTimeFormatOptions = {
  weekday: 'short',
  day: 'numeric',
  month: 'short',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
};

const DAY = 86_400_000;

/** An axis tick at `ms` for ticks `incrMs` apart: "14:00", "5 Jan", "Jan 2026", "2026". */
export function formatTick(ms: number, incrMs: number, timeZone: string): string {
  if (incrMs >= 365 * DAY) return formatter(timeZone, YEAR).format(ms);
  if (incrMs >= 28 * DAY) return formatter(timeZone, MONTH_YEAR).format(ms);
  if (incrMs >= DAY) return formatter(timeZone, DAY_MONTH).format(ms);
  const clock = formatter(timeZone, incrMs < 60_000 ? CLOCK_SECONDS : CLOCK).format(ms);
  // Midnight ticks name the day instead, so a multi-day hourly axis stays readable.
  return clock === '00:00' ? formatter(timeZone, DAY_MONTH).format(ms) : clock;
}

/** A bucket's start for read-outs and table headers: "Mon 5 Jan 2026, 14:00". */
export function formatBucket(ms: number, timeZone: string, granularity: string): string {
  const span = granularityMs(granularity) ?? 0;
  if (span >= 28 * DAY) return formatter(timeZone, MONTH_YEAR).format(ms);
  if (span >= DAY) return formatter(timeZone, WEEKDAY_DATE).format(ms);
  return formatter(timeZone, WEEKDAY_TIME).format(ms);
}

/** A short bucket label for table column headers: "14:00", "5 Jan", "Jan 2026". */
export function formatBucketShort(ms: number, timeZone: string, granularity: string): string {
  const span = granularityMs(granularity) ?? 0;
  return formatTick(ms, span >= DAY ? span : 60_000, timeZone);
}
