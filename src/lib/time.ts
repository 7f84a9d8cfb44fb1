// RFC 3339 timestamps in and out (SPEC section 2). Domain-free and allocation-light.

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/**
 * Parses an RFC 3339 timestamp that carries an offset (`Z` or `±HH:MM`), fractional seconds allowed.
 * Returns epoch milliseconds, or null for anything else (no offset, impossible dates, numbers).
 */
export function parseTimestamp(input: unknown): number | null {
  if (typeof input !== 'string' || input.length > 40) return null;
  const m = RFC3339.exec(input);
  if (!m) return null;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const fraction = m[7] ? Number(`0.${m[7]}`) : 0;
  let offsetMinutes = 0;
  if (!m[8]) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Date.UTC maps years 0..99 to 1900..1999; setUTCFullYear does not.
  const date = new Date(Date.UTC(2000, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year);
  const utc = date.getTime();
  return utc + Math.floor(fraction * 1000) - offsetMinutes * 60_000;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/**
 * Formats epoch milliseconds as RFC 3339 to the second at the given offset from UTC (minutes):
 * `Z` when the offset is zero, else `+HH:MM`.
 */
export function formatTimestamp(ms: number, offsetMinutes = 0): string {
  const d = new Date(Math.floor(ms / 1000) * 1000 + offsetMinutes * 60_000);
  const year = String(d.getUTCFullYear()).padStart(4, '0');
  const date = `${year}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
  const time = `${pad2(d.getUTCHours())}:${pad2(d.getUTCMinutes())}:${pad2(d.getUTCSeconds())}`;
  if (offsetMinutes === 0) return `${date}T${time}Z`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${date}T${time}${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}
