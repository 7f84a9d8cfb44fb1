// One group header and one dashboard row of the dashboards list, with their actions.
import { useState } from 'preact/hooks';
import { api } from '../lib/api';
import { Link } from '../lib/router';
import type { Dashboard, DashboardGroup, Source } from '../lib/types';
import { ConfirmButton, RenameForm } from '../components';
import { useRole } from './members';

export function GroupHeader(props: {
  group: DashboardGroup | null;
  first: boolean;
  last: boolean;
  onRename: (name: string) => void;
  onMove: (delta: -1 | 1) => void;
  onDelete: () => void;
}) {
  const { group } = props;
  const [renaming, setRenaming] = useState(false);
  const editor = useRole('editor');
  if (!group) {
    return (
      <header>
        <h2>Ungrouped</h2>
      </header>
    );
  }
  return (
    <header>
      {renaming ? (
        <RenameForm
          value={group.name}
          label="Group name"
          onSave={props.onRename}
          onClose={() => setRenaming(false)}
        />
      ) : (
        <h2>{group.name}</h2>
      )}
      {editor && (
        <>
          <button type="button" onClick={() => setRenaming(true)} aria-label={`Rename ${group.name}`}>
            Rename
          </button>
          <button
            type="button"
            class="icon"
            aria-label={`Move group ${group.name} up`}
            disabled={props.first}
            onClick={() => props.onMove(-1)}
          >
            ↑
          </button>
          <button
            type="button"
            class="icon"
            aria-label={`Move group ${group.name} down`}
            disabled={props.last}
            onClick={() => props.onMove(1)}
          >
            ↓
          </button>
          <ConfirmButton
            label="Delete group"
            confirm="Delete group (dashboards stay)"
            onConfirm={props.onDelete}
          />
        </>
      )}
    </header>
  );
}

function duplicateBody(d: Dashboard) {
  return {
    name: `${d.name} (copy)`.slice(0, 255),
    key: d.key,
    source: { type: d.source_type, id: d.source_id },
    group_id: d.group_id,
    default_timeframe: d.default_timeframe,
    default_granularity: d.default_granularity,
    payload: d.payload,
    segments: d.segments,
  };
}

export function DashboardRow(props: {
  dashboard: Dashboard;
  groups: DashboardGroup[];
  source: Source | undefined;
  first: boolean;
  last: boolean;
  act: (work: () => Promise<unknown>) => void;
  onMove: (delta: -1 | 1) => void;
  onRenumber: () => Promise<void>;
}) {
  const { dashboard: d, act } = props;
  const editor = useRole('editor');
  const put = (body: Record<string, unknown>) => act(() => api('PUT', `/dashboards/${d.id}`, body));
  const locked = d.locked;
  const [renaming, setRenaming] = useState(false);
  return (
    <li data-dashboard={d.name}>
      {renaming ? (
        <RenameForm
          value={d.name}
          label="Dashboard name"
          onSave={(name) => put({ name })}
          onClose={() => setRenaming(false)}
        />
      ) : (
        <span>
          <Link href={`/d/${d.id}`} class="name">
            {d.name}
          </Link>{' '}
          {locked && <span class="badge">locked</span>}
          <br />
          <span class="meta">
            <code>{d.key}</code> · {props.source?.display_name ?? 'unknown source'} ·{' '}
            {(d.payload.grid ?? []).length} widgets
          </span>
        </span>
      )}
      {editor && (
        <span class="actions">
          <button
            type="button"
            disabled={locked}
            onClick={() => setRenaming(true)}
            aria-label={`Rename ${d.name}`}
          >
            Rename
          </button>
          <label>
            <span class="visually-hidden">Group of {d.name}</span>
            <select
              disabled={locked}
              value={d.group_id ?? ''}
              onChange={(e) => put({ group_id: (e.target as HTMLSelectElement).value || null })}
            >
              <option value="">No group</option>
              {props.groups.map((g) => (
                <option key={g.id} value={g.id}>
                  {g.name}
                </option>
              ))}
            </select>
          </label>
          <button
            type="button"
            class="icon"
            aria-label={`Move ${d.name} up`}
            disabled={locked || props.first}
            onClick={() => props.onMove(-1)}
          >
            ↑
          </button>
          <button
            type="button"
            class="icon"
            aria-label={`Move ${d.name} down`}
            disabled={locked || props.last}
            onClick={() => props.onMove(1)}
          >
            ↓
          </button>
          <button
            type="button"
            onClick={() => act(() => api('POST', '/dashboards', duplicateBody(d)).then(props.onRenumber))}
          >
            Duplicate
          </button>
          <ConfirmButton
            label="Delete"
            confirm={`Delete ${d.name}`}
            disabled={locked}
            onConfirm={() => act(() => api('DELETE', `/dashboards/${d.id}`))}
          />
        </span>
      )}
    </li>
  );
}
