// A KPI's small trend line: an SVG polyline scaled to its box (no axes, no chart library).
interface SparklineProps {
  values: ReadonlyArray<number | null>;
  color: string;
}

export function Sparkline({ values, color }: SparklineProps) {
  const nums = values.map((v) => v ?? 0);
  if (nums.length < 2) return null;
  const min = Math.min(...nums);
  const max = Math.max(...nums);
  const span = max - min || 1;
  const points = nums.map(
    (v, i) => `${((i / (nums.length - 1)) * 100).toFixed(2)},${(28 - ((v - min) / span) * 26).toFixed(2)}`,
  );
  return (
    <svg
      class="sparkline"
      viewBox="0 0 100 30"
      preserveAspectRatio="none"
      role="img"
      aria-label="trend over the range"
    >
      <polygon points={`0,30 ${points.join(' ')} 100,30`} fill={color} fill-opacity="0.12" />
      <polyline
        points={points.join(' ')}
        fill="none"
        stroke={color}
        stroke-width="1.5"
        vector-effect="non-scaling-stroke"
      />
    </svg>
  );
}
