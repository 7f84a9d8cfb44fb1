// Timeframe and granularity text of dashboards: `<count><unit>` such as `24h`, `7d`, `1mo`
// (SPEC 5.1: units s, m, h, d, w, mo, q, y; count >= 1). Both defaults use the same syntax as a
// source's settings, as in Trifle, where timeframes and granularities share one parser.
import { isSpanText } from '../source-settings';

/** True when `text` is a period such as `1h` or `30d`. */
export const isPeriod = (text: string): boolean => isSpanText(text);

export const PERIOD_MESSAGE =
  'must be a count and a unit such as 24h, 7d or 1mo (units s, m, h, d, w, mo, q, y)';
