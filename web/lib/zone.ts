// Wall-clock times in an IANA zone (the source's), for the custom range inputs and the labels:
// what a user types and reads is the source's local time, whatever the browser's zone is. Pure.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The zone's wall clock at an instant, as `YYYY-MM-DDTHH:mm` (a datetime-local value). */
export function toZoneInput(ms: number, timeZone: string): string {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}`;
}

/** `YYYY-MM-DD HH:mm` in the zone, for labels. */
export const formatInZone = (ms: number, timeZone: string): string =>
  toZoneInput(ms, timeZone).replace('T', ' ');

/** The zone's offset from UTC at an instant, in ms. */
function offsetAt(ms: number, timeZone: string): number {
  const parts = Object.fromEntries(
    formatter(timeZone)
      .formatToParts(ms)
      .map((p) => [p.type, Number(p.value)]),
  );
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of a wall-clock `YYYY-MM-DDTHH:mm` in the zone, or null when malformed. A time that
 * does not exist (skipped by a DST change) moves forward by the gap; a repeated one is its first.
 */
export function fromZoneInput(text: string, timeZone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(text);
  if (!m) return null;
  const wall = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]));
  if (!Number.isFinite(wall)) return null;
  // The zone's offsets a day either side bracket any change; a candidate is right when it shows `text`.
  const before = wall - offsetAt(wall - 86_400_000, timeZone);
  const after = wall - offsetAt(wall + 86_400_000, timeZone);
  const valid = [before, after].filter((ms) => toZoneInput(ms, timeZone) === text).sort((a, b) => a - b);
  return valid[0] ?? before;
}
