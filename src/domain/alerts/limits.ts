// Bounds of a monitor (SPEC 13): a few rules and channels, small documents, short periods of time
// that read as a count and a unit. A pending period or reminder interval may be 0 (`0m`).
export const MAX_RULES = 20;
export const MAX_CHANNELS = 20;
export const MAX_SERIES_ROWS = 26;
/** JSON of a monitor's document (everything but its columns) */
export const MAX_MONITOR_BYTES = 64 * 1024;
/** monitors one organization may have */
export const MAX_MONITORS = 5_000;
/** instances (matching keys) one monitor on a key pattern evaluates */
export const MAX_INSTANCES = 500;
/** buckets of a monitor's window */
export const MAX_WINDOW_BUCKETS = 10_000;

const DURATION = /^(\d{1,6})(s|m|h|d|w)$/;
const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

export const DURATION_MESSAGE = 'must be a count and a unit such as 0m, 5m, 2h or 1d (units s, m, h, d, w)';

export const isDuration = (text: string): boolean => DURATION.test(text);

/** Milliseconds of `5m`, `2h` ...; null when unreadable. */
export function durationMs(text: string | null | undefined): number | null {
  const m = DURATION.exec(text ?? '');
  return m ? Number(m[1]) * UNIT_MS[m[2]!]! : null;
}
