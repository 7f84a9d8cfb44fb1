// Test-only page (test/browser/widgets.test.ts bundles it; the interface never imports it): renders any list of widgets with WidgetView from series data the test injects
// (window.renderWidgets), and records the zoom requests a chart makes (window.zoomCalls).
import { render } from 'preact';
import { WidgetView } from '../index';
import type { SeriesData, WidgetConfig, WidgetContext } from '../types';
import './harness.css';

interface RawSeries {
  at: string[];
  values: Record<string, unknown>[];
}

export interface HarnessConfig {
  series: RawSeries;
  previous: RawSeries | null;
  widgets: WidgetConfig[];
  from: number;
  to: number;
  granularity: string;
  timeZone: string;
  now: number;
  theme: 'light' | 'dark';
  loading?: boolean;
  error?: string | null;
}

const parse = (raw: RawSeries): SeriesData => ({
  at: raw.at.map((t) => Date.parse(t)),
  atText: raw.at,
  values: raw.values,
});

declare global {
  interface Window {
    renderWidgets(config: HarnessConfig): void;
    zoomCalls: Array<[number, number]>;
  }
}

window.zoomCalls = [];

window.renderWidgets = (config) => {
  document.documentElement.dataset.theme = config.theme;
  const ctx: WidgetContext = {
    series: parse(config.series),
    previous: config.previous ? parse(config.previous) : null,
    range: { from: config.from, to: config.to, granularity: config.granularity },
    timeZone: config.timeZone,
    now: config.now,
    theme: config.theme,
    onZoom: (from, to) => window.zoomCalls.push([from, to]),
    cursorSyncKey: 'harness',
  };
  const root = document.getElementById('root')!;
  render(
    <main class="harness-grid">
      {config.widgets.map((w) => (
        <div
          key={w.id}
          style={{ gridColumn: `${w.x + 1} / span ${w.w}`, gridRow: `${w.y + 1} / span ${w.h}` }}
        >
          <WidgetView widget={w} ctx={ctx} loading={config.loading ?? false} error={config.error ?? null} />
        </div>
      ))}
    </main>,
    root,
  );
};
