// Histogram buckets for distribution and heatmap widgets. Trifle::Stats designators write a map
// whose keys are bucket labels ("10", "20", "50+"); these helpers order the labels numerically and
// list the buckets a designator config defines, so empty buckets still show as zero bars.

const labelNumber = (label: string): number => Number(label.replace(/\+$/, ''));

/** Numeric labels ascending ("50+" right after "50"), then the others by name. */
export function compareBucketLabels(a: string, b: string): number {
  const x = labelNumber(a);
  const y = labelNumber(b);
  const xn = Number.isFinite(x) && a.trim() !== '';
  const yn = Number.isFinite(y) && b.trim() !== '';
  if (xn && yn) return x - y || Number(a.endsWith('+')) - Number(b.endsWith('+'));
  if (xn !== yn) return xn ? -1 : 1;
  return a.localeCompare(b);
}

const num = (v: unknown): number | null => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : null;
};
const label = (n: number): string => String(Number(n.toPrecision(12)));

/** The labels a designator config defines (linear: min..max by step, then "max+"; custom: its buckets, then "last+"). */
export function designatorLabels(config: unknown): string[] {
  if (typeof config !== 'object' || config === null) return [];
  const c = config as Record<string, unknown>;
  const type = String(c.type ?? '').toLowerCase();
  if (type === 'linear') {
    const [min, max, step] = [num(c.min), num(c.max), num(c.step)];
    if (min === null || max === null || step === null || step <= 0 || min > max || (max - min) / step > 500) return [];
    const out: string[] = [];
    for (let v = min; v <= max + step / 1e9; v += step) out.push(label(v));
    return [...out, `${label(max)}+`];
  }
  if (type === 'custom' && Array.isArray(c.buckets)) {
    const values = c.buckets.map(num).filter((n): n is number => n !== null).sort((a, b) => a - b);
    return values.length ? [...values.map(label), `${label(values[values.length - 1]!)}+`] : [];
  }
  return [];
}

/** The union of `seen` labels and the designator's, ordered. */
export function bucketLabels(seen: Iterable<string>, designated: readonly string[] = []): string[] {
  return [...new Set([...designated, ...seen])].sort(compareBucketLabels);
}
