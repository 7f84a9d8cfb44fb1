// Dot paths into a series' nested values: leaf lists, lookups, and wildcard patterns (`country.*`).
// A `*` segment matches one segment, a final `*` any rest (so `country.*` reaches every leaf under
// `country`), as Trifle App's widgets match them. A pattern naming a map expands to its leaves.
import type { SeriesData } from '../types';

export type Bucket = Record<string, unknown>;

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Every numeric leaf of one bucket as [path, value]. */
export function leaves(bucket: unknown, prefix = '', out: Array<[string, number]> = []): Array<[string, number]> {
  if (!isMap(bucket)) return out;
  for (const key of Object.keys(bucket)) {
    const value = bucket[key];
    const path = prefix ? `${prefix}.${key}` : key;
    if (isNumber(value)) out.push([path, value]);
    else if (isMap(value)) leaves(value, path, out);
  }
  return out;
}

/** Sorted dot paths of every numeric leaf in the series. */
export function leafPaths(series: SeriesData): string[] {
  const seen = new Set<string>();
  for (const bucket of series.values) for (const [path] of leaves(bucket)) seen.add(path);
  return [...seen].sort();
}

/** The number at `path` in one bucket, or null. */
export function valueAt(bucket: unknown, path: string): number | null {
  let node: unknown = bucket;
  for (const segment of path.split('.')) {
    if (!isMap(node)) return null;
    node = node[segment];
  }
  return isNumber(node) ? node : null;
}

/** True when `path` names a map (not a number) in some bucket. */
export function namesMap(series: SeriesData, path: string): boolean {
  return series.values.some((bucket) => {
    let node: unknown = bucket;
    for (const segment of path.split('.')) node = isMap(node) ? node[segment] : undefined;
    return isMap(node);
  });
}

/**
 * What a concrete `path` binds to in `pattern`: '' for an exact match, the wildcard captures joined
 * by '.' for a wildcard match, or null when it does not match.
 */
export function bindPath(pattern: string, path: string): string | null {
  if (!pattern.includes('*')) return pattern === path ? '' : null;
  const want = pattern.split('.');
  const have = path.split('.');
  const captures: string[] = [];
  for (let i = 0; i < want.length; i++) {
    const segment = want[i]!;
    const last = i === want.length - 1;
    if (segment === '*' && last) {
      if (have.length <= i) return null;
      captures.push(have.slice(i).join('.'));
      return captures.join('.');
    }
    if (have[i] === undefined) return null;
    if (segment === '*') captures.push(have[i]!);
    else if (segment !== have[i]) return null;
  }
  return have.length === want.length ? captures.join('.') : null;
}

/** A plain path naming a map means all of its leaves, as in Trifle App (`country` → `country.*`). */
export function effectivePattern(series: SeriesData, path: string): string {
  return !path.includes('*') && namesMap(series, path) ? `${path}.*` : path;
}

/** Leaf paths of the series matching `pattern`, sorted, with their bindings. */
export function matchPaths(available: readonly string[], pattern: string): Array<{ path: string; binding: string }> {
  const out: Array<{ path: string; binding: string }> = [];
  for (const path of available) {
    const binding = bindPath(pattern, path);
    if (binding !== null) out.push({ path, binding });
  }
  return out;
}
