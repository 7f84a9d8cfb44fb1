// How long a bucket or a timeframe of each unit lasts: the one table the server and the interface
// share. Calendar units vary (a month has 28 to 31 days, a quarter 89 to 92, a year 365 or 366),
// so each unit has three lengths and every caller says which one its rule needs:
// - shortest: a bound that must not overshoot (the span of a library's last bucket when no next
//   start is known, so a range never reaches into the following bucket);
// - typical: what a person means by "30 days of 1mo" (the interface's preset windows);
// - longest: a bound that must not undershoot (how far a still-filling bucket may reach, how many
//   buckets a range can hold at most).
// Exact bucket boundaries never come from here: they come from the calendar in src/model/time/.

export type SpanUnit = 's' | 'm' | 'h' | 'd' | 'w' | 'mo' | 'q' | 'y';
export type SpanKind = 'shortest' | 'typical' | 'longest';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const UNIT_SPANS: Readonly<Record<SpanUnit, Readonly<Record<SpanKind, number>>>> = {
  s: { shortest: SECOND, typical: SECOND, longest: SECOND },
  m: { shortest: MINUTE, typical: MINUTE, longest: MINUTE },
  h: { shortest: HOUR, typical: HOUR, longest: HOUR },
  // a day in a zone with DST lasts 23 to 25 hours; callers that need that work in the zone itself
  d: { shortest: DAY, typical: DAY, longest: DAY },
  w: { shortest: 7 * DAY, typical: 7 * DAY, longest: 7 * DAY },
  mo: { shortest: 28 * DAY, typical: 30 * DAY, longest: 31 * DAY },
  q: { shortest: 89 * DAY, typical: 91 * DAY, longest: 92 * DAY },
  y: { shortest: 365 * DAY, typical: 365 * DAY, longest: 366 * DAY },
};

const SPAN_TEXT = /^(\d+)(s|m|h|d|w|mo|q|y)$/;

/** Milliseconds of `90s`, `24h`, `7d`, `1mo` ... of the given kind, or null when unreadable. */
export function spanMs(text: string | null | undefined, kind: SpanKind): number | null {
  const m = SPAN_TEXT.exec(text ?? '');
  return m ? Number(m[1]) * UNIT_SPANS[m[2] as SpanUnit][kind] : null;
}
