// Reads the dashboard key's series once per refresh (and the span just before it, for kpi split),
// so that every widget computes from the same data. Old data stays on screen while a refresh loads.
import { useEffect, useState } from 'preact/hooks';
import type { SeriesData } from '../widgets/types';
import { EMPTY_SERIES, fetchSeries } from '../lib/series';

export interface SeriesState {
  series: SeriesData;
  previous: SeriesData | null;
  /** true until the first answer for this key and range */
  loading: boolean;
  error: string | null;
}

export function useSeries(sourceId: string | null, key: string, from: number, to: number, granularity: string, tick: number): SeriesState {
  const [state, setState] = useState<SeriesState>({ series: EMPTY_SERIES, previous: null, loading: true, error: null });
  const identity = `${sourceId}|${key}|${granularity}`;
  const [loadedFor, setLoadedFor] = useState('');
  useEffect(() => {
    if (!sourceId) return;
    const controller = new AbortController();
    const range = { from, to, granularity };
    const previousRange = { from: from - (to - from), to: from - 1, granularity };
    if (loadedFor !== identity) setState({ series: EMPTY_SERIES, previous: null, loading: true, error: null });
    Promise.all([fetchSeries(sourceId, key, range, controller.signal), fetchSeries(sourceId, key, previousRange, controller.signal).catch(() => null)]).then(
      ([series, previous]) => {
        setState({ series, previous, loading: false, error: null });
        setLoadedFor(identity);
      },
      (err: Error) => {
        if (controller.signal.aborted) return;
        setState({ series: EMPTY_SERIES, previous: null, loading: false, error: err.message });
      },
    );
    return () => controller.abort();
  }, [sourceId, key, from, to, granularity, tick]);
  return state;
}
