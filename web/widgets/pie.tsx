// Pie and donut as a small SVG of our own: one path per slice in the series palette (var()), the
// total in a donut's hole, and a legend with each slice's value and share.
import { seriesColorVar } from './colors';
import { sliceAngles } from './data/items';
import { formatCompact, formatExact, formatShare } from './data/format';
import type { Item } from './data/list';

const R = 50;

function arcPath([start, end]: [number, number], inner: number): string {
  if (end - start >= Math.PI * 2 - 1e-9) end = start + Math.PI * 2 - 1e-6; // a full circle still draws
  const pt = (r: number, a: number) =>
    `${(R + r * Math.sin(a)).toFixed(3)} ${(R - r * Math.cos(a)).toFixed(3)}`;
  const large = end - start > Math.PI ? 1 : 0;
  const outer = `M ${pt(R, start)} A ${R} ${R} 0 ${large} 1 ${pt(R, end)}`;
  if (inner <= 0) return `${outer} L ${R} ${R} Z`;
  return `${outer} L ${pt(inner, end)} A ${inner} ${inner} 0 ${large} 0 ${pt(inner, start)} Z`;
}

interface PieProps {
  items: Array<Item & { color?: string | null }>;
  donut: boolean;
}

export function Pie({ items, donut }: PieProps) {
  const total = items.reduce((s, i) => s + Math.max(0, i.value), 0);
  const angles = sliceAngles(items.map((i) => i.value));
  return (
    <div class="pie">
      <svg
        viewBox="0 0 100 100"
        class="pie__chart"
        role="img"
        aria-label={`${donut ? 'Donut' : 'Pie'} chart, total ${formatExact(total)}`}
      >
        {items.map((item, i) =>
          item.value > 0 ? (
            <path
              key={item.name}
              class="pie__slice"
              d={arcPath(angles[i]!, donut ? R * 0.62 : 0)}
              fill={seriesColorVar(i, item.color ?? null)}
              data-name={item.name}
              data-value={item.value}
            >
              <title>{`${item.name}: ${formatExact(item.value)} (${((item.value / total) * 100).toFixed(1)} %)`}</title>
            </path>
          ) : null,
        )}
        {donut && (
          <text x={R} y={R} class="pie__total" text-anchor="middle" dominant-baseline="central">
            {formatCompact(total)}
          </text>
        )}
      </svg>
      <ul class="pie__legend">
        {items.map((item, i) => (
          <li key={item.name}>
            <i style={{ background: seriesColorVar(i, item.color ?? null) }} />
            <span class="pie__name" title={item.name}>
              {item.name}
            </span>
            <span class="num" title={formatExact(item.value)}>
              {formatCompact(item.value)}
            </span>
            <span class="num pie__share">{formatShare(item.value, total)}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
