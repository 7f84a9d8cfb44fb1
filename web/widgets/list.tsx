// list: the top items of a wildcard path summed over the range, sorted (desc, asc, alpha,
// alpha_desc) and cut to `limit`, each with a bar for its share of the largest.
import { useMemo } from 'preact/hooks';
import { Frame } from './frame';
import { drawable } from './common';
import { widgetTotals } from './data/series';
import { itemsOf } from './data/items';
import { rankItems, toSort } from './data/list';
import { Bars } from './bars';
import type { WidgetViewProps } from './types';

export function ListWidget({ widget, ctx }: WidgetViewProps) {
  const data = useMemo(() => widgetTotals(widget, ctx.series), [widget, ctx.series]);
  const { state, entries, message, paths } = drawable(data, (e) => e.values[0] !== null);
  const all = itemsOf(entries);
  const items = rankItems(all, toSort(widget.sort), widget.limit);
  const meta = items.length < all.length ? `top ${items.length} of ${all.length}` : undefined;
  return (
    <Frame widget={widget} state={state} message={message} paths={paths} meta={meta}>
      <Bars items={items} single />
    </Frame>
  );
}
