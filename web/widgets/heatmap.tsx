// heatmap: an SVG grid of cells coloured by value. Children that are maps themselves (Trifle's 3d
// distribution: x bucket → y bucket) make an x × y matrix summed over the range; plain children
// make rows against the time buckets. Colour mixes the first series colour into the panel colour
// (CSS color-mix), so the scale reads in light and dark themes alike.
import { useMemo } from 'preact/hooks';
import { Frame } from './frame';
import { drawable } from './common';
import { widgetTimeline, widgetTotals } from './data/series';
import { intensity, isMatrix, matrixGrid, timeGrid, type HeatmapGrid } from './data/heatmap';
import { formatCompact, formatExact } from './data/format';
import { formatBucket, formatBucketShort } from './data/time';
import { visibleEntries } from './data/rows';
import type { WidgetContext, WidgetViewProps } from './types';

function gridOf(widget: Record<string, unknown>, ctx: WidgetContext) {
  const totals = widgetTotals(widget, ctx.series);
  const shown = visibleEntries(totals.resolved).filter((e) => (e.values[0] ?? 0) !== 0);
  if (isMatrix(shown)) return { data: totals, grid: matrixGrid(shown), total: shown.length };
  const timeline = widgetTimeline(widget, ctx.series);
  const grid = timeGrid(
    visibleEntries(timeline.resolved).filter((e) => e.values.some((v) => v)),
    ctx.series.at,
  );
  return { data: timeline, grid, total: grid.total, perColumn: grid.perColumn };
}

const cellFill = (t: number) =>
  t <= 0
    ? 'var(--heat-empty, transparent)'
    : `color-mix(in srgb, var(--series-1, #0072b2) ${Math.round(12 + t * 88)}%, var(--panel, #fff))`;

export function HeatmapWidget({ widget, ctx }: WidgetViewProps) {
  const { data, grid, total, perColumn = 1 } = useMemo(() => gridOf(widget, ctx), [widget, ctx]);
  const ready = grid.yLabels.length > 0 && grid.max > 0;
  const { state, message, paths } = drawable(data);
  return (
    <Frame
      widget={widget}
      state={ready ? 'ready' : state === 'ready' ? 'empty' : state}
      message={message}
      paths={paths}
      meta={
        [
          grid.timeAxis && total > grid.yLabels.length ? `top ${grid.yLabels.length} of ${total}` : null,
          perColumn > 1 ? `${perColumn} buckets per column` : null,
        ]
          .filter(Boolean)
          .join(' · ') || undefined
      }
    >
      <div class="heatmap">
        <div class="heatmap__y">
          {grid.yLabels.map((y) => (
            <span key={y} title={y}>
              {y}
            </span>
          ))}
        </div>
        <Cells grid={grid} ctx={ctx} />
        <div class="heatmap__x">
          {xTicks(grid, ctx).map(([i, text]) => (
            <span key={i} style={{ left: `${((i + 0.5) / grid.xLabels.length) * 100}%` }}>
              {text}
            </span>
          ))}
        </div>
        <div class="heatmap__scale num">
          <span>0</span>
          <i />
          <span title={formatExact(grid.max)}>{formatCompact(grid.max)}</span>
        </div>
      </div>
    </Frame>
  );
}

function Cells({ grid, ctx }: { grid: HeatmapGrid; ctx: WidgetContext }) {
  const w = grid.xLabels.length;
  const h = grid.yLabels.length;
  const label = (x: number) =>
    grid.timeAxis
      ? formatBucket(Number(grid.xLabels[x]), ctx.timeZone, ctx.range.granularity)
      : grid.xLabels[x];
  return (
    <svg
      class="heatmap__cells"
      viewBox={`0 0 ${w} ${h}`}
      preserveAspectRatio="none"
      role="img"
      aria-label={`Heatmap, ${h} rows by ${w} columns, max ${formatExact(grid.max)}`}
    >
      {grid.cells.map((row, y) =>
        row.map((v, x) => (
          <rect
            key={`${x}.${y}`}
            x={x + 0.04}
            y={y + 0.04}
            width={0.92}
            height={0.92}
            rx={0.03}
            style={{ fill: cellFill(intensity(v, grid.max)) }}
            data-value={v}
          >
            <title>{`${grid.yLabels[y]} · ${label(x)}: ${formatExact(v)}`}</title>
          </rect>
        )),
      )}
    </svg>
  );
}

// At most ~8 x labels (~6 days), so they never collide. On a time axis of sub-day buckets spanning days, the
// labels sit on midnights and name the day; evenly spaced clock times (14:00, 12:00, 10:00 on
// successive days) read as time running backwards.
function xTicks(grid: HeatmapGrid, ctx: WidgetContext): Array<[number, string]> {
  const n = grid.xLabels.length;
  if (grid.timeAxis) {
    const all = grid.xLabels.map((raw, i): [number, string] => [
      i,
      formatBucketShort(Number(raw), ctx.timeZone, ctx.range.granularity),
    ]);
    const days = all.filter(([, text]) => !/^\d{2}:\d{2}(:\d{2})?$/.test(text));
    if (days.length >= 2 && days.length < n) {
      const k = Math.ceil(days.length / 6);
      return days.filter((_, j) => j % k === 0);
    }
  }
  const every = Math.max(1, Math.ceil(n / 8));
  const ticks: Array<[number, string]> = [];
  for (let i = 0; i < n; i += every) {
    const raw = grid.xLabels[i]!;
    ticks.push([
      i,
      grid.timeAxis ? formatBucketShort(Number(raw), ctx.timeZone, ctx.range.granularity) : raw,
    ]);
  }
  return ticks;
}
