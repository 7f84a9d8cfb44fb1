// Reads the dashboard key's series once per refresh (and the span just before it, for kpi split),
// so that every widget computes from the same data. Old data stays on screen while a refresh loads,
// and when a refresh fails: the page then says what failed (`failure`) instead of blanking widgets.
import { useEffect, useState } from 'preact/hooks';
import type { SeriesData } from '../widgets/types';
import { EMPTY_SERIES } from '../lib/series';

/** Reads one range of the dashboard's series (through the user's session, or a share link). */
export type SeriesReader = (
  range: { from: number; to: number; granularity: string },
  signal: AbortSignal,
) => Promise<SeriesData>;

export interface SeriesState {
  series: SeriesData;
  previous: SeriesData | null;
  /** true until the first answer for this key and range */
  loading: boolean;
  /** the read failed and there is no earlier data for this key to show */
  error: string | null;
  /** the last refresh failed while earlier data stays shown: what failed and when */
  failure: { message: string; at: number } | null;
  /** when the data shown was read (ms), or null before the first answer */
  readAt: number | null;
}

/** `identity` names what is read (source and key): a new one shows the loading state again. */
export function useSeries(
  read: SeriesReader,
  identity: string,
  from: number,
  to: number,
  granularity: string,
  tick: number,
  /** read the span just before the range too (a split kpi compares with it) */
  withPrevious = true,
): SeriesState {
  const [state, setState] = useState<SeriesState>({
    series: EMPTY_SERIES,
    previous: null,
    loading: true,
    error: null,
    failure: null,
    readAt: null,
  });
  const [loadedFor, setLoadedFor] = useState('');
  useEffect(() => {
    const controller = new AbortController();
    const range = { from, to, granularity };
    const previousRange = { from: from - (to - from), to: from - 1, granularity };
    const current = `${identity}|${granularity}`;
    const fresh = loadedFor !== current;
    if (fresh)
      setState({
        series: EMPTY_SERIES,
        previous: null,
        loading: true,
        error: null,
        failure: null,
        readAt: null,
      });
    Promise.all([
      read(range, controller.signal),
      withPrevious ? read(previousRange, controller.signal).catch(() => null) : Promise.resolve(null),
    ]).then(
      ([series, previous]) => {
        setState({ series, previous, loading: false, error: null, failure: null, readAt: Date.now() });
        setLoadedFor(current);
      },
      (err: Error) => {
        if (controller.signal.aborted) return;
        const failure = { message: err.message, at: Date.now() };
        // Data of this key already on screen stays there; only a first read shows the error in the widgets.
        if (!fresh) setState((kept) => ({ ...kept, loading: false, error: null, failure }));
        else
          setState({
            series: EMPTY_SERIES,
            previous: null,
            loading: false,
            error: err.message,
            failure,
            readAt: null,
          });
      },
    );
    return () => controller.abort();
  }, [identity, from, to, granularity, tick, withPrevious]);
  return state;
}
