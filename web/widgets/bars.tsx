// Horizontal bars for named totals (category `bar`, list): label, bar scaled to the largest value,
// exact value on hover and in tabular figures.
import { seriesColorVar } from './colors';
import { formatCompact, formatExact } from './data/format';
import type { Item } from './data/list';

interface BarsProps {
  items: Array<Item & { color?: string | null }>;
  /** one colour for all bars (list) or a palette colour per bar (category) */
  single?: boolean;
}

export function Bars({ items, single = false }: BarsProps) {
  const max = Math.max(0, ...items.map((i) => Math.abs(i.value)));
  return (
    <ul class="bars">
      {items.map((item, i) => (
        <li key={item.name} class="bars__row" data-name={item.name} data-value={item.value}>
          <span class="bars__name" title={item.name}>
            {item.name}
          </span>
          <span class="bars__track">
            <span
              class="bars__fill"
              style={{
                width: `${max > 0 ? (Math.abs(item.value) / max) * 100 : 0}%`,
                background: seriesColorVar(single ? 0 : i, item.color ?? null),
              }}
            />
          </span>
          <span class="bars__value num" title={formatExact(item.value)}>
            {formatCompact(item.value)}
          </span>
        </li>
      ))}
    </ul>
  );
}
