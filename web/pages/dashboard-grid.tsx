// The 12-column grid of a dashboard (one column under 700 px, see app.css): each cell is the
// widgets' WidgetView with the shared series. In edit mode each cell can be dragged by its handle and
// resized by its corner (pointer: mouse, pen or touch), or moved and resized with its buttons (the
// keyboard's way); every change goes through web/lib/grid-layout.ts, so widgets never overlap and
// float up.
import { WidgetView } from '../widgets';
import type { WidgetConfig, WidgetContext } from '../widgets/types';
import { COLUMNS, type Box } from '../lib/grid-layout';

export { COLUMNS };

type Place = (box: Box) => void;

/** Column width and row pitch of the grid element, in pixels (CSS decides both). */
function gridMetrics(grid: HTMLElement): { col: number; row: number } {
  const style = getComputedStyle(grid);
  const gapX = parseFloat(style.columnGap) || 0;
  const gapY = parseFloat(style.rowGap) || 0;
  const rowHeight = parseFloat(style.gridAutoRows) || 84;
  return { col: (grid.clientWidth + gapX) / COLUMNS, row: rowHeight + gapY };
}

/**
 * A pointer drag that turns movement into whole grid steps from the widget's box at the start:
 * `mode` move changes x/y, resize changes w/h. Placed only when the step changes.
 */
function startDrag(e: PointerEvent, mode: 'move' | 'resize', widget: WidgetConfig, onPlace: Place): void {
  const handle = e.currentTarget as HTMLElement;
  const grid = handle.closest<HTMLElement>('.grid');
  if (!grid || e.button !== 0) return;
  e.preventDefault();
  const { col, row } = gridMetrics(grid);
  const start = { x: widget.x, y: widget.y, w: widget.w, h: widget.h };
  const [sx, sy] = [e.clientX, e.clientY];
  let last = '';
  handle.setPointerCapture(e.pointerId);
  grid.classList.add('dragging');
  const move = (ev: PointerEvent) => {
    const dx = Math.round((ev.clientX - sx) / col);
    const dy = Math.round((ev.clientY - sy) / row);
    const box =
      mode === 'move'
        ? { ...start, x: start.x + dx, y: start.y + dy }
        : { ...start, w: Math.max(1, start.w + dx), h: Math.max(1, start.h + dy) };
    const step = `${box.x},${box.y},${box.w},${box.h}`;
    if (step === last) return;
    last = step;
    onPlace(box);
  };
  const end = () => {
    handle.removeEventListener('pointermove', move);
    handle.removeEventListener('pointerup', end);
    handle.removeEventListener('pointercancel', end);
    grid.classList.remove('dragging');
  };
  handle.addEventListener('pointermove', move);
  handle.addEventListener('pointerup', end);
  handle.addEventListener('pointercancel', end);
}

function CellTools({
  widget,
  onPlace,
  onEdit,
  onDuplicate,
  onRemove,
}: {
  widget: WidgetConfig;
  onPlace: Place;
  onEdit: () => void;
  onDuplicate: () => void;
  onRemove: () => void;
}) {
  const name = widget.title || widget.id;
  const nudge = (delta: Partial<Record<'x' | 'y' | 'w' | 'h', number>>) => {
    const box = { x: widget.x, y: widget.y, w: widget.w, h: widget.h };
    for (const [k, d] of Object.entries(delta) as ['x' | 'y' | 'w' | 'h', number][]) box[k] += d;
    onPlace(box);
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
      <span
        class="drag-handle"
        title={`Drag to move ${name}`}
        aria-hidden="true"
        data-testid="drag-handle"
        onPointerDown={(e) => startDrag(e, 'move', widget, onPlace)}
      >
        ⠿
      </span>
      {tools.map(([label, aria, run]) => (
        // The accessible name starts with the visible label (voice control: "click W−").
        <button key={aria} type="button" aria-label={`${label} ${aria}`} title={aria} onClick={run}>
          {label}
        </button>
      ))}
      <button type="button" aria-label={`Edit ${name}`} onClick={onEdit}>
        Edit
      </button>
      <button type="button" aria-label={`Duplicate ${name}`} onClick={onDuplicate}>
        Duplicate
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
  /** a move or resize in edit mode (laid out by the editor: no overlaps, compacted) */
  onPlace?: (index: number, box: Box) => void;
  onDuplicate?: (index: number) => void;
  onEdit?: (index: number) => void;
}

export function DashboardGrid({
  widgets,
  ctx,
  loading,
  error,
  editing,
  onChange,
  onPlace,
  onDuplicate,
  onEdit,
}: GridProps) {
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
          {editing && onChange && onEdit && onPlace && onDuplicate && (
            <CellTools
              widget={widget}
              onPlace={(box) => onPlace(i, box)}
              onEdit={() => onEdit(i)}
              onDuplicate={() => onDuplicate(i)}
              onRemove={() => onChange(i, null)}
            />
          )}
          <WidgetView widget={widget} ctx={ctx} error={error} loading={loading} />
          {editing && onPlace && (
            <span
              class="resize-handle"
              title={`Drag to resize ${widget.title || widget.id}`}
              aria-hidden="true"
              data-testid="resize-handle"
              onPointerDown={(e) => startDrag(e, 'resize', widget, (box) => onPlace(i, box))}
            />
          )}
        </div>
      ))}
    </div>
  );
}
