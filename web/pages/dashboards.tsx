// The dashboards list: groups as sections in their order, dashboards in theirs, a search that
// lives in the URL (?q=), and every change of dashboards and groups: create, rename, duplicate,
// delete, move up/down, move to another group.
import { useState } from 'preact/hooks';
import { api, get } from '../lib/api';
import { useLoad, useTitle } from '../lib/hooks';
import { Link, navigate, useLocation, withQuery } from '../lib/router';
import { loadSources } from '../lib/sources';
import type { Dashboard, DashboardGroup, Source } from '../lib/types';
import { ErrorNotice, Skeleton } from '../components';
import { NewDashboardForm, NewGroupForm } from './dashboards-forms';
import { useRole } from './members';
import { DashboardRow, GroupHeader } from './dashboards-rows';

interface ListData {
  dashboards: Dashboard[];
  groups: DashboardGroup[];
  sources: Source[];
}

async function loadList(signal: AbortSignal): Promise<ListData> {
  const [dashboards, groups, sources] = await Promise.all([
    get<Dashboard[]>('/dashboards?limit=1000', { signal }),
    get<DashboardGroup[]>('/dashboard-groups', { signal }),
    loadSources(signal),
  ]);
  return { dashboards, groups, sources };
}

/** New positions 1..n for items in the given order; only the changed ones are written. */
async function writeOrder(
  kind: 'dashboards' | 'dashboard-groups',
  ordered: { id: string; position: number }[],
): Promise<void> {
  for (const [i, item] of ordered.entries()) {
    if (item.position !== i + 1) await api('PUT', `/${kind}/${item.id}`, { position: i + 1 });
  }
}

function moved<T>(list: T[], index: number, delta: -1 | 1): T[] | null {
  const target = index + delta;
  if (target < 0 || target >= list.length) return null;
  const copy = [...list];
  [copy[index], copy[target]] = [copy[target]!, copy[index]!];
  return copy;
}

export function DashboardsPage() {
  useTitle('Dashboards');
  const editor = useRole('editor');
  const loc = useLocation();
  const search = loc.query.get('q') ?? '';
  const list = useLoad(loadList, []);
  const [error, setError] = useState<string | null>(null);
  const act = (work: () => Promise<unknown>) => {
    setError(null);
    work().then(list.reload, (err: Error) => {
      setError(err.message);
      list.reload();
    });
  };
  const data = list.data;
  const needle = search.trim().toLowerCase();
  const matches = (d: Dashboard) =>
    !needle || d.name.toLowerCase().includes(needle) || d.key.toLowerCase().includes(needle);
  const sections = data
    ? [...data.groups.map((g) => ({ group: g as DashboardGroup | null })), { group: null }]
    : [];
  const inGroup = (g: DashboardGroup | null) =>
    (data?.dashboards ?? []).filter((d) => (d.group_id ?? null) === (g?.id ?? null));
  // Display order of every dashboard, grouped: the order positions are written in.
  const displayOrder = () => sections.flatMap((s) => inGroup(s.group));

  const moveDashboard = (group: DashboardGroup | null, index: number, delta: -1 | 1) => {
    const next = moved(inGroup(group), index, delta);
    if (!next) return;
    const order = sections.flatMap((s) => (s.group?.id === group?.id ? next : inGroup(s.group)));
    act(() => writeOrder('dashboards', order));
  };
  const moveGroup = (index: number, delta: -1 | 1) => {
    const next = data && moved(data.groups, index, delta);
    if (next) act(() => writeOrder('dashboard-groups', next));
  };

  return (
    <main>
      <div class="page-head">
        <h1>Dashboards</h1>
        <label>
          <span class="visually-hidden">Search dashboards</span>
          <input
            type="search"
            placeholder="Search by name or key"
            value={search}
            onInput={(e) =>
              navigate(withQuery('/', { q: (e.target as HTMLInputElement).value || null }), { replace: true })
            }
          />
        </label>
      </div>
      <ErrorNotice message={error ?? list.error} />
      {!data && list.loading && <Skeleton lines={4} />}
      {data && (
        <div class="stack">
          {data.sources.length === 0 && (
            <div class="notice">
              No sources yet: <Link href="/sources">create a project</Link> to send metrics to, then a
              dashboard to see them.
            </div>
          )}
          {sections.map(({ group }, gi) => {
            const rows = inGroup(group);
            const shown = rows.filter(matches);
            if (!group && rows.length === 0 && data.groups.length > 0) return null;
            return (
              <section class="panel" key={group?.id ?? 'ungrouped'} data-group={group?.name ?? ''}>
                <GroupHeader
                  group={group}
                  first={gi === 0}
                  last={gi === data.groups.length - 1}
                  onRename={(name) =>
                    group && act(() => api('PUT', `/dashboard-groups/${group.id}`, { name }))
                  }
                  onMove={(delta) => moveGroup(gi, delta)}
                  onDelete={() => group && act(() => api('DELETE', `/dashboard-groups/${group.id}`))}
                />
                <ul class="list">
                  {shown.map((d) => (
                    <DashboardRow
                      key={d.id}
                      dashboard={d}
                      groups={data.groups}
                      source={data.sources.find((s) => s.id === d.source_id)}
                      first={rows[0] === d}
                      last={rows[rows.length - 1] === d}
                      act={act}
                      onMove={(delta) => moveDashboard(group, rows.indexOf(d), delta)}
                      onRenumber={() => writeOrder('dashboards', displayOrder())}
                    />
                  ))}
                  {shown.length === 0 && (
                    <li class="muted">
                      {rows.length ? 'No dashboard matches the search.' : 'No dashboards here yet.'}
                    </li>
                  )}
                </ul>
              </section>
            );
          })}
          {editor && (
            <div class="row" style={{ alignItems: 'flex-start' }}>
              <NewDashboardForm
                sources={data.sources}
                groups={data.groups}
                onCreated={(d) => navigate(`/d/${d.id}`)}
              />
              <NewGroupForm onCreated={list.reload} />
            </div>
          )}
        </div>
      )}
    </main>
  );
}
