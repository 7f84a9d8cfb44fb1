// table: one row per path (or resolved series row), one column per bucket, oldest first and newest
// last; the view starts scrolled to the newest buckets. Exact values in tabular figures.
import { useEffect, useMemo, useRef } from 'preact/hooks';
import { Frame } from './frame';
import { drawable } from './common';
import { widgetTimeline } from './data/series';
import { largest } from './data/items';
import { shortNames } from './data/names';
import { formatExact } from './data/format';
import { currentBucketIndex, formatBucket, formatBucketShort } from './data/time';
import { seriesColorVar } from './colors';
import type { WidgetViewProps } from './types';

/**
 * The newest buckets a table shows. A table of 2,000 columns is not read column by column, and laying
 * it out held the main thread for seconds; the chart widgets show the whole range.
 */
export const TABLE_MAX_COLUMNS = 400;

export function TableWidget({ widget, ctx }: WidgetViewProps) {
  const data = useMemo(() => widgetTimeline(widget, ctx.series), [widget, ctx.series]);
  const { state, entries: all, message, paths } = drawable(data);
  const { entries, total, prefix } = useMemo(() => {
    const { kept, total } = largest(all, 100);
    return { ...shortNames(kept), total };
  }, [data]);
  const scroller = useRef<HTMLDivElement>(null);
  // After the page's first layout, in a frame of its own: measuring the columns inside the render
  // forced a second layout of the whole dashboard into its longest task.
  useEffect(() => {
    const frame = requestAnimationFrame(() => {
      const el = scroller.current;
      if (el) showNewest(el);
    });
    return () => cancelAnimationFrame(frame);
  }, [entries.length, ctx.series]);
  const first = Math.max(0, ctx.series.at.length - TABLE_MAX_COLUMNS);
  const at = first > 0 ? ctx.series.at.slice(first) : ctx.series.at;
  const current = currentBucketIndex(at, ctx.now, ctx.range.granularity);
  const rowsNote = total > entries.length ? `largest ${entries.length} of ${total} rows` : null;
  const columnsNote = first > 0 ? `newest ${at.length} of ${ctx.series.at.length} buckets` : null;
  return (
    <Frame
      widget={widget}
      state={state}
      message={message}
      paths={paths}
      meta={[rowsNote, columnsNote].filter(Boolean).join(' · ') || undefined}
    >
      <div class="table-scroll" ref={scroller} tabIndex={0} aria-label="Values by bucket, scrolls sideways">
        <table class="data-table">
          <thead>
            <tr>
              <th scope="col" class="data-table__path" title={prefix ? `Paths under ${prefix}` : undefined}>
                {prefix ? <code>{prefix}*</code> : 'Path'}
              </th>
              {at.map((ms, i) => (
                <th
                  key={ms}
                  scope="col"
                  title={formatBucket(ms, ctx.timeZone, ctx.range.granularity)}
                  class={i === current ? 'is-current' : undefined}
                >
                  {formatBucketShort(ms, ctx.timeZone, ctx.range.granularity)}
                </th>
              ))}
              <td class="data-table__pad" aria-hidden="true" />
            </tr>
          </thead>
          <tbody>
            {entries.map((entry, r) => (
              <tr key={`${entry.name}|${entry.source}`}>
                <th scope="row" class="data-table__path" title={entry.source}>
                  <i style={{ background: seriesColorVar(r, entry.color) }} />
                  {entry.name}
                </th>
                {(first > 0 ? entry.values.slice(first) : entry.values).map((v, i) => (
                  <td key={i} class={i === current ? 'is-current' : undefined}>
                    {formatExact(v)}
                  </td>
                ))}
                <td class="data-table__pad" aria-hidden="true" />
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Frame>
  );
}

/**
 * Scrolls to the newest buckets so that no number sits half under the sticky path column: the
 * first column shown starts at that column's right edge, and an end spacer gives the room for it.
 * The same edge is the scroll-snap padding, so a sideways scroll also rests on whole columns.
 */
function showNewest(el: HTMLDivElement): void {
  const table = el.querySelector('table');
  const head = table?.querySelector('thead tr');
  if (!table || !head) return;
  const cells = [...head.children] as HTMLElement[];
  const sticky = cells[0]!;
  const columns = cells.slice(1, -1);
  table.style.setProperty('--pad', '0px');
  const width = sticky.offsetWidth;
  el.style.setProperty('--sticky-w', `${width}px`);
  const last = columns[columns.length - 1];
  if (!last) return;
  const end = last.offsetLeft + last.offsetWidth;
  const room = el.clientWidth - width;
  const first = columns.find((c) => end - c.offsetLeft <= room) ?? last;
  const left = Math.max(0, first.offsetLeft - width);
  const pad = Math.max(0, left + el.clientWidth - end);
  table.style.setProperty('--pad', `${left > 0 ? pad : 0}px`);
  el.scrollLeft = left;
}
