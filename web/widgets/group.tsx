// group: its `children` widgets in a nested 12-column grid, each placed by its own x, y, w, h.
// Children get the same data, loading and error props as the group.
import type { WidgetConfig, WidgetViewProps } from './types';
import { WidgetView } from './index';

const num = (v: unknown, fallback: number) =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : fallback;

export function GroupWidget({ widget, ctx, error, loading }: WidgetViewProps) {
  const children = (Array.isArray(widget.children) ? widget.children : []).filter(
    (c): c is WidgetConfig =>
      typeof c === 'object' && c !== null && typeof (c as WidgetConfig).id === 'string',
  );
  const title = typeof widget.title === 'string' ? widget.title : '';
  return (
    <section
      class="widget widget--group"
      data-widget-id={widget.id}
      data-widget-type="group"
      data-state={children.length ? 'ready' : 'empty'}
      aria-label={title || undefined}
    >
      {title && (
        <header class="widget__head">
          <h3 class="widget__title">{title}</h3>
        </header>
      )}
      {children.length === 0 ? (
        <div class="widget__notice">
          <strong>This group is empty</strong>
          <span>Add widgets to its children.</span>
        </div>
      ) : (
        <div class="widget-group__grid">
          {children.map((child) => (
            <div
              key={child.id}
              class="widget-group__cell"
              style={{
                gridColumn: `${num(child.x, 0) + 1} / span ${Math.max(1, num(child.w, 3))}`,
                gridRow: `${num(child.y, 0) + 1} / span ${Math.max(1, num(child.h, 2))}`,
              }}
            >
              <WidgetView widget={child} ctx={ctx} error={error ?? null} loading={loading ?? false} />
            </div>
          ))}
        </div>
      )}
    </section>
  );
}
