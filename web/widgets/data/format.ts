// Numbers as people read them on a dashboard: compact on axes and big figures (1.2k, 3.4M), exact
// in tables and read-outs (grouped digits, at most 4 decimals), and percentages of change.

const UNITS: Array<[number, string]> = [
  [1e12, 'T'],
  [1e9, 'G'],
  [1e6, 'M'],
  [1e3, 'k'],
];

const trim = (text: string): string => (text.includes('.') ? text.replace(/\.?0+$/, '') : text);

/** 1234 → "1.2k", 3_400_000 → "3.4M", 0.25 → "0.25", null → "–". */
export function formatCompact(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  for (const [size, unit] of UNITS) {
    if (abs >= size * 0.9995) {
      const scaled = value / size;
      return trim(scaled.toFixed(Math.abs(scaled) >= 100 ? 0 : 1)) + unit;
    }
  }
  if (abs === 0) return '0';
  if (abs >= 100) return trim(value.toFixed(0));
  if (abs >= 1) return trim(value.toFixed(abs >= 10 ? 1 : 2));
  return trim(value.toPrecision(2));
}

// One formatter each, made once: Number#toLocaleString with options builds a new Intl.NumberFormat on
// every call, which made a table of 2,000 buckets spend most of its drawing time here.
const EXACT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 4 });
const EXACT_SMALL = new Intl.NumberFormat('en-US', { maximumFractionDigits: 6 });

/** 1234567.891 → "1,234,567.891" (en grouping, at most 4 decimals), null → "–". */
export function formatExact(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  // Whole numbers below 1,000 need no grouping or rounding: the common case, without Intl.
  if (Number.isInteger(value) && value > -1000 && value < 1000) return String(value === 0 ? 0 : value);
  return (Math.abs(value) < 1 ? EXACT_SMALL : EXACT).format(value);
}

/** Change from `previous` to `current` in percent; null when previous is missing or zero. */
export function percentChange(current: number | null, previous: number | null): number | null {
  if (current === null || previous === null || previous === 0) return null;
  return ((current - previous) / Math.abs(previous)) * 100;
}

const GROUPED = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** +12.5 % / −3 % / 0 % / +214,267 % (grouped) with a real minus sign; a change under 0.05 % is "<0.1 %". */
export function formatPercent(value: number | null): string {
  if (value === null || !Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  const sign = value > 0 ? '+' : value < 0 ? '−' : '';
  if (abs > 0 && abs < 0.05) return `${sign}<0.1 %`;
  const text = abs >= 100 ? GROUPED.format(abs) : trim(abs.toFixed(1));
  return `${sign}${text} %`;
}

/** A share of a whole in whole percent; a non-zero share that rounds to 0 is "<1 %", never "0 %". */
export function formatShare(part: number, total: number): string {
  if (!(total > 0)) return '';
  const share = (Math.max(0, part) / total) * 100;
  if (share > 0 && share < 0.5) return '<1 %';
  if (share < 100 && share > 99.5) return '>99 %';
  return `${Math.round(share)} %`;
}
