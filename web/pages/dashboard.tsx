// One dashboard at /d/:id: the view state (range, granularity, refresh, segments) in the URL, the
// key's series read once per refresh for every widget, kiosk mode (?kiosk) and, for unlocked
// dashboards, editing (widget forms and the JSON editor).
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { get } from '../lib/api';
import { useInterval, useLoad, useTitle } from '../lib/hooks';
import { Link, navigate, useLocation, withQuery } from '../lib/router';
import { substituteKey } from '../lib/segments';
import { loadSources } from '../lib/sources';
import { useTheme } from '../lib/theme';
import type { Dashboard, Source } from '../lib/types';
import {
  fitGranularity,
  parseView,
  REFRESH_MS,
  resolveRange,
  shiftView,
  spanMs,
  viewParams,
  type ViewState,
} from '../lib/view';
import type { WidgetContext } from '../widgets/types';
import { ErrorNotice, Skeleton } from '../components';
import { DashboardGrid } from './dashboard-grid';
import { SegmentInputs, segmentValue, TimeControls } from './dashboard-toolbar';
import { DashboardEditor } from './dashboard-editor';
import { useSeries, type SeriesReader } from './use-series';
import { SharePanel } from './dashboard-share';
import { useRole } from './members';
import { fetchSeries, fetchShared } from '../lib/series';
import { readDraft } from '../lib/drafts';
import { dashboardMonitors, loadMonitors, type Monitor } from '../lib/monitors';
import { takeDashboardPrefetch, takePrefetchNow } from '../lib/prefetch';

export function DashboardPage({ id }: { id: string }) {
  const loaded = useLoad(
    async (signal) => {
      const prefetched = takeDashboardPrefetch(id);
      const [dashboard, sources] = await ((prefetched && (await prefetched.catch(() => null))) ??
        Promise.all([get<Dashboard>(`/dashboards/${id}`, { signal }), loadSources(signal)]));
      return { dashboard, source: sources.find((s) => s.id === dashboard.source_id) ?? null };
    },
    [id],
  );
  // The monitors, read once per dashboard load beside it (never in its way): marks on the widgets.
  const monitors = useLoad((signal) => loadMonitors(signal).catch(() => [] as Monitor[]), [id]);
  useTitle(loaded.data?.dashboard.name ?? 'Dashboard');
  if (loaded.error) {
    return (
      <main>
        <ErrorNotice message={loaded.error} />
        <p>
          <Link href="/">Back to the dashboards</Link>
        </p>
      </main>
    );
  }
  if (!loaded.data) {
    return (
      <main>
        <Skeleton lines={2} />
      </main>
    );
  }
  const { dashboard, source } = loaded.data;
  if (!source)
    return (
      <main>
        <ErrorNotice message="This dashboard's source no longer exists." />
      </main>
    );
  return (
    <DashboardView
      dashboard={dashboard}
      source={source}
      monitors={monitors.data ?? undefined}
      onSaved={(d) => loaded.setData({ dashboard: d, source })}
    />
  );
}

export interface DashboardViewProps {
  dashboard: Dashboard;
  source: Source;
  onSaved?: (d: Dashboard) => void;
  /** a share link's token: read through the link, read-only, no sign-in */
  shareToken?: string;
  /** the organization's monitors: those on this key mark the widgets showing their path */
  monitors?: Monitor[];
}

export function DashboardView({ dashboard, source, onSaved, shareToken, monitors }: DashboardViewProps) {
  const loc = useLocation();
  const kiosk = loc.query.has('kiosk');
  const view = parseView(loc.query);
  const [tick, setTick] = useState(0);
  // Unsaved edits kept by this tab (a reload, a sign-in in between) reopen the editor with them.
  const [editing, setEditing] = useState(() => Boolean(onSaved && !shareToken && readDraft(dashboard.id)));
  const [sharing, setSharing] = useState(false);
  const editor = useRole('editor');
  const [, theme] = useTheme();
  // Leaving the editor (Save, Cancel) puts focus back on the Edit button, as the view is drawn (a
  // layout effect) and only when the focus went away with the editor: a frame later it would take
  // the focus from a control chosen meanwhile.
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(editing);
  useLayoutEffect(() => {
    const active = document.activeElement;
    if (wasEditing.current && !editing && (!active || active === document.body)) editButton.current?.focus();
    wasEditing.current = editing;
  }, [editing]);
  const search = loc.query.toString();
  // A preset range ends at the moment of the navigation or the refresh, not at every render.
  // The first render takes the `now` the navigation's prefetch read the series for (web/lib/prefetch.ts).
  const now = useMemo(() => takePrefetchNow(dashboard.id) ?? Date.now(), [search, tick]);
  useInterval(() => setTick((n) => n + 1), REFRESH_MS[view.refresh] ?? null);

  const fallback = spanMs(dashboard.default_timeframe) ? dashboard.default_timeframe : '24h';
  const shown: ViewState = view.preset || view.from !== null ? view : { ...view, preset: fallback };
  const range = resolveRange(shown, now, fallback);
  const granularity = fitGranularity(
    source.granularities,
    view.granularity ?? dashboard.default_granularity,
    range.to - range.from,
  );
  const segmentNames = dashboard.segments.map((s) => s.name);
  const values = Object.fromEntries(dashboard.segments.map((s) => [s.name, segmentValue(s, view.segments)]));
  const key = substituteKey(dashboard.key, segmentNames, values);
  const read: SeriesReader = shareToken
    ? (r, signal) => fetchShared(shareToken, values, r, signal)
    : (r, signal) => fetchSeries(source.id, key, r, signal);
  // The span before the range is read only for a split kpi (the one widget that compares with it),
  // and while editing, where one may be added.
  const needsPrevious =
    editing || (dashboard.payload.grid ?? []).some((w) => w.type === 'kpi' && w.subtype === 'split');
  const data = useSeries(read, `${source.id}|${key}`, range.from, range.to, granularity, tick, needsPrevious);
  const base = shareToken ? `/s/${shareToken}` : `/d/${dashboard.id}`;
  const marks = useMemo(
    () => dashboardMonitors(monitors ?? [], source.id, key, dashboard.key),
    [monitors, source.id, key, dashboard.key],
  );

  const setView = (next: ViewState) =>
    navigate(withQuery(base, { ...viewParams(next), kiosk: kiosk ? '' : null }));
  const ctx: WidgetContext = useMemo(
    () => ({
      series: data.series,
      previous: data.previous,
      range: { from: range.from, to: range.to, granularity },
      timeZone: source.time_zone,
      now,
      theme,
      onZoom: (from: number, to: number) =>
        setView({ ...view, preset: null, from: Math.round(from), to: Math.round(to) }),
      cursorSyncKey: `dashboard-${dashboard.id}`,
      monitors: marks,
    }),
    [data, range.from, range.to, granularity, theme, search, marks],
  );

  if (editing && onSaved) {
    return (
      <DashboardEditor
        dashboard={dashboard}
        source={source}
        metricKey={key}
        ctx={ctx}
        onClose={() => setEditing(false)}
        onSaved={(d, keepEditing) => {
          onSaved(d);
          if (!keepEditing) setEditing(false);
        }}
      />
    );
  }
  return (
    <main data-dashboard-id={dashboard.id}>
      {!kiosk && (
        <>
          <div class="page-head">
            <h1>{dashboard.name}</h1>
            <code class="muted" data-testid="dashboard-key">
              {key}
            </code>
            {shareToken ? (
              <span class="badge" title="A read-only share link">
                shared view
              </span>
            ) : dashboard.locked ? (
              <span class="badge" title="Unlock it through the API to change it">
                locked
              </span>
            ) : editor ? (
              <button type="button" ref={editButton} onClick={() => setEditing(true)}>
                Edit
              </button>
            ) : null}
            {!shareToken && editor && (
              <button type="button" aria-expanded={sharing} onClick={() => setSharing(!sharing)}>
                Share
              </button>
            )}
            <Link class="button" href={withQuery(loc.path, { ...Object.fromEntries(loc.query), kiosk: '' })}>
              Kiosk
            </Link>
          </div>
          {sharing && <SharePanel dashboardId={dashboard.id} />}
          <div class="toolbar">
            <TimeControls
              view={shown}
              range={range}
              granularity={granularity}
              wanted={view.granularity ?? dashboard.default_granularity}
              granularities={source.granularities}
              timeZone={source.time_zone}
              setView={setView}
              shift={(direction) => setView(shiftView(shown, direction, now, fallback))}
              refreshNow={() => setTick((n) => n + 1)}
            />
            <SegmentInputs segments={dashboard.segments} view={view} setView={setView} />
          </div>
        </>
      )}
      {data.failure && !data.error && (
        <RefreshFailed
          failure={data.failure}
          readAt={data.readAt}
          every={REFRESH_MS[view.refresh] ?? null}
          timeZone={source.time_zone}
          retry={() => setTick((n) => n + 1)}
        />
      )}
      <DashboardGrid
        widgets={dashboard.payload.grid ?? []}
        ctx={ctx}
        loading={data.loading}
        error={data.error}
        editing={false}
      />
    </main>
  );
}

/**
 * A refresh that failed while earlier data stays on screen: what failed, when, how old the data
 * shown is and when the next try comes (the auto-refresh, or the Retry button when it is off).
 */
function RefreshFailed({
  failure,
  readAt,
  every,
  timeZone,
  retry,
}: {
  failure: { message: string; at: number };
  readAt: number | null;
  every: number | null;
  timeZone: string;
  retry: () => void;
}) {
  const time = (ms: number) => {
    try {
      return new Date(ms).toLocaleTimeString('en-GB', { timeZone, hour12: false });
    } catch {
      return new Date(ms).toISOString().slice(11, 19);
    }
  };
  const next = every
    ? `Next try by ${time(failure.at + every)} (auto-refresh every ${every / 1000} s).`
    : 'Auto-refresh is off.';
  return (
    <div class="notice error refresh-failed" role="alert" aria-label="Refresh failed">
      <span>
        Could not refresh the data at {time(failure.at)}: {failure.message}.{' '}
        {readAt !== null && `Still showing the data read at ${time(readAt)}. `}
        {next}
      </span>{' '}
      <button type="button" onClick={retry}>
        Retry now
      </button>
    </div>
  );
}
