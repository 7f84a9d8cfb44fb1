// The 12-column grid of a dashboard (one column under 700 px, see app.css): each cell is the
// widgets' WidgetView with the shared series; in edit mode each cell gets move, resize, edit and
// remove controls.
import { WidgetView } from '../widgets';
import { monitorsOfWidget } from '../widgets/monitor-marks';
import { Link } from '../lib/router';
import type { WidgetConfig, WidgetContext } from '../widgets/types';

export const COLUMNS = 12;

type Change = (widget: WidgetConfig) => void;

function clampGeometry(w: WidgetConfig): WidgetConfig {
  const width = Math.min(COLUMNS, Math.max(1, w.w));
  return {
    ...w,
    w: width,
    h: Math.max(1, w.h),
    x: Math.min(COLUMNS - width, Math.max(0, w.x)),
    y: Math.max(0, w.y),
  };
}

function CellTools({
  widget,
  onChange,
  onEdit,
  onRemove,
}: {
  widget: WidgetConfig;
  onChange: Change;
  onEdit: () => void;
  onRemove: () => void;
}) {
  const name = widget.title || widget.id;
  const nudge = (delta: Partial<Record<'x' | 'y' | 'w' | 'h', number>>) => {
    const next = { ...widget };
    for (const [k, d] of Object.entries(delta) as ['x' | 'y' | 'w' | 'h', number][]) next[k] = widget[k] + d;
    onChange(clampGeometry(next));
  };
  const tools: [string, string, () => void][] = [
    ['←', `Move ${name} left`, () => nudge({ x: -1 })],
    ['→', `Move ${name} right`, () => nudge({ x: 1 })],
    ['↑', `Move ${name} up`, () => nudge({ y: -1 })],
    ['↓', `Move ${name} down`, () => nudge({ y: 1 })],
    ['W−', `Narrower ${name}`, () => nudge({ w: -1 })],
    ['W+', `Wider ${name}`, () => nudge({ w: 1 })],
    ['H−', `Shorter ${name}`, () => nudge({ h: -1 })],
    ['H+', `Taller ${name}`, () => nudge({ h: 1 })],
  ];
  return (
    <div class="cell-tools">
      {tools.map(([label, aria, run]) => (
        // The accessible name starts with the visible label (voice control: "click W−").
        <button key={aria} type="button" aria-label={`${label} ${aria}`} title={aria} onClick={run}>
          {label}
        </button>
      ))}
      <button type="button" aria-label={`Edit ${name}`} onClick={onEdit}>
        Edit
      </button>
      <button type="button" class="danger" aria-label={`Remove ${name}`} onClick={onRemove}>
        ✕
      </button>
    </div>
  );
}

export interface GridProps {
  widgets: WidgetConfig[];
  ctx: WidgetContext;
  loading: boolean;
  error: string | null;
  editing: boolean;
  onChange?: (index: number, widget: WidgetConfig | null) => void;
  onEdit?: (index: number) => void;
}

export function DashboardGrid({ widgets, ctx, loading, error, editing, onChange, onEdit }: GridProps) {
  if (widgets.length === 0) {
    return (
      <div class="panel empty-grid">
        This dashboard has no widgets yet.{editing ? ' Add one with “Add widget”.' : ''}
      </div>
    );
  }
  // Reading order (row, then column): the phone's single column and the keyboard follow it.
  const ordered = widgets
    .map((widget, i) => ({ widget, i }))
    .sort((a, b) => a.widget.y - b.widget.y || a.widget.x - b.widget.x || a.i - b.i);
  return (
    <div class={`grid${editing ? ' editing' : ''}`} data-testid="grid">
      {ordered.map(({ widget, i }) => (
        <div
          key={widget.id}
          class="cell"
          data-cell={widget.id}
          style={{
            gridColumn: `${widget.x + 1} / span ${Math.min(widget.w, COLUMNS)}`,
            gridRow: `${widget.y + 1} / span ${widget.h}`,
          }}
        >
          {editing && onChange && onEdit && (
            <CellTools
              widget={widget}
              onChange={(w) => onChange(i, w)}
              onEdit={() => onEdit(i)}
              onRemove={() => onChange(i, null)}
            />
          )}
          <WidgetView widget={widget} ctx={ctx} error={error} loading={loading} />
          {!editing && <FiringFlags widget={widget} ctx={ctx} />}
        </div>
      ))}
    </div>
  );
}

/** A small badge per firing monitor watching one of the widget's paths; it links to the monitor. */
function FiringFlags({ widget, ctx }: { widget: WidgetConfig; ctx: WidgetContext }) {
  const firing = monitorsOfWidget(widget, ctx.monitors).filter((m) => m.firing);
  if (!firing.length) return null;
  return (
    <div class="monitor-flags">
      {firing.map((m) => (
        <Link key={m.id} class="monitor-flag" href={`/monitors/${m.id}`} title={`${m.name} is firing`}>
          <span aria-hidden="true">●</span> firing<span class="visually-hidden">: {m.name}</span>
        </Link>
      ))}
    </div>
  );
}
