// JSON shapes of the metrics endpoints (SPEC 5.2, 5.3).
import type { SeriesText } from '../../domain/metrics/series';

/**
 * `{"data":{"at":[...],"values":[...]}}` as text: each bucket's values are already the JSON text the
 * store holds, spliced in without parsing them again (a year of hourly buckets stays cheap).
 */
export function presentSeriesJson(series: SeriesText): string {
  return `{"data":{"at":${JSON.stringify(series.at)},"values":[${series.values.join(',')}]}}`;
}

export function presentCreated(created: 'ok' | number) {
  return { data: { created } };
}
