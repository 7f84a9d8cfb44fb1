// The preview of a monitor (POST /api/v1/monitors/preview): its data over the window drawn with the
// dashboards' time chart, the rule's threshold lines or band, a marker where it would have fired,
// and the sentence saying how often ("would have fired 3 times in the last 7 days").
import { useEffect, useMemo, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { useTheme } from '../lib/theme';
import { instanceName, type Preview } from '../lib/monitors';
import { buildOptions, chartData, type ChartOverlay, type ChartSpec } from '../widgets/timeseries-chart';
import { granularityMs } from '../widgets/data/time';
import type { Entry } from '../widgets/data/rows';
import { seriesColorVar } from '../widgets/colors';

/** More instances than this are not drawn in the preview (the first ones are). */
const MAX_SERIES = 12;

export const PREVIEW_DAYS = 7;

/** The sentence above the chart, over the window the preview asked for (the last 7 days). */
export function previewSentence(p: Preview): string {
  const n = p.fired_count;
  return `would have fired ${n === 1 ? 'once' : `${n} times`} in the last ${PREVIEW_DAYS} days`;
}

/** Every series (and band) on one time axis: the union of their bucket starts. */
function aligned(preview: Preview) {
  const series = preview.series.slice(0, MAX_SERIES);
  const at = [...new Set(series.flatMap((s) => s.at))].sort((a, b) => a - b);
  const index = new Map(at.map((ms, i) => [ms, i]));
  const spread = (times: number[], values: Array<number | null> | undefined) => {
    const out: Array<number | null> = at.map(() => null);
    times.forEach((ms, i) => {
      const j = index.get(ms);
      if (j !== undefined) out[j] = values?.[i] ?? null;
    });
    return out;
  };
  const entries: Entry[] = series.map((s) => ({
    binding: '',
    name: instanceName(s.labels, s.key) || s.key,
    source: s.key,
    values: spread(s.at, s.values),
    color: null,
  }));
  const first = series[0]?.at ?? [];
  const rule = preview.rules[0];
  const band =
    rule && (rule.bands.upper || rule.bands.lower)
      ? {
          upper: rule.bands.upper ? spread(first, rule.bands.upper) : undefined,
          lower: rule.bands.lower ? spread(first, rule.bands.lower) : undefined,
        }
      : undefined;
  const marks = preview.rules.flatMap((r) => r.fired_at);
  return { at, entries, band, marks, cut: preview.series.length - series.length };
}

export function PreviewChart({
  preview,
  lines,
  granularity,
  timeZone,
  label,
}: {
  preview: Preview;
  lines: { value: number; label: string }[];
  granularity: string;
  timeZone: string;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [, theme] = useTheme();
  const data = useMemo(() => aligned(preview), [preview]);
  const spec = useMemo((): ChartSpec | null => {
    if (data.at.length === 0) return null;
    const values = data.entries.map((e) => e.values);
    const at = data.at;
    // A threshold's or a range's own lines say what its constant band would: one is drawn, not both.
    const overlay: ChartOverlay = { lines, band: lines.length ? undefined : data.band, marks: data.marks };
    return {
      type: 'line',
      stacked: false,
      normalized: false,
      columns: { shown: data.entries, plotted: values, raw: values },
      slots: data.entries.map((_, i) => i),
      at,
      current: -1,
      step:
        at.length > 1 ? at[at.length - 1]! - at[at.length - 2]! : (granularityMs(granularity) ?? 3_600_000),
      ctx: {
        series: { at: [], atText: [], values: [] },
        previous: null,
        range: { from: at[0]!, to: at[at.length - 1]!, granularity },
        timeZone,
        now: Date.now(),
        theme,
        cursorSyncKey: 'monitor-preview',
      },
      yLabel: '',
      overlay,
    };
  }, [data, lines, granularity, timeZone, theme]);
  useEffect(() => {
    const el = box.current;
    if (!el || !spec) return;
    const size = () => ({ width: Math.max(120, el.clientWidth), height: Math.max(80, el.clientHeight) });
    const chart = new uPlot(buildOptions(el, spec, size()), chartData(spec), el);
    const observer = new ResizeObserver(() => chart.setSize(size()));
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [spec]);
  if (!spec) return <p class="muted preview__empty">No data for this key and path in the window.</p>;
  return (
    <>
      <div
        class="preview__plot"
        ref={box}
        role="img"
        aria-label={`${label}; ${previewSentence(preview)}`}
        data-fired={preview.fired_count}
      />
      {data.entries.length > 1 && (
        <ul class="legend preview__legend" aria-label="Instances">
          {data.entries.map((e, i) => (
            <li key={e.source} class="legend__item">
              <i style={{ background: seriesColorVar(i) }} />
              <span class="legend__name">{e.name}</span>
            </li>
          ))}
          {data.cut > 0 && <li class="muted">and {data.cut} more</li>}
        </ul>
      )}
    </>
  );
}
