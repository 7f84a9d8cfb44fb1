// Timeframe and granularity text of dashboards: `<count><unit>` such as `24h`, `7d`, `1mo`
// (SPEC 5.1: `^(\d+)(s|m|h|d|w|mo|q|y)$`, count >= 1). Both defaults use the same syntax, as in
// Trifle, where the timeframe shorthand goes through the same parser as granularities.

const PERIOD = /^(\d{1,9})(s|m|h|d|w|mo|q|y)$/;

/** True when `text` is a period such as `1h` or `30d`. */
export function isPeriod(text: string): boolean {
  const m = PERIOD.exec(text);
  return m !== null && Number(m[1]) >= 1;
}

export const PERIOD_MESSAGE = 'must be a count and a unit such as 24h, 7d or 1mo (units s, m, h, d, w, mo, q, y)';
