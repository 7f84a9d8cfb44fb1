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

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${timeZone}|${JSON.stringify(options)}`;
  let f = formatters.get(key);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-GB', { timeZone, ...options });
    } catch {
      f = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', ...options });
    }
    formatters.set(key, f);
  }
  return f;
}

const DAY = 86_400_000;

/** An axis tick at `ms` for ticks `incrMs` apart: "14:00", "5 Jan", "Jan 2026", "2026". */
export function formatTick(ms: number, incrMs: number, timeZone: string): string {
  if (incrMs >= 365 * DAY) return formatter(timeZone, { year: 'numeric' }).format(ms);
  if (incrMs >= 28 * DAY) return formatter(timeZone, { month: 'short', year: 'numeric' }).format(ms);
  if (incrMs >= DAY) return formatter(timeZone, { day: 'numeric', month: 'short' }).format(ms);
  const clock = formatter(timeZone, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', ...(incrMs < 60_000 ? { second: '2-digit' } : {}) }).format(ms);
  // Midnight ticks name the day instead, so a multi-day hourly axis stays readable.
  return clock === '00:00' ? formatter(timeZone, { day: 'numeric', month: 'short' }).format(ms) : clock;
}

/** A bucket's start for read-outs and table headers: "Mon 5 Jan 2026, 14:00". */
export function formatBucket(ms: number, timeZone: string, granularity: string): string {
  const span = granularityMs(granularity) ?? 0;
  if (span >= 28 * DAY) return formatter(timeZone, { month: 'short', year: 'numeric' }).format(ms);
  if (span >= DAY) return formatter(timeZone, { weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }).format(ms);
  return formatter(timeZone, { weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(ms);
}

/** A short bucket label for table column headers: "14:00", "5 Jan", "Jan 2026". */
export function formatBucketShort(ms: number, timeZone: string, granularity: string): string {
  const span = granularityMs(granularity) ?? 0;
  return formatTick(ms, span >= DAY ? span : 60_000, timeZone);
}
