// Reads a series for the interface through GET /api/v1/sources/:id/metrics (the signed-in user's
// organization-scoped read; same parameters and answers as GET /api/v1/metrics).
import type { SeriesData } from '../widgets/types';
import { get, qs } from './api';
import { takeSeriesPrefetch } from './prefetch';
import { isoSeconds } from './view';

export const EMPTY_SERIES: SeriesData = { at: [], atText: [], values: [] };

/** The interface's series read of a source's key over a range (GET /sources/:id/metrics). */
export function seriesPath(
  sourceId: string,
  key: string,
  range: { from: number; to: number; granularity: string },
): string {
  const query = qs({
    key,
    from: isoSeconds(range.from),
    to: isoSeconds(range.to),
    granularity: range.granularity,
  });
  return `/sources/${sourceId}/metrics${query}`;
}

export async function fetchSeries(
  sourceId: string,
  key: string,
  range: { from: number; to: number; granularity: string },
  signal?: AbortSignal,
): Promise<SeriesData> {
  const path = seriesPath(sourceId, key, range);
  type Answer = { at: string[]; values: Record<string, unknown>[] };
  // The read web/lib/prefetch.ts started at navigation, when it is this very read.
  const prefetched = takeSeriesPrefetch(path) as Promise<Answer> | null;
  const data = (prefetched && (await prefetched.catch(() => null))) ?? (await get<Answer>(path, { signal }));
  return { at: data.at.map((text) => Date.parse(text)), atText: data.at, values: data.values };
}

/** One leaf of a bucket by dot path, or null. */
export function leaf(values: Record<string, unknown>, path: string): number | null {
  let node: unknown = values;
  for (const part of path.split('.')) {
    if (!node || typeof node !== 'object') return null;
    node = (node as Record<string, unknown>)[part];
  }
  return typeof node === 'number' ? node : null;
}

/** The series a share link reads: its dashboard's key with these segment values (GET /shared/:token/metrics). */
export async function fetchShared(
  token: string,
  segments: Record<string, string>,
  range: { from: number; to: number; granularity: string },
  signal?: AbortSignal,
): Promise<SeriesData> {
  const params: Record<string, string> = {
    from: isoSeconds(range.from),
    to: isoSeconds(range.to),
    granularity: range.granularity,
  };
  for (const [name, value] of Object.entries(segments)) params[`s.${name}`] = value;
  const data = await get<{ at: string[]; values: Record<string, unknown>[] }>(
    `/shared/${token}/metrics${qs(params)}`,
    { signal },
  );
  return { at: data.at.map((text) => Date.parse(text)), atText: data.at, values: data.values };
}
