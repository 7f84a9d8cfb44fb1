// timeseries: rows over time with uPlot (line, area, bar, dots; stacked; normalized), a legend
// whose buttons hide and show series, and a chart rebuilt on resize, data and theme changes.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { Frame } from './frame';
import { drawable, flag } from './common';
import { widgetTimeline } from './data/series';
import { largest } from './data/items';
import { chartColumns, entryKey } from './data/chart';
import { shortNames } from './data/names';
import { currentBucketIndex, granularityMs } from './data/time';
import { seriesColorVar } from './colors';
import { monitorOverlay } from './monitor-marks';
import { buildOptions, chartData, type ChartSpec, type ChartType } from './timeseries-chart';
import type { Entry } from './data/rows';
import { formatExact } from './data/format';
import { toZoneInput } from '../lib/zone';
import type { WidgetViewProps } from './types';

const CHART_TYPES: ChartType[] = ['line', 'area', 'bar', 'dots'];
// More lines than this are unreadable and slow to draw; the largest are kept.
const MAX_SERIES = 40;

export function TimeseriesWidget({ widget, ctx }: WidgetViewProps) {
  const data = useMemo(() => widgetTimeline(widget, ctx.series), [widget, ctx.series]);
  const { state, entries: all, message, paths } = drawable(data);
  // Series sharing a dotted prefix are named by their distinct part; the prefix is shown once.
  const { entries, total, prefix } = useMemo(() => {
    const { kept, total } = largest(all, MAX_SERIES);
    return { ...shortNames(kept), total };
  }, [data]);
  const [hidden, setHidden] = useState<ReadonlySet<string>>(new Set());
  const toggle = (key: string) => {
    const next = new Set(hidden);
    if (!next.delete(key)) next.add(key);
    setHidden(next);
  };
  return (
    <Frame
      widget={widget}
      state={state}
      message={message}
      paths={paths}
      meta={seriesMeta(prefix, total > entries.length ? `largest ${entries.length} of ${total} series` : '')}
    >
      <div class="ts">
        <Chart widget={widget} ctx={ctx} entries={entries} hidden={hidden} prefix={prefix} />
        {flag(widget.legend, true) && <Legend entries={entries} hidden={hidden} onToggle={toggle} />}
      </div>
    </Frame>
  );
}

interface ChartProps extends Pick<WidgetViewProps, 'widget' | 'ctx'> {
  entries: Entry[];
  hidden: ReadonlySet<string>;
  prefix: string;
}

/** The shared path prefix of the series (once, in the head) and a note when series were cut. */
function seriesMeta(prefix: string, cut: string) {
  if (!prefix && !cut) return undefined;
  return (
    <>
      {prefix && (
        <code class="widget__prefix" title={`Series under ${prefix}`}>
          {prefix}*
        </code>
      )}
      {prefix && cut && ' · '}
      {cut}
    </>
  );
}

function Chart({ widget, ctx, entries, hidden, prefix }: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const spec = useMemo(() => chartSpec(widget, ctx, entries, hidden), [widget, ctx, entries, hidden]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const chart = new uPlot(buildOptions(el, spec, measure(el)), chartData(spec), el);
    const observer = new ResizeObserver(() => chart.setSize(measure(el)));
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [spec, ctx.theme]);
  const names = spec.columns.shown.map((e) => e.name).join(', ');
  const label = `${spec.type} chart of ${names ? `${prefix}${prefix ? ' ' : ''}${names}` : 'no series'}, ${rangeText(ctx)}${extremes(spec.columns.shown)}; drag across it to zoom the dashboard`;
  return (
    <div
      class="ts__plot"
      ref={box}
      role="img"
      aria-label={label}
      data-series-count={spec.columns.shown.length}
      data-monitor-lines={spec.overlay?.lines?.length || undefined}
    />
  );
}

/** The range in the source's zone and the bucket size, for the chart's text alternative. */
function rangeText(ctx: WidgetViewProps['ctx']): string {
  const wall = (ms: number) => toZoneInput(ms, ctx.timeZone).replace('T', ' ');
  return `${wall(ctx.range.from)} to ${wall(ctx.range.to)} (${ctx.timeZone}) by ${ctx.range.granularity}`;
}

/** The lowest and highest value of the first few series (a screen reader's summary of the lines). */
function extremes(entries: readonly Entry[]): string {
  const parts = entries.slice(0, 5).flatMap((e) => {
    const values = e.values.filter((v): v is number => v !== null && Number.isFinite(v));
    if (values.length === 0) return [];
    return [`${e.name} from ${formatExact(Math.min(...values))} to ${formatExact(Math.max(...values))}`];
  });
  return parts.length ? `; ${parts.join('; ')}` : '';
}

const measure = (el: HTMLElement) => ({
  width: Math.max(120, el.clientWidth),
  height: Math.max(40, el.clientHeight),
});

function chartSpec(
  widget: WidgetViewProps['widget'],
  ctx: WidgetViewProps['ctx'],
  entries: Entry[],
  hidden: ReadonlySet<string>,
): ChartSpec {
  const type = CHART_TYPES.find((t) => t === widget.chart_type) ?? 'line';
  const stacked = flag(widget.stacked);
  const normalized = flag(widget.normalized);
  const columns = chartColumns(entries, hidden, { stacked, normalized });
  const at = ctx.series.at;
  const lastGap = at.length > 1 ? at[at.length - 1]! - at[at.length - 2]! : null;
  return {
    type,
    stacked,
    normalized,
    columns,
    slots: columns.shown.map((e) => entries.indexOf(e)),
    at,
    current: currentBucketIndex(at, ctx.now, ctx.range.granularity),
    step: lastGap ?? granularityMs(ctx.range.granularity) ?? 3_600_000,
    ctx,
    yLabel: typeof widget.y_label === 'string' ? widget.y_label : '',
    overlay: normalized
      ? undefined
      : monitorOverlay(
          ctx.monitors,
          columns.shown.map((e) => e.source),
        ),
  };
}

interface LegendProps {
  entries: Entry[];
  hidden: ReadonlySet<string>;
  onToggle: (key: string) => void;
}

function Legend({ entries, hidden, onToggle }: LegendProps) {
  return (
    <ul class="legend" aria-label="Series">
      {entries.map((entry, i) => {
        const key = entryKey(entry);
        const shown = !hidden.has(key);
        return (
          <li key={key}>
            <button
              type="button"
              class="legend__item"
              aria-pressed={shown ? 'true' : 'false'}
              onClick={() => onToggle(key)}
              title={`${shown ? 'Hide' : 'Show'} ${entry.source === entry.name ? entry.name : `${entry.name} (${entry.source})`}`}
              data-source={entry.source}
            >
              <i style={{ background: seriesColorVar(i, entry.color) }} />
              <span class="legend__name">{entry.name}</span>
            </button>
          </li>
        );
      })}
    </ul>
  );
}
