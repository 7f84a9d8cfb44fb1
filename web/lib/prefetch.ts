// Reads a page is certain to need, started when the script runs rather than after sign-in is checked
// and the page has rendered: on /d/:id the dashboard and the sources, so that the first metrics read
// leaves one round trip after navigation instead of three (SPEC 10); and, once those two answer, the
// series of a dashboard without segments, for the range the page will compute (from the same `now`,
// handed to the page), so it is on its way while the page renders. A prefetched read is taken once;
// a failed one (signed out, gone) is dropped and the page reads again in its own way.
// A signed-in browser's /d/<id> page already carries the dashboard and its source (the server's
// src/http/web/page-data.ts, in a JSON data block web/boot.ts hands in): then the series read
// leaves at once, while the HTML is still being parsed, and only it.
import { get } from './api';
import { loadSources } from './sources';
import type { Dashboard, Source } from './types';
import { fitGranularity, parseView, resolveRange, spanMs } from './view';
import { seriesPath } from './series';

/** The element of a page's data block (src/http/web/serve.ts writes it). */
export const PAGE_DATA_ID = 'svc-page-data';

/** What a page's data block holds: on /d/<id>, the dashboard (as GET /dashboards/<id>) and its source. */
export interface PageData {
  dashboard?: { id: string; data: Dashboard; source: Source };
}

interface DashboardPrefetch {
  id: string;
  data: Promise<[Dashboard, Source[]]>;
}

/**
 * The state lives on the global object: web/boot.ts, a small classic script that runs before the
 * interface's module even downloads, starts the reads, and the interface's bundle takes them.
 */
interface PrefetchState {
  pending: DashboardPrefetch | null;
  series: { path: string; read: Promise<unknown> } | null;
  pageNow: { id: string; now: number } | null;
  started: boolean;
}
const state: PrefetchState = ((globalThis as unknown as { __svcPrefetch?: PrefetchState }).__svcPrefetch ??= {
  pending: null,
  series: null,
  pageNow: null,
  started: false,
});

/** Whether web/boot.ts (or an earlier call) already started this page's prefetch. */
export const prefetchStarted = (): boolean => state.started;

export function prefetchForLocation(path: string, search: string, page: PageData | null = null): void {
  state.started = true;
  const m = /^\/d\/([^/]+)$/.exec(path);
  if (!m) return;
  let id: string;
  try {
    id = decodeURIComponent(m[1]!); // as web/app.tsx hands it to the page
  } catch {
    return; // a malformed address: the page says so itself
  }
  const now = Date.now();
  const embedded = page?.dashboard?.id === id ? page.dashboard : null;
  if (embedded) {
    state.pending = { id, data: Promise.resolve([embedded.data, [embedded.source]]) };
    prefetchSeries(id, search, now, embedded.data, [embedded.source]);
    return;
  }
  const data = Promise.all([
    get<Dashboard>(`/dashboards/${id}`, { silent: true }),
    loadSources(undefined, true),
  ]);
  data.catch(() => undefined); // an unused failure is not an unhandled rejection
  state.pending = { id, data };
  data.then(
    ([dashboard, sources]) => prefetchSeries(id, search, now, dashboard, sources),
    () => undefined,
  );
}

/** Starts the series read of a dashboard without segments, for the range its page computes from `now`. */
function prefetchSeries(
  id: string,
  search: string,
  now: number,
  dashboard: Dashboard,
  sources: Source[],
): void {
  const source = sources.find((s) => s.id === dashboard.source_id);
  if (!source || dashboard.segments.length > 0 || state.pending?.id !== id) return;
  const view = parseView(new URLSearchParams(search));
  const fallback = spanMs(dashboard.default_timeframe) ? dashboard.default_timeframe : '24h';
  const shown = view.preset || view.from !== null ? view : { ...view, preset: fallback };
  const range = resolveRange(shown, now, fallback);
  const granularity = fitGranularity(
    source.granularities,
    view.granularity ?? dashboard.default_granularity,
    range.to - range.from,
  );
  const path = seriesPath(source.id, dashboard.key, { ...range, granularity });
  const read = get<unknown>(path, { silent: true });
  read.catch(() => undefined);
  state.series = { path, read };
  state.pageNow = { id, now };
}

/** The `now` the prefetched series was computed from, once, for the page of dashboard `id`. */
export function takePrefetchNow(id: string): number | null {
  if (!state.pageNow || state.pageNow.id !== id) return null;
  const { now } = state.pageNow;
  state.pageNow = null;
  return now;
}

/** The prefetched answer of exactly this series read, once; null when none is on its way. */
export function takeSeriesPrefetch(path: string): Promise<unknown> | null {
  if (!state.series || state.series.path !== path) return null;
  const { read } = state.series;
  state.series = null;
  return read;
}

/** The prefetched dashboard and sources for `id`, once; null when none was started for it. */
export function takeDashboardPrefetch(id: string): Promise<[Dashboard, Source[]]> | null {
  if (!state.pending || state.pending.id !== id) return null;
  const { data } = state.pending;
  state.pending = null;
  return data;
}
