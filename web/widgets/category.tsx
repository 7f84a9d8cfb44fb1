// category: a map path's children (`country.*`, or `country`) summed over the range, as bars,
// a pie or a donut. Pies fold everything past the seventh slice into "Other".
import { useMemo } from 'preact/hooks';
import { Frame } from './frame';
import { drawable } from './common';
import { widgetTotals } from './data/series';
import { foldSmall, itemsOf } from './data/items';
import { rankItems } from './data/list';
import { Bars } from './bars';
import { Pie } from './pie';
import type { WidgetViewProps } from './types';

const MAX_BARS = 100;

export function CategoryWidget({ widget, ctx }: WidgetViewProps) {
  const data = useMemo(() => widgetTotals(widget, ctx.series), [widget, ctx.series]);
  const { state, entries, message, paths } = drawable(data, (e) => (e.values[0] ?? 0) !== 0);
  const ranked = rankItems(
    itemsOf(entries).map((i) => ({ ...i, color: i.entry.color })),
    'desc',
  );
  const items = ranked.slice(0, MAX_BARS);
  const type = widget.chart_type === 'pie' || widget.chart_type === 'donut' ? widget.chart_type : 'bar';
  return (
    <Frame
      widget={widget}
      state={state}
      message={message}
      paths={paths}
      meta={type === 'bar' && ranked.length > MAX_BARS ? `top ${MAX_BARS} of ${ranked.length}` : undefined}
    >
      {type === 'bar' ? <Bars items={items} /> : <Pie items={foldSmall(items, 8)} donut={type === 'donut'} />}
    </Frame>
  );
}
