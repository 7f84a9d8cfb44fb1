// uPlot options for a time chart: line, area, bar (grouped or stacked) and dots; axes in the
// source's zone with compact numbers; a shaded still-filling bucket; a read-out with exact values;
// drag to select a range, which is handed to the shell (onZoom) instead of zooming locally.
import uPlot from 'uplot';
import { resolveColor, seriesColorVar, token, withAlpha } from './colors';
import { formatCompact, formatExact } from './data/format';
import { formatBucket, formatTick } from './data/time';
import type { ChartColumns } from './data/chart';
import type { WidgetContext } from './types';

export type ChartType = 'line' | 'area' | 'bar' | 'dots';

export interface ChartSpec {
  type: ChartType;
  stacked: boolean;
  normalized: boolean;
  columns: ChartColumns;
  /** colour slot of each shown entry (its index among all entries, so hiding keeps colours) */
  slots: number[];
  /** bucket starts, epoch ms */
  at: number[];
  /** index of the still-filling bucket, or -1 */
  current: number;
  /** a bucket's length in ms (the last gap), for bar widths and the shaded bucket */
  step: number;
  ctx: WidgetContext;
  yLabel: string;
  /** a monitor's marks drawn over the data: its threshold lines, band and where it fired */
  overlay?: ChartOverlay;
}

export interface ChartOverlay {
  /** horizontal lines (a threshold, a range's ends); `firing` draws them solid */
  lines?: { value: number; label: string; firing?: boolean }[];
  /** per bucket (aligned with `at`): the band a value may move in; outside it the rule fires */
  band?: { upper?: Array<number | null>; lower?: Array<number | null> };
  /** bucket starts (ms) where the rule fired */
  marks?: number[];
}

const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

export function buildOptions(
  el: HTMLElement,
  spec: ChartSpec,
  size: { width: number; height: number },
): uPlot.Options {
  const muted = token(el, '--muted', '#6b7280');
  const grid = token(el, '--border', '#e5e7eb');
  const suffix = spec.normalized ? ' %' : '';
  const axis = {
    stroke: muted,
    font: FONT,
    grid: { stroke: grid, width: 1 },
    ticks: { stroke: grid, width: 1, size: 4 },
  };
  return {
    ...size,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), spec.ctx.timeZone),
    legend: { show: false },
    padding: [8, 18, 0, 0], // room for the last time label, centred on the right edge
    cursor: {
      // Only the cursor moves across charts: a drag (mousedown/up) stays in its chart, so one
      // drag makes one onZoom call, not one per synced chart.
      sync: {
        key: spec.ctx.cursorSyncKey,
        setSeries: false,
        filters: { pub: (type) => type !== 'mousedown' && type !== 'mouseup' && type !== 'dblclick' },
      },
      drag: { x: true, y: false, setScale: false },
      y: false, // a horizontal line means nothing on the synced charts
      points: { size: spec.type === 'bar' ? 0 : 6 },
    },
    scales: {
      x: { time: true, range: () => xRange(spec) },
      y: { range: (_u, min, max) => yRange(spec, min, max) },
    },
    axes: [
      // 28 px tall and ticks at least 64 px apart: labels like "25 Jan" never touch.
      {
        ...axis,
        size: 28,
        space: 64,
        values: (_u, splits, _ax, _space, incr) =>
          splits.map((s) => formatTick(s * 1000, incr * 1000, spec.ctx.timeZone)),
      },
      {
        ...axis,
        size: 52,
        label: spec.yLabel || undefined,
        labelFont: FONT,
        labelSize: spec.yLabel ? 16 : 0,
        values: (_u, splits) => splits.map((v) => formatCompact(v) + suffix),
      },
    ],
    series: [{}, ...spec.columns.shown.map((entry, i) => seriesOptions(el, spec, i, entry.name))],
    bands: spec.stacked ? stackBands(spec.columns.shown.length, el, spec) : [],
    hooks: {
      drawClear: [
        (u) => shadeCurrentBucket(u, spec, withAlpha(resolveColor(el, token(el, '--muted', '#6b7280')), 0.1)),
      ],
      setSelect: [(u) => zoomToSelection(u, spec.ctx)],
      ...(spec.overlay ? { draw: [(u: uPlot) => drawOverlay(u, spec.overlay!, el)] } : {}),
    },
    plugins: [readoutPlugin(spec)],
  };
}

/** uPlot's data: x in seconds, then the plotted columns. */
export function chartData(spec: ChartSpec): uPlot.AlignedData {
  return [spec.at.map((ms) => ms / 1000), ...spec.columns.plotted] as uPlot.AlignedData;
}

function xRange(spec: ChartSpec): uPlot.Range.MinMax {
  const first = spec.at[0]! / 1000;
  const last = spec.at[spec.at.length - 1]! / 1000;
  // Bars stand on their bucket [start, start + step); the axis then ends where the last bucket does.
  const end = spec.type === 'bar' ? last + spec.step / 1000 : last;
  return [first, end > first ? end : first + 1];
}

function yRange(spec: ChartSpec, min: number, max: number): uPlot.Range.MinMax {
  if (spec.normalized && spec.stacked) return [0, 100];
  // A monitor's lines and band stay in view even when the data is far from them.
  for (const v of overlayValues(spec.overlay)) {
    if (!(min <= v)) min = v;
    if (!(max >= v)) max = v;
  }
  const lo = Math.min(0, min);
  const hi = max > lo ? max : lo + 1;
  return [lo, hi + (hi - lo) * 0.08];
}

function seriesOptions(el: HTMLElement, spec: ChartSpec, i: number, label: string): uPlot.Series {
  const own = spec.columns.shown[i]!.color;
  const color = resolveColor(el, seriesColorVar(spec.slots[i]!, own));
  const base: uPlot.Series = { label, stroke: color, width: 1.5, spanGaps: false, points: { show: false } };
  switch (spec.type) {
    case 'area':
      return { ...base, fill: withAlpha(color, spec.stacked ? 0.55 : 0.18) };
    case 'dots':
      return {
        ...base,
        width: 0,
        paths: () => null,
        points: { show: true, size: 5, fill: color, stroke: color },
      };
    case 'bar':
      return { ...base, width: 0, fill: withAlpha(color, 0.85), paths: barPaths(spec, i) };
    default:
      return spec.stacked ? { ...base, fill: withAlpha(color, 0.4) } : base;
  }
}

// Unstacked bars of several series stand side by side inside their bucket; stacked bars (or one
// series) fill the bucket's width.
function barPaths(spec: ChartSpec, i: number): uPlot.Series.PathBuilder {
  const n = spec.columns.shown.length;
  if (spec.stacked || n === 1) return uPlot.paths.bars!({ align: 1, size: [0.8, Infinity, 1], gap: 1 });
  const width = ((spec.step / 1000) * 0.8) / n;
  return uPlot.paths.bars!({
    disp: {
      x0: {
        unit: 3,
        values: (u) => (u.data[0] as number[]).map((x) => x + (spec.step / 1000) * 0.1 + i * width),
      },
      size: { unit: 3, values: () => [width] },
    },
  });
}

// Stacked columns hold running totals; each band fills between a series and the one below it.
function stackBands(count: number, el: HTMLElement, spec: ChartSpec): uPlot.Band[] {
  const bands: uPlot.Band[] = [];
  for (let i = 2; i <= count; i++) {
    const color = resolveColor(el, seriesColorVar(spec.slots[i - 1]!, spec.columns.shown[i - 1]!.color));
    bands.push({ series: [i, i - 1], fill: withAlpha(color, spec.type === 'bar' ? 0.85 : 0.55) });
  }
  return bands;
}

function shadeCurrentBucket(u: uPlot, spec: ChartSpec, fill: string): void {
  if (spec.current < 0) return;
  const start = spec.at[spec.current]! / 1000;
  const from = spec.type === 'bar' ? start : start - spec.step / 2000;
  const left = Math.max(u.bbox.left, u.valToPos(from, 'x', true));
  const right = Math.min(u.bbox.left + u.bbox.width, u.valToPos(start + spec.step / 1000, 'x', true));
  if (right <= left) return;
  u.ctx.save();
  u.ctx.fillStyle = fill;
  u.ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
  u.ctx.restore();
}

function zoomToSelection(u: uPlot, ctx: WidgetContext): void {
  const { left, width } = u.select;
  if (width >= 4 && ctx.onZoom) {
    const from = Math.round(u.posToVal(left, 'x') * 1000);
    const to = Math.round(u.posToVal(left + width, 'x') * 1000);
    if (to > from) ctx.onZoom(from, to);
  }
  if (width > 0) u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
}

// The read-out follows the cursor and shows exact values, before stacking; only on the chart under
// the mouse (synced charts move their cursor line, not a read-out each).
function readoutPlugin(spec: ChartSpec): uPlot.Plugin {
  let box: HTMLDivElement;
  let hovered = false;
  return {
    hooks: {
      init: (u) => {
        box = document.createElement('div');
        box.className = 'ts-readout';
        box.setAttribute('role', 'status');
        box.hidden = true;
        u.over.appendChild(box);
        u.over.addEventListener('mouseenter', () => (hovered = true));
        u.over.addEventListener('mouseleave', () => {
          hovered = false;
          box.hidden = true;
        });
      },
      setCursor: (u) => {
        const idx = u.cursor.idx;
        if (
          !hovered ||
          idx === null ||
          idx === undefined ||
          u.cursor.left === undefined ||
          u.cursor.left < 0
        ) {
          box.hidden = true;
          return;
        }
        fillReadout(box, spec, idx);
        box.hidden = false;
        const x = u.cursor.left;
        const flip = x > u.over.clientWidth / 2;
        box.style.left = flip ? '' : `${x + 12}px`;
        box.style.right = flip ? `${u.over.clientWidth - x + 12}px` : '';
      },
    },
  };
}

function fillReadout(box: HTMLElement, spec: ChartSpec, idx: number): void {
  const { ctx, columns } = spec;
  const when = formatBucket(spec.at[idx]!, ctx.timeZone, ctx.range.granularity);
  box.replaceChildren();
  const head = document.createElement('div');
  head.className = 'ts-readout__time';
  head.textContent = idx === spec.current ? `${when} · still filling` : when;
  box.appendChild(head);
  columns.shown.forEach((entry, i) => {
    const row = document.createElement('div');
    row.className = 'ts-readout__row';
    const swatch = document.createElement('i');
    swatch.style.background = seriesColorVar(spec.slots[i]!, entry.color);
    const name = document.createElement('span');
    name.textContent = entry.name;
    const value = document.createElement('b');
    const raw = entry.values[idx] ?? null;
    value.textContent = spec.normalized
      ? `${formatExact(raw)} (${formatCompact(columns.raw[i]![idx] ?? null)} %)`
      : formatExact(raw);
    row.append(swatch, name, value);
    box.appendChild(row);
  });
}

function overlayValues(overlay: ChartOverlay | undefined): number[] {
  if (!overlay) return [];
  const out = (overlay.lines ?? []).map((l) => l.value);
  for (const side of [overlay.band?.upper, overlay.band?.lower])
    for (const v of side ?? []) if (v !== null && Number.isFinite(v)) out.push(v);
  return out;
}

// Drawn after the series: the band shaded with its edges dashed, threshold lines (dashed, solid
// while firing) with their label at the right end, and a marker on top of the plot where it fired.
function drawOverlay(u: uPlot, overlay: ChartOverlay, el: HTMLElement): void {
  const bad = resolveColor(el, token(el, '--bad', '#c0362c'));
  const warn = resolveColor(el, token(el, '--warn', '#b26a00'));
  const { left, top, width, height } = u.bbox;
  const ctx = u.ctx;
  const dpr = devicePixelRatio || 1;
  const xs = (u.data[0] as number[]) ?? [];
  const x = (i: number) => u.valToPos(xs[i]!, 'x', true);
  const y = (v: number) => u.valToPos(v, 'y', true);
  ctx.save();
  ctx.beginPath();
  ctx.rect(left, top, width, height);
  ctx.clip();
  const { upper, lower } = overlay.band ?? {};
  if (upper || lower) {
    // The shaded band between both edges where both exist.
    if (upper && lower) {
      ctx.fillStyle = withAlpha(warn, 0.12);
      for (let i = 0; i + 1 < xs.length; i++) {
        const [u0, u1, l0, l1] = [upper[i], upper[i + 1], lower[i], lower[i + 1]];
        if (u0 == null || u1 == null || l0 == null || l1 == null) continue;
        ctx.beginPath();
        ctx.moveTo(x(i), y(u0));
        ctx.lineTo(x(i + 1), y(u1));
        ctx.lineTo(x(i + 1), y(l1));
        ctx.lineTo(x(i), y(l0));
        ctx.closePath();
        ctx.fill();
      }
    }
    ctx.strokeStyle = warn;
    ctx.lineWidth = 1.25 * dpr;
    ctx.setLineDash([4 * dpr, 3 * dpr]);
    for (const edge of [upper, lower]) {
      if (!edge) continue;
      ctx.beginPath();
      let drawing = false;
      edge.forEach((v, i) => {
        if (v === null || v === undefined || i >= xs.length) return void (drawing = false);
        if (drawing) ctx.lineTo(x(i), y(v));
        else ctx.moveTo(x(i), y(v));
        drawing = true;
      });
      ctx.stroke();
    }
  }
  ctx.font = `${11 * dpr}px system-ui, sans-serif`;
  ctx.textAlign = 'right';
  for (const line of overlay.lines ?? []) {
    const py = Math.round(y(line.value)) + 0.5;
    ctx.strokeStyle = bad;
    ctx.lineWidth = (line.firing ? 2 : 1.25) * dpr;
    ctx.setLineDash(line.firing ? [] : [6 * dpr, 4 * dpr]);
    ctx.beginPath();
    ctx.moveTo(left, py);
    ctx.lineTo(left + width, py);
    ctx.stroke();
    ctx.fillStyle = bad;
    // The label above its line, or below it when the line runs along the top edge.
    const below = py - top < 14 * dpr;
    ctx.textBaseline = below ? 'top' : 'bottom';
    ctx.fillText(line.label, left + width - 4 * dpr, below ? py + 3 * dpr : py - 2 * dpr);
  }
  ctx.setLineDash([]);
  if (overlay.marks?.length) {
    const size = 5 * dpr;
    ctx.fillStyle = bad;
    ctx.strokeStyle = withAlpha(bad, 0.35);
    ctx.lineWidth = 1 * dpr;
    for (const ms of overlay.marks) {
      const px = u.valToPos(ms / 1000, 'x', true);
      if (px < left - 1 || px > left + width + 1) continue;
      ctx.beginPath();
      ctx.moveTo(px, top + size * 2);
      ctx.lineTo(px, top + height);
      ctx.stroke();
      // a small downward triangle at the top edge
      ctx.beginPath();
      ctx.moveTo(px - size, top);
      ctx.lineTo(px + size, top);
      ctx.lineTo(px, top + size * 1.6);
      ctx.closePath();
      ctx.fill();
    }
  }
  ctx.restore();
}
