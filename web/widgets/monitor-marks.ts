// Monitors on a dashboard (SPEC 13): which widgets show a watched path, and what their chart draws
// (the rule's threshold lines, solid while the monitor fires). The shell reads the monitors once per
// dashboard load and hands the ones on the dashboard's key and source to the widgets in the context.
import { rowPaths, widgetRows } from './data/rows';
import type { ChartOverlay } from './timeseries-chart';
import type { WidgetConfig, WidgetMonitor } from './types';

/** The monitors watching one of the widget's paths. */
export function monitorsOfWidget(
  widget: WidgetConfig,
  monitors: readonly WidgetMonitor[] | undefined,
): WidgetMonitor[] {
  if (!monitors?.length) return [];
  const paths = new Set(rowPaths(widgetRows(widget)));
  return monitors.filter((m) => paths.has(m.path));
}

/** The lines a time chart draws for the monitors watching the concrete paths it plots. */
export function monitorOverlay(
  monitors: readonly WidgetMonitor[] | undefined,
  plotted: readonly string[],
): ChartOverlay | undefined {
  if (!monitors?.length) return undefined;
  const shown = new Set(plotted);
  const lines = monitors
    .filter((m) => shown.has(m.path))
    .flatMap((m) =>
      m.lines.map((l) => ({ value: l.value, label: `${m.name}: ${l.label}`, firing: m.firing })),
    );
  return lines.length ? { lines } : undefined;
}
