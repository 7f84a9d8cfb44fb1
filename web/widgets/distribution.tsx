// distribution: a histogram. The path names a map whose children are buckets (Trifle::Stats
// designators write them: "10", "20", "50+"); each child is summed over the range and drawn as a
// column, buckets in numeric order. `designators.horizontal` (linear or custom) lists the buckets,
// so empty ones show as zero. Several rows draw side by side in each bucket.
import { useMemo } from 'preact/hooks';
import { Frame } from './frame';
import { drawable } from './common';
import { widgetTotals } from './data/series';
import { bucketLabels, designatorLabels } from './data/buckets';
import { formatCompact, formatExact } from './data/format';
import { seriesColorVar } from './colors';
import type { Entry } from './data/rows';
import type { WidgetViewProps } from './types';

interface Histogram {
  labels: string[];
  groups: Array<{ name: string; color: string | null; values: Map<string, number> }>;
  max: number;
}

// One group per row: a row's entries are its buckets (the last path segment names the bucket).
function histogram(widget: Record<string, unknown>, entries: Entry[], rowOf: Map<Entry, string>): Histogram {
  const groups = new Map<string, Histogram['groups'][number]>();
  for (const e of entries) {
    const group = rowOf.get(e) ?? '';
    if (!groups.has(group)) groups.set(group, { name: group, color: e.color, values: new Map() });
    const bucket = (e.binding || e.source).split('.').pop()!;
    const values = groups.get(group)!.values;
    values.set(bucket, (values.get(bucket) ?? 0) + (e.values[0] ?? 0));
  }
  const designators = (widget.designators ?? {}) as Record<string, unknown>;
  const labels = bucketLabels(
    [...groups.values()].flatMap((g) => [...g.values.keys()]),
    designatorLabels(designators.horizontal),
  );
  const max = Math.max(0, ...[...groups.values()].flatMap((g) => [...g.values.values()]));
  return { labels, groups: [...groups.values()], max };
}

export function DistributionWidget({ widget, ctx }: WidgetViewProps) {
  const data = useMemo(() => widgetTotals(widget, ctx.series), [widget, ctx.series]);
  const { state, entries, message, paths } = drawable(data, (e) => e.values[0] !== null);
  const rowOf = new Map<Entry, string>();
  for (const r of data.resolved)
    for (const e of r.entries) rowOf.set(e, r.row.label || r.row.path || r.row.expression);
  const h = histogram(widget, entries, rowOf);
  // Up to 12 bucket labels; past that every n-th, so they never run together.
  const labelEvery = Math.max(1, Math.ceil(h.labels.length / 12));
  return (
    <Frame widget={widget} state={state} message={message} paths={paths}>
      <div class="histogram" role="img" aria-label={`Histogram of ${h.groups.map((g) => g.name).join(', ')}`}>
        <div class="histogram__plot">
          {h.labels.map((label) => (
            <div key={label} class="histogram__bucket" data-bucket={label}>
              {h.groups.map((g, gi) => {
                const v = g.values.get(label) ?? 0;
                return (
                  <span
                    key={g.name}
                    class="histogram__bar"
                    data-value={v}
                    title={`${g.name} · ${label}: ${formatExact(v)}`}
                    style={{
                      height: `${h.max > 0 ? (v / h.max) * 100 : 0}%`,
                      background: seriesColorVar(gi, g.color),
                    }}
                  />
                );
              })}
            </div>
          ))}
        </div>
        <div class="histogram__axis">
          {h.labels.map((label, i) => (
            <span key={label}>{i % labelEvery === 0 ? label : ''}</span>
          ))}
        </div>
        <div class="histogram__scale num">max {formatCompact(h.max)}</div>
      </div>
      {h.groups.length > 1 && (
        <ul class="pie__legend histogram__legend">
          {h.groups.map((g, i) => (
            <li key={g.name}>
              <i style={{ background: seriesColorVar(i, g.color) }} />
              <span>{g.name}</span>
            </li>
          ))}
        </ul>
      )}
    </Frame>
  );
}
