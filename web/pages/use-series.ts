// Reads the dashboard key's series once per refresh (and the span just before it, for kpi split),
// so that every widget computes from the same data. Old data stays on screen while a refresh loads.
import { useEffect, useState } from 'preact/hooks';
import type { SeriesData } from '../widgets/types';
import { EMPTY_SERIES } from '../lib/series';

/** Reads one range of the dashboard's series (through the user's session, or a share link). */
export type SeriesReader = (range: { from: number; to: number; granularity: string }, signal: AbortSignal) => Promise<SeriesData>;

export interface SeriesState {
  series: SeriesData;
  previous: SeriesData | null;
  /** true until the first answer for this key and range */
  loading: boolean;
  error: string | null;
}

/** `identity` names what is read (source and key): a new one shows the loading state again. */
export function useSeries(read: SeriesReader, identity: string, from: number, to: number, granularity: string, tick: number): SeriesState {
  const [state, setState] = useState<SeriesState>({ series: EMPTY_SERIES, previous: null, loading: true, error: null });
  const [loadedFor, setLoadedFor] = useState('');
  useEffect(() => {
    const controller = new AbortController();
    const range = { from, to, granularity };
    const previousRange = { from: from - (to - from), to: from - 1, granularity };
    const current = `${identity}|${granularity}`;
    if (loadedFor !== current) setState({ series: EMPTY_SERIES, previous: null, loading: true, error: null });
    Promise.all([read(range, controller.signal), read(previousRange, controller.signal).catch(() => null)]).then(
      ([series, previous]) => {
        setState({ series, previous, loading: false, error: null });
        setLoadedFor(current);
      },
      (err: Error) => {
        if (controller.signal.aborted) return;
        setState({ series: EMPTY_SERIES, previous: null, loading: false, error: err.message });
      },
    );
    return () => controller.abort();
  }, [identity, from, to, granularity, tick]);
  return state;
}
