// RFC 3339 timestamps in and out (SPEC section 2). Domain-free and allocation-light.

// Parsed by hand rather than with a regular expression: this runs once per ingested point, and a
// match array of eleven strings plus a Date per call showed up in the batch ingest profile.

const DAY_MS = 86_400_000;
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const [DASH, COLON, DOT, PLUS, MINUS] = [45, 58, 46, 43, 45];
const [UPPER_T, LOWER_T, SPACE, UPPER_Z, LOWER_Z] = [84, 116, 32, 90, 122];

function daysInMonth(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (the days-from-civil algorithm, 400-year eras). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/** The number written by `count` ASCII digits at `at`, or -1 when one of them is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let n = 0;
  for (let i = at; i < at + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** `YYYY-MM-DDTHH:MM:SS` (T, t or space) as epoch ms at UTC, or NaN when malformed or impossible. */
function parseDateTime(text: string): number {
  if (text.charCodeAt(4) !== DASH || text.charCodeAt(7) !== DASH) return NaN;
  const t = text.charCodeAt(10);
  if (t !== UPPER_T && t !== LOWER_T && t !== SPACE) return NaN;
  if (text.charCodeAt(13) !== COLON || text.charCodeAt(16) !== COLON) return NaN;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  const hour = digitsAt(text, 11, 2);
  const minute = digitsAt(text, 14, 2);
  const second = digitsAt(text, 17, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN;
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return NaN;
  return daysFromCivil(year, month, day) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000;
}

/** `Z` or `±HH:MM` filling `text` from `at` to its end, in minutes east of UTC, or NaN. */
function parseOffset(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === UPPER_Z || c === LOWER_Z) return text.length === at + 1 ? 0 : NaN;
  if ((c !== PLUS && c !== MINUS) || text.length !== at + 6 || text.charCodeAt(at + 3) !== COLON) return NaN;
  const hours = digitsAt(text, at + 1, 2);
  const minutes = digitsAt(text, at + 4, 2);
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return NaN;
  return (c === MINUS ? -1 : 1) * (hours * 60 + minutes);
}

/** Milliseconds of a fraction's digits from `first` to `end` (1 to 9 of them, truncated). */
function fractionMillis(text: string, first: number, end: number): number {
  const count = end - first;
  if (count >= 3) return digitsAt(text, first, 3);
  return digitsAt(text, first, count) * (count === 1 ? 100 : 10);
}

/**
 * Parses an RFC 3339 timestamp that carries an offset (`Z` or `±HH:MM`), fractional seconds allowed
 * (1 to 9 digits, truncated to the millisecond). Returns epoch milliseconds, or null for anything
 * else (no offset, impossible dates, numbers).
 */
export function parseTimestamp(input: unknown): number | null {
  if (typeof input !== 'string' || input.length < 20 || input.length > 40) return null;
  const utc = parseDateTime(input);
  if (Number.isNaN(utc)) return null;
  let at = 19;
  let millis = 0;
  if (input.charCodeAt(at) === DOT) {
    const first = ++at;
    while (at < input.length && at - first < 10 && digitsAt(input, at, 1) >= 0) at++;
    if (at === first || at - first > 9) return null;
    millis = fractionMillis(input, first, at);
  }
  const offset = parseOffset(input, at);
  if (Number.isNaN(offset)) return null;
  return utc + millis - offset * 60_000;
}

/** The number written by the two ASCII digits at `at` of `bytes`, or -1. */
function twoDigitsAt(bytes: Uint8Array, at: number): number {
  const high = bytes[at]! - 48;
  const low = bytes[at + 1]! - 48;
  return high >= 0 && high <= 9 && low >= 0 && low <= 9 ? high * 10 + low : -1;
}

// The last day parseTimestampBytes found valid, and its day number (-2: none yet, unlike every
// value twoDigitsAt gives).
let [lastYear, lastMonth, lastDay, lastDays] = [-2, -2, -2, 0];

/**
 * parseTimestamp over the ASCII bytes `bytes[start, end)`, step for step, for the batch scanner
 * (domain/metrics/ingest/batch-scan.ts), which thus makes no string per point. NaN where parseTimestamp gives null.
 */
export function parseTimestampBytes(bytes: Uint8Array, start: number, end: number): number {
  const length = end - start;
  if (length < 20 || length > 40) return NaN;
  if (bytes[start + 4] !== DASH || bytes[start + 7] !== DASH) return NaN;
  const t = bytes[start + 10];
  if (t !== UPPER_T && t !== LOWER_T && t !== SPACE) return NaN;
  if (bytes[start + 13] !== COLON || bytes[start + 16] !== COLON) return NaN;
  const century = twoDigitsAt(bytes, start);
  const yearOfCentury = twoDigitsAt(bytes, start + 2);
  const year = century < 0 || yearOfCentury < 0 ? -1 : century * 100 + yearOfCentury;
  const month = twoDigitsAt(bytes, start + 5);
  const day = twoDigitsAt(bytes, start + 8);
  const hour = twoDigitsAt(bytes, start + 11);
  const minute = twoDigitsAt(bytes, start + 14);
  const second = twoDigitsAt(bytes, start + 17);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return NaN;
  // a batch's points mostly share their day: its divisions are done once
  if (year !== lastYear || month !== lastMonth || day !== lastDay) {
    if (year < 0 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return NaN;
    lastDays = daysFromCivil(year, month, day);
    lastYear = year;
    lastMonth = month;
    lastDay = day;
  }
  let at = start + 19;
  let millis = 0;
  if (bytes[at] === DOT) {
    const first = ++at;
    // up to 9 digits, of which the first 3 count (a 10th makes it invalid)
    for (; at < end; at++) {
      const d = bytes[at]! - 48;
      if (!(d >= 0 && d <= 9)) break;
      if (at - first < 3) millis = millis * 10 + d;
    }
    const count = at - first;
    if (count === 0 || count > 9) return NaN;
    if (count < 3) millis *= count === 1 ? 100 : 10;
  }
  let offset = 0;
  const c = at < end ? bytes[at] : -1;
  if (c === UPPER_Z || c === LOWER_Z) {
    if (end !== at + 1) return NaN;
  } else {
    if ((c !== PLUS && c !== MINUS) || end !== at + 6 || bytes[at + 3] !== COLON) return NaN;
    const hours = twoDigitsAt(bytes, at + 1);
    const minutes = twoDigitsAt(bytes, at + 4);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59) return NaN;
    offset = (c === MINUS ? -1 : 1) * (hours * 60 + minutes);
  }
  return lastDays * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millis - offset * 60_000;
}

const pad2 = (n: number) => (n < 10 ? `0${n}` : String(n));

/** The proleptic Gregorian date of a day number (days since 1970-01-01); inverse of daysFromCivil. */
function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const leapDays =
    Math.floor(dayOfEra / 1460) - Math.floor(dayOfEra / 36_524) + Math.floor(dayOfEra / 146_096);
  const yearOfEra = Math.floor((dayOfEra - leapDays) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const mp = Math.floor((5 * dayOfYear + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  const day = dayOfYear - Math.floor((153 * mp + 2) / 5) + 1;
  return { year: yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/**
 * Formats epoch milliseconds as RFC 3339 to the second at the given offset from UTC (minutes):
 * `Z` when the offset is zero, else `+HH:MM`. Arithmetic rather than a Date: a year of hourly
 * buckets formats 8,760 of these per read.
 */
export function formatTimestamp(ms: number, offsetMinutes = 0): string {
  const seconds = Math.floor(ms / 1000) + offsetMinutes * 60;
  const days = Math.floor(seconds / 86_400);
  return dateOf(days) + timeOfDay(seconds - days * 86_400, offsetMinutes);
}

function dateOf(days: number): string {
  const { year, month, day } = civilFromDays(days);
  return `${String(year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`;
}

/** Time-of-day texts a formatter keeps; a run of 1s buckets can meet 86,400 of them. */
const TIME_TEXTS = 4096;

/**
 * formatTimestamp for runs of instants (a series' bucket starts): consecutive ones mostly share
 * their local day, whose date text is then computed once, and buckets repeat their time of day
 * and offset, whose text (`T13:00:00+01:00`) is kept: a bucket then costs one concatenation.
 */
export function timestampFormatter(): (ms: number, offsetMinutes: number) => string {
  let lastDays = Number.NaN;
  let lastDate = '';
  const times = new Map<number, string>();
  return (ms, offsetMinutes) => {
    const seconds = Math.floor(ms / 1000) + offsetMinutes * 60;
    const days = Math.floor(seconds / 86_400);
    if (days !== lastDays) {
      lastDays = days;
      lastDate = dateOf(days);
    }
    const secondOfDay = seconds - days * 86_400;
    if (!(Math.abs(offsetMinutes) < 2048)) return lastDate + timeOfDay(secondOfDay, offsetMinutes);
    const key = secondOfDay * 4096 + offsetMinutes + 2048; // exact: offsets are whole minutes
    let time = times.get(key);
    if (time === undefined) {
      if (times.size >= TIME_TEXTS) times.clear();
      time = timeOfDay(secondOfDay, offsetMinutes);
      times.set(key, time);
    }
    return lastDate + time;
  };
}

/** `T13:05:00Z` or `T13:05:00+05:45`: the part of a timestamp after its date. */
function timeOfDay(secondOfDay: number, offsetMinutes: number): string {
  const hour = Math.floor(secondOfDay / 3600);
  const time = `T${pad2(hour)}:${pad2(Math.floor(secondOfDay / 60) % 60)}:${pad2(secondOfDay % 60)}`;
  if (offsetMinutes === 0) return `${time}Z`;
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  return `${time}${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
}
