// Reads a series for the interface through GET /api/v1/sources/:id/metrics (the signed-in user's
// organization-scoped read; same parameters and answers as GET /api/v1/metrics).
import type { SeriesData } from '../widgets/types';
import { get, qs } from './api';
import { isoSeconds } from './view';

export const EMPTY_SERIES: SeriesData = { at: [], atText: [], values: [] };

export async function fetchSeries(
  sourceId: string,
  key: string,
  range: { from: number; to: number; granularity: string },
  signal?: AbortSignal,
): Promise<SeriesData> {
  const query = qs({
    key,
    from: isoSeconds(range.from),
    to: isoSeconds(range.to),
    granularity: range.granularity,
  });
  const data = await get<{ at: string[]; values: Record<string, unknown>[] }>(
    `/sources/${sourceId}/metrics${query}`,
    { signal },
  );
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
