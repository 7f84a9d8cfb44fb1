// text: a heading (`title`) and a `subtitle`, aligned left, center (default) or right. It needs no
// data, so it is ready even while the series loads.
import type { WidgetViewProps } from './types';

const ALIGN = new Set(['left', 'center', 'right']);

export function TextWidget({ widget }: WidgetViewProps) {
  const align = ALIGN.has(String(widget.alignment)) ? String(widget.alignment) : 'center';
  const title = typeof widget.title === 'string' ? widget.title : '';
  const subtitle = typeof widget.subtitle === 'string' ? widget.subtitle : '';
  return (
    <section
      class={`widget widget--text text--${align}`}
      data-widget-id={widget.id}
      data-widget-type="text"
      data-state="ready"
      aria-label={title || undefined}
    >
      <div class="text">
        {title && <h3 class="text__title">{title}</h3>}
        {subtitle && <p class="text__subtitle">{subtitle}</p>}
      </div>
    </section>
  );
}
