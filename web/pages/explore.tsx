// Explore: a source's keys with their event counts over the range (from the system key), a key's
// paths, a chart and a table of one path, CSV download, and "add to a dashboard". The whole state
// (source, key, path, range, granularity) is in the URL.
import { compareBucketLabels } from '../widgets/data/buckets';
import { useMemo, useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { keyCounts, seriesCsv, type KeyCounts } from '../lib/explore-data';
import { useInterval, useLoad, useTitle } from '../lib/hooks';
import { navigate, useLocation, withQuery } from '../lib/router';
import { fetchSeries, leaf } from '../lib/series';
import { derivedPaths, loadTransponders, withDerived } from '../lib/transponders';
import { hasSegments } from '../lib/segments';
import { loadSources, sourceLabel } from '../lib/sources';
import { useTheme } from '../lib/theme';
import type { Dashboard, Source } from '../lib/types';
import {
  fitGranularity,
  parseView,
  rangeParams,
  REFRESH_MS,
  resolveRange,
  viewParams,
  type ViewState,
} from '../lib/view';
import { collectPaths, WidgetView } from '../widgets';
import type { WidgetConfig, WidgetContext } from '../widgets/types';
import { ErrorNotice, Skeleton } from '../components';
import { formatInZone, TimeControls } from './dashboard-toolbar';
import { newWidget } from './widget-form';

const SYSTEM_KEY = '__system__key__';
const EXPLORE_BUCKETS = 400;

export function ExplorePage() {
  useTitle('Explore');
  const sources = useLoad((signal) => loadSources(signal), []);
  if (sources.error)
    return (
      <main>
        <ErrorNotice message={sources.error} />
      </main>
    );
  if (!sources.data)
    return (
      <main>
        <Skeleton />
      </main>
    );
  if (sources.data.length === 0)
    return (
      <main>
        <div class="notice">No sources yet: create a project on the Sources page first.</div>
      </main>
    );
  return <Explorer sources={sources.data} />;
}

function Explorer({ sources }: { sources: Source[] }) {
  const loc = useLocation();
  const view = parseView(loc.query);
  const source = sources.find((s) => s.id === loc.query.get('source')) ?? sources[0]!;
  const key = loc.query.get('key');
  const path = loc.query.get('path');
  const search = loc.query.toString();
  const [tick, setTick] = useState(0);
  useInterval(() => setTick((n) => n + 1), REFRESH_MS[view.refresh] ?? null);
  const now = useMemo(() => Date.now(), [search, tick]);
  const shown: ViewState = view.preset || view.from !== null ? view : { ...view, preset: '24h' };
  const range = resolveRange(shown, now, '24h');
  // Without a chosen granularity, one that gives a readable table (a few hundred rows at most).
  const granularity = view.granularity
    ? fitGranularity(source.granularities, view.granularity, range.to - range.from)
    : fitGranularity(source.granularities, null, range.to - range.from, EXPLORE_BUCKETS);
  const go = (params: { source?: string; key?: string | null; path?: string | null; view?: ViewState }) =>
    navigate(
      withQuery('/explore', {
        source: params.source ?? source.id,
        key: params.key === undefined ? key : params.key,
        path: params.path === undefined ? path : params.path,
        ...viewParams(params.view ?? shown),
      }),
    );
  const timed = { from: range.from, to: range.to, granularity };
  const keys = useLoad(
    (signal) => fetchSeries(source.id, SYSTEM_KEY, timed, signal).then(keyCounts),
    [source.id, range.from, range.to, granularity, tick],
  );
  const series = useLoad(
    (signal) => (key ? fetchSeries(source.id, key, timed, signal) : Promise.resolve(null)),
    [source.id, key, range.from, range.to, granularity, tick],
  );
  // Derived paths (the responses of the transponders that apply to the key) are offered even
  // where the range holds no value for them, and marked.
  const transponders = useLoad((signal) => loadTransponders(source.id, signal).catch(() => []), [source.id]);
  const derived = useMemo(() => derivedPaths(transponders.data, key), [transponders.data, key]);
  const paths = useMemo(
    () => (series.data ? withDerived(collectPaths(series.data), derived) : []),
    [series.data, derived],
  );

  return (
    <main>
      <div class="page-head">
        <h1>Explore</h1>
        <label>
          <span class="muted">Source</span>
          <select
            name="source"
            value={source.id}
            onChange={(e) => go({ source: (e.target as HTMLSelectElement).value, key: null, path: null })}
          >
            {sources.map((s) => (
              <option key={s.id} value={s.id}>
                {sourceLabel(s)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div class="toolbar">
        <TimeControls
          view={shown}
          range={range}
          granularity={granularity}
          granularities={source.granularities}
          timeZone={source.time_zone}
          setView={(v) => go({ view: v })}
          shift={(d) =>
            go({
              view: {
                ...shown,
                preset: null,
                from: range.from + d * (range.to - range.from),
                to: range.to + d * (range.to - range.from),
              },
            })
          }
        />
      </div>
      <div class="explore">
        <KeyList keys={keys} current={key} onPick={(k) => go({ key: k, path: null })} />
        <div class="stack">
          {!key && <div class="notice muted">Pick a key to see its paths.</div>}
          {key && (
            <KeyView
              source={source}
              metricKey={key}
              path={path ?? paths[0] ?? null}
              paths={paths}
              derived={derived}
              loaded={series}
              range={timed}
              now={now}
              onPath={(p) => go({ path: p })}
              onZoom={(from, to) => go({ view: { ...shown, preset: null, from, to } })}
            />
          )}
        </div>
      </div>
    </main>
  );
}

const KEYS_SHOWN = 300;

/** The source's keys by event count, with a filter; a long list shows its first few hundred matches. */
function KeyList({
  keys: loaded,
  current,
  onPick,
}: {
  keys: { data: KeyCounts | null; error: string | null; loading: boolean };
  current: string | null;
  onPick: (key: string) => void;
}) {
  const keys = { ...loaded, data: loaded.data?.keys ?? null };
  const [filter, setFilter] = useState('');
  const needle = filter.trim().toLowerCase();
  const matching = (keys.data ?? []).filter((k) => !needle || k.key.toLowerCase().includes(needle));
  return (
    <section class="panel" aria-label="Keys">
      <header>
        <h2>Keys</h2>
        <span class="muted" data-testid="total-events">
          {loaded.data ? `${loaded.data.total.toLocaleString('en-US')} events` : 'events'}
        </span>
      </header>
      <ErrorNotice message={keys.error} />
      {keys.loading && !keys.data && (
        <div class="panel-body">
          <Skeleton />
        </div>
      )}
      {(keys.data?.length ?? 0) > 10 && (
        <div class="panel-body">
          <label>
            <span class="visually-hidden">Filter keys</span>
            <input
              type="search"
              placeholder="Filter keys"
              value={filter}
              onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
              style={{ width: '100%' }}
            />
          </label>
        </div>
      )}
      <div class="scroll">
        {keys.data?.length === 0 && <p class="panel-body muted">No events in this range.</p>}
        {matching.slice(0, KEYS_SHOWN).map((k) => (
          <button
            key={k.key}
            type="button"
            class="pick"
            aria-current={k.key === current}
            onClick={() => onPick(k.key)}
          >
            <span>{k.key}</span>
            <span class="count">{k.count.toLocaleString('en-US')}</span>
          </button>
        ))}
        {matching.length > KEYS_SHOWN && (
          <p class="panel-body muted">{matching.length - KEYS_SHOWN} more: filter to find them.</p>
        )}
      </div>
    </section>
  );
}

interface KeyViewProps {
  source: Source;
  metricKey: string;
  path: string | null;
  paths: string[];
  /** derived paths, with the name of the transponder that writes each */
  derived: ReadonlyMap<string, string>;
  loaded: { data: import('../widgets/types').SeriesData | null; error: string | null; loading: boolean };
  range: { from: number; to: number; granularity: string };
  now: number;
  onPath: (path: string) => void;
  onZoom: (from: number, to: number) => void;
}

function KeyView({
  source,
  metricKey,
  path,
  paths,
  derived,
  loaded,
  range,
  now,
  onPath,
  onZoom,
}: KeyViewProps) {
  const [, theme] = useTheme();
  const [pathFilter, setPathFilter] = useState('');
  const needle = pathFilter.trim().toLowerCase();
  const shownPaths = needle ? paths.filter((p) => p.toLowerCase().includes(needle)) : paths;
  const series = loaded.data ?? { at: [], atText: [], values: [] };
  const widget: WidgetConfig = {
    id: 'explore',
    type: 'timeseries',
    title: path ?? metricKey,
    paths: path ? [path] : [],
    chart_type: 'line',
    legend: false,
    x: 0,
    y: 0,
    w: 12,
    h: 4,
  };
  const ctx: WidgetContext = {
    series,
    previous: null,
    range,
    timeZone: source.time_zone,
    now,
    theme,
    onZoom: (f, t) => onZoom(Math.round(f), Math.round(t)),
    cursorSyncKey: 'explore',
  };
  const download = () => {
    const url = URL.createObjectURL(new Blob([seriesCsv(series, paths)], { type: 'text/csv' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `${metricKey.replace(/[^\w.-]+/g, '_')}.csv`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 1000);
  };
  return (
    <>
      <section class="panel" aria-label="Paths">
        <header>
          <h2>{metricKey}</h2>
          <button type="button" onClick={download} disabled={!loaded.data}>
            Download CSV
          </button>
          {path && <AddToDashboard source={source} metricKey={metricKey} path={path} />}
        </header>
        <ErrorNotice message={loaded.error} />
        {paths.length > 10 && (
          <div class="panel-body">
            <label>
              <span class="visually-hidden">Filter paths</span>
              <input
                type="search"
                placeholder={`Filter ${paths.length} paths`}
                value={pathFilter}
                onInput={(e) => setPathFilter((e.target as HTMLInputElement).value)}
              />
            </label>
          </div>
        )}
        <div class="panel-body path-groups">
          {pathGroups(shownPaths).map(({ parent, leaves }) => (
            <div class="path-group" key={parent || '\u0000'}>
              {parent && (
                <code class="path-group__parent" title={`Paths under ${parent}`}>
                  {parent}.
                </code>
              )}
              <div class="row">
                {leaves.map((p) => (
                  <button
                    key={p}
                    type="button"
                    aria-pressed={p === path}
                    aria-label={derived.has(p) ? `${p} (derived)` : p}
                    title={derived.has(p) ? `${p}: derived by the transponder ${derived.get(p)}` : p}
                    class={p === path ? 'primary' : ''}
                    data-derived={derived.has(p) ? '' : undefined}
                    onClick={() => onPath(p)}
                  >
                    {parent ? p.slice(parent.length + 1) : p}
                    {derived.has(p) && (
                      <span class="derived-mark" aria-hidden="true">
                        derived
                      </span>
                    )}
                  </button>
                ))}
              </div>
            </div>
          ))}
          {loaded.data && paths.length === 0 && <span class="muted">No values in this range.</span>}
          {paths.length > 0 && shownPaths.length === 0 && <span class="muted">No path matches.</span>}
        </div>
      </section>
      <section class="panel">
        <div class="chart">
          <WidgetView
            widget={widget}
            ctx={ctx}
            loading={loaded.loading && !loaded.data}
            error={loaded.error}
          />
        </div>
      </section>
      {path && (
        <section class="panel scroll" aria-label="Values">
          <table class="data">
            <thead>
              <tr>
                <th>Bucket ({source.time_zone}), newest first</th>
                <th class="num">{path}</th>
              </tr>
            </thead>
            <tbody>
              {series.at.map((_, j) => {
                const i = series.at.length - 1 - j; // newest first, as a monitoring table reads
                const at = series.at[i]!;
                const v = leaf(series.values[i] ?? {}, path);
                return (
                  <tr key={at}>
                    <td>{formatInZone(at, source.time_zone)}</td>
                    <td class="num">
                      {v === null ? '—' : v.toLocaleString('en-US', { maximumFractionDigits: 6 })}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}

/**
 * Does a dashboard read this key: the same key, or a segmented key whose pattern matches it? Then
 * the named groups' values (to open the dashboard on them); null when it does not.
 */
function keyMatch(dashboardKey: string, key: string): Record<string, string> | null {
  if (dashboardKey === key) return {};
  if (!hasSegments(dashboardKey)) return null;
  try {
    const match = new RegExp(`^(?:${dashboardKey})$`, 'u').exec(key);
    return match ? { ...(match.groups ?? {}) } : null;
  } catch {
    return null; // not a valid pattern in this browser
  }
}

function AddToDashboard({ source, metricKey, path }: { source: Source; metricKey: string; path: string }) {
  const dashboards = useLoad((signal) => get<Dashboard[]>('/dashboards?limit=1000', { signal }), []);
  const [error, setError] = useState<string | null>(null);
  const fitting = (dashboards.data ?? []).filter(
    (d) => d.source_id === source.id && !d.locked && keyMatch(d.key, metricKey),
  );
  const add = async (e: Event) => {
    e.preventDefault();
    const id = String(new FormData(e.target as HTMLFormElement).get('dashboard'));
    try {
      const d = await get<Dashboard>(`/dashboards/${id}`);
      const grid = d.payload.grid ?? [];
      const widget = { ...newWidget('timeseries', grid), title: path, paths: [path] };
      await api('PUT', `/dashboards/${id}`, { payload: { ...d.payload, grid: [...grid, widget] } });
      const segments = Object.entries(keyMatch(d.key, metricKey) ?? {}).map(([name, value]) => [
        `s.${name}`,
        value,
      ]);
      // The dashboard opens on the range Explore showed.
      navigate(withQuery(`/d/${id}`, { ...rangeParams(location.search), ...Object.fromEntries(segments) }));
    } catch (err) {
      setError((err as Error).message);
    }
  };
  if (fitting.length === 0)
    return (
      <span class="muted" title="Dashboards read one key: create one for this key on the Dashboards page">
        No dashboard of this key
      </span>
    );
  return (
    <form class="row" onSubmit={add}>
      <label>
        <span class="visually-hidden">Dashboard</span>
        <select name="dashboard">
          {fitting.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit">Add to dashboard</button>
      {error && (
        <span class="error-text" role="alert">
          {error}
        </span>
      )}
    </form>
  );
}

/** Paths grouped by their parent (`requests.status` for `requests.status.200`) when a parent has
 * two or more; the rest together under no parent, first. Order is kept within a group. */
function pathGroups(paths: readonly string[]): Array<{ parent: string; leaves: string[] }> {
  const parentOf = (p: string) => (p.includes('.') ? p.slice(0, p.lastIndexOf('.')) : '');
  const byParent = new Map<string, string[]>();
  for (const p of paths) byParent.set(parentOf(p), [...(byParent.get(parentOf(p)) ?? []), p]);
  const loose: string[] = [];
  const groups: Array<{ parent: string; leaves: string[] }> = [];
  for (const [parent, leaves] of byParent) {
    const tails = leaves.map((p) => p.slice(parent.length + 1));
    // Histogram buckets ("50", "100", "1000+") in numeric order.
    if (parent && leaves.length > 1 && tails.every((t) => /^-?\d+(\.\d+)?\+?$/.test(t))) {
      groups.push({
        parent,
        leaves: [...leaves].sort((a, b) =>
          compareBucketLabels(a.slice(parent.length + 1), b.slice(parent.length + 1)),
        ),
      });
    } else if (parent && leaves.length > 1) groups.push({ parent, leaves });
    else loose.push(...leaves);
  }
  return loose.length ? [{ parent: '', leaves: loose }, ...groups] : groups;
}
