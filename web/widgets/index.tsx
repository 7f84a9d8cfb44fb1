// Placeholder renderer: shows a widget's title and raw data size until the real renderers land.
import type { WidgetViewProps, SeriesData } from './types';

export type { WidgetViewProps, WidgetConfig, WidgetContext, SeriesData, TimeRange } from './types';

export function WidgetView({ widget, ctx, error, loading }: WidgetViewProps) {
  const state = error ? 'error' : loading ? 'loading' : ctx.series.at.length ? 'ready' : 'empty';
  return (
    <section class="widget" data-widget-id={widget.id} data-widget-type={widget.type} data-state={state}>
      <h3>{widget.title ?? ''}</h3>
      <p>{error ?? `${ctx.series.at.length} buckets`}</p>
    </section>
  );
}

/** Sorted dot paths of every numeric leaf in the series (for path suggestions in the editor). */
export function collectPaths(series: SeriesData): string[] {
  const seen = new Set<string>();
  const walk = (value: unknown, prefix: string) => {
    if (typeof value === 'number') seen.add(prefix);
    else if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) walk(v, prefix ? `${prefix}.${k}` : k);
    }
  };
  for (const bucket of series.values) walk(bucket, '');
  return [...seen].sort();
}
