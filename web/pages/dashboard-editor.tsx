// Editing a dashboard: a draft of its grid changed by the cells' controls and the widget form,
// saved with one PUT; or the JSON editor of the whole payload and segments.
import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { clearDraft, readDraft, writeDraft } from '../lib/drafts';
import { useLeaveGuard } from '../lib/router';
import { api, ApiError } from '../lib/api';
import { useLoad } from '../lib/hooks';
import { derivedPaths, loadTransponders, withDerived } from '../lib/transponders';
import type { Dashboard, Source } from '../lib/types';
import { DashboardSettings } from './dashboard-settings';
import { collectPaths, WidgetView } from '../widgets';
import type { WidgetConfig, WidgetContext } from '../widgets/types';
import { DashboardGrid } from './dashboard-grid';
import { applyWidget, compact, firstFree, place, type Box } from '../lib/grid-layout';
import { JsonEditor } from './json-editor';
import { newWidget, WIDGET_TYPES, WidgetForm } from './widget-form';

type Drawer =
  | { kind: 'widget'; index: number | null; widget: WidgetConfig }
  | { kind: 'json' }
  | { kind: 'settings' }
  | null;

export function DashboardEditor({
  dashboard,
  source,
  metricKey,
  ctx,
  onClose,
  onSaved,
}: {
  dashboard: Dashboard;
  source: Source;
  /** the key the dashboard reads, segments filled in (its derived paths are offered) */
  metricKey?: string;
  ctx: WidgetContext;
  onClose: () => void;
  onSaved: (d: Dashboard, keepEditing?: boolean) => void;
}) {
  // A draft this tab kept (reload, sign-in in between) comes back, with the version it was made from.
  const [restored] = useState(() => readDraft(dashboard.id));
  const [loadedAt] = useState(dashboard.updated_at);
  const base =
    dashboard.updated_at !== loadedAt ? dashboard.updated_at : (restored?.updated_at ?? dashboard.updated_at);
  const [grid, setGrid] = useState<WidgetConfig[]>(restored?.grid ?? dashboard.payload.grid ?? []);
  const dirty = JSON.stringify(grid) !== JSON.stringify(dashboard.payload.grid ?? []);
  const dirtyRef = useRef(dirty);
  dirtyRef.current = dirty;
  useEffect(() => {
    if (dirty) writeDraft(dashboard.id, { grid, updated_at: base, saved_at: Date.now() });
    else clearDraft(dashboard.id);
  }, [grid, dirty, base]);
  useLeaveGuard(
    useCallback(
      () =>
        dirtyRef.current
          ? 'This dashboard has unsaved changes. Leave anyway? (This tab keeps them until you save or cancel them.)'
          : null,
      [],
    ),
  );
  const [drawer, setDrawerState] = useState<Drawer>(null);
  // Keyboard: the drawer takes focus when it opens, Escape closes it, and focus goes back to the
  // control that opened it (or to the heading when that control is gone). Both moves happen as the
  // change is drawn (layout effects), never a frame later: a focus moved after the frame lands on
  // whatever has the focus by then, and what is being typed into a field of the form (clicked as it
  // appeared, on a loaded machine) would go into its first field instead.
  const opener = useRef<HTMLElement | null>(null);
  const closing = useRef(false);
  const drawerRef = useRef<HTMLElement>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  const setDrawer = (next: Drawer) => {
    if (next && !drawer)
      opener.current = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    setDrawerState(next);
    if (!next && drawer) closing.current = true;
  };
  const drawerKey = drawer ? `${drawer.kind}|${drawer.kind === 'widget' ? drawer.widget.id : ''}` : '';
  useLayoutEffect(() => {
    if (!drawerKey) return;
    drawerRef.current
      ?.querySelector<HTMLElement>('input:not([type=hidden]), select, textarea, button')
      ?.focus();
  }, [drawerKey]);
  useLayoutEffect(() => {
    if (!closing.current || drawer) return;
    closing.current = false;
    const back = opener.current;
    opener.current = null;
    // Only a focus that went with the drawer comes back; one already put elsewhere stays there.
    const active = document.activeElement;
    if (active && active !== document.body) return;
    (back?.isConnected ? back : headingRef.current)?.focus();
  });
  // Opening the editor moves focus to its heading (the Edit button that had it is gone).
  useLayoutEffect(() => headingRef.current?.focus(), []);
  const [addType, setAddType] = useState('timeseries');
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [fieldErrors, setFieldErrors] = useState<Record<string, string[]>>({});
  // A save refused because someone else saved since this dashboard was loaded (409): its message.
  const [stale, setStale] = useState<string | null>(null);
  const transponders = useLoad((signal) => loadTransponders(source.id, signal).catch(() => []), [source.id]);
  const derived = useMemo(
    () => derivedPaths(transponders.data, metricKey ?? dashboard.key),
    [transponders.data, metricKey, dashboard.key],
  );
  const paths = withDerived(collectPaths(ctx.series), derived);

  // Every change of the grid is laid out (web/lib/grid-layout.ts): no overlaps, floated up.
  const change = (index: number, widget: WidgetConfig | null) =>
    setGrid((g) =>
      widget
        ? place(
            g.map((w, i) => (i === index ? widget : w)),
            index,
            widget,
          )
        : compact(g.filter((_, i) => i !== index)),
    );
  const placeAt = (index: number, box: Box) => setGrid((g) => place(g, index, box));
  const duplicate = (index: number) =>
    setGrid((g) => {
      const source = g[index]!;
      const copy = { ...structuredClone(source), id: newWidget(source.type, g).id };
      const spot = firstFree(g, source.w, source.h);
      return [...g, { ...copy, ...spot }];
    });
  // The form's widget goes where that widget is now, found by its id (web/lib/grid-layout.ts): the
  // cells stay usable while the form is open, and a widget removed meanwhile shifts the indices.
  const apply = (widget: WidgetConfig) => {
    const id = drawer?.kind === 'widget' && drawer.index !== null ? drawer.widget.id : null;
    setGrid((g) => applyWidget(g, id, widget, (taken) => newWidget(widget.type, [...taken]).id));
    setDrawer(null);
  };
  // Saves from the version loaded (updated_at), so a change saved meanwhile elsewhere is not
  // overwritten silently; `overwrite` sends no version, after the user chose to.
  const save = async (overwrite = false) => {
    setSaving(true);
    setError(null);
    setStale(null);
    setFieldErrors({});
    try {
      // Overwrite saves over the version stored now, still naming it: a save that names a version is
      // stored at a later second than that version, so a tab still holding the version replaced
      // here cannot pass its own stale save as current (src/domain/dashboards/versions.ts).
      const version = overwrite
        ? (await api<Dashboard>('GET', `/dashboards/${dashboard.id}`)).updated_at
        : base;
      const body = { payload: { ...dashboard.payload, grid }, updated_at: version };
      const saved = await api<Dashboard>('PUT', `/dashboards/${dashboard.id}`, body);
      clearDraft(dashboard.id);
      dirtyRef.current = false;
      onSaved(saved);
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields : {};
      if (err instanceof ApiError && err.status === 409 && !dashboard.locked)
        setStale(err.message.split(': reload')[0]!);
      else if (Object.keys(fields).length) setFieldErrors(fields);
      else setError((err as Error).message);
      setSaving(false);
    }
  };
  // Drops this draft for the version saved elsewhere.
  const reload = async () => {
    try {
      const fresh = await api<Dashboard>('GET', `/dashboards/${dashboard.id}`);
      setGrid(fresh.payload.grid ?? []);
      setStale(null);
      onSaved(fresh, true);
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <main data-dashboard-id={dashboard.id}>
      <div class="page-head editor-head">
        <h1 ref={headingRef} tabIndex={-1}>
          Editing {dashboard.name}
        </h1>
        <label>
          <span class="visually-hidden">Widget type</span>
          <select
            name="widget-type"
            value={addType}
            onChange={(e) => setAddType((e.target as HTMLSelectElement).value)}
          >
            {WIDGET_TYPES.map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
        </label>
        <button
          type="button"
          onClick={() => setDrawer({ kind: 'widget', index: null, widget: newWidget(addType, grid) })}
        >
          Add widget
        </button>
        <button type="button" onClick={() => setDrawer({ kind: 'json' })}>
          Edit JSON
        </button>
        <button type="button" onClick={() => setDrawer({ kind: 'settings' })}>
          Settings
        </button>
        <button type="button" class="primary" disabled={saving} onClick={() => void save()}>
          Save
        </button>
        <button
          type="button"
          onClick={() => {
            clearDraft(dashboard.id);
            dirtyRef.current = false;
            onClose();
          }}
        >
          Cancel
        </button>
      </div>
      {restored && dirty && (
        <div class="notice" role="status">
          Your unsaved changes from {new Date(restored.saved_at).toLocaleTimeString()} are back: save or
          cancel them.
        </div>
      )}
      {error && (
        <div class="notice error" role="alert">
          {error}
        </div>
      )}
      {stale && (
        <div class="notice error" role="alert" aria-label="Saved elsewhere">
          <p>Not saved: {stale}</p>
          <button type="button" onClick={() => void reload()}>
            Reload (drop my changes)
          </button>{' '}
          <button type="button" onClick={() => void save(true)}>
            Overwrite with my changes
          </button>
        </div>
      )}
      <WidgetErrors
        fields={fieldErrors}
        grid={grid}
        onEdit={(index) => setDrawer({ kind: 'widget', index, widget: grid[index]! })}
      />
      <DashboardGrid
        widgets={grid}
        ctx={ctx}
        loading={false}
        error={null}
        editing
        onChange={change}
        onPlace={placeAt}
        onDuplicate={duplicate}
        onEdit={(index) => setDrawer({ kind: 'widget', index, widget: grid[index]! })}
      />
      {drawer && (
        <aside
          class="drawer"
          aria-label="Editor"
          ref={drawerRef}
          onKeyDown={(e) => {
            // Escape closes the drawer; in the JSON text it stays a key of the text.
            if (e.key === 'Escape' && !(e.target instanceof HTMLTextAreaElement)) {
              e.preventDefault();
              setDrawer(null);
            }
          }}
        >
          {drawer.kind === 'widget' ? (
            <WidgetForm
              key={drawer.widget.id}
              initial={drawer.widget}
              paths={paths}
              derived={derived}
              onSave={apply}
              onCancel={() => setDrawer(null)}
              preview={(w) => <WidgetView widget={w} ctx={ctx} error={null} loading={false} />}
            />
          ) : drawer.kind === 'settings' ? (
            <DashboardSettings
              dashboard={dashboard}
              source={source}
              onSaved={(d) => {
                onSaved(d, true);
                setDrawer(null);
              }}
              onCancel={() => setDrawer(null)}
            />
          ) : (
            <JsonEditor
              dashboard={{ ...dashboard, payload: { ...dashboard.payload, grid } }}
              onSaved={onSaved}
              onCancel={() => setDrawer(null)}
            />
          )}
        </aside>
      )}
    </main>
  );
}

/** The server's 422 for the grid, by widget: each names its field and opens that widget's form. */
function WidgetErrors({
  fields,
  grid,
  onEdit,
}: {
  fields: Record<string, string[]>;
  grid: WidgetConfig[];
  onEdit: (index: number) => void;
}) {
  // Errors of a widget removed since are no longer shown.
  const entries = Object.entries(fields).filter(([field]) => {
    const id = /^payload\.grid\[([^\]]+)\]/.exec(field)?.[1];
    return id === undefined || /^\d+$/.test(id) || grid.some((w) => w.id === id);
  });
  if (entries.length === 0) return null;
  return (
    <ul class="json-errors" role="alert" aria-label="Errors" style={{ marginBottom: 'var(--space-3)' }}>
      {entries.map(([field, messages]) => {
        const id = /^payload\.grid\[([^\]]+)\]/.exec(field)?.[1];
        const index = grid.findIndex((w) => w.id === id);
        const name = index >= 0 ? grid[index]!.title || grid[index]!.id : null;
        return (
          <li key={field}>
            <button type="button" data-field={field} disabled={index < 0} onClick={() => onEdit(index)}>
              {name ? `${name}: ` : ''}
              <code>{field}</code> {messages.join(', ')}
            </button>
          </li>
        );
      })}
    </ul>
  );
}
