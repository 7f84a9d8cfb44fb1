// Dot paths into nested metric values: `{country: {US: 3}}` has the leaf path `country.US`.
// Only finite numbers are leaves; anything else (strings, null, arrays, NaN) is skipped, so a
// store holding odd data can never put a non-number into a query answer.

/** Nesting deeper than this is ignored (ingest allows 32; other writers' stores may hold more). */
export const MAX_PATH_DEPTH = 64;

export type LeafVisitor = (path: string, value: number) => void;

export function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function walk(map: Record<string, unknown>, prefix: string, depth: number, visit: LeafVisitor) {
  for (const key of Object.keys(map)) {
    const child = map[key];
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (typeof child === 'number') {
      if (Number.isFinite(child)) visit(path, child);
    } else if (depth < MAX_PATH_DEPTH && isMap(child)) {
      walk(child, path, depth + 1, visit);
    }
  }
}

/**
 * Calls `visit(path, value)` for every finite numeric leaf of a nested map, in key order.
 * A key that itself contains a dot yields the same path as the nesting it mimics
 * (`{"a.b": 1}` and `{a: {b: 1}}` are both `a.b`), as in the flattened Trifle::Stats layout.
 */
export function forEachLeaf(value: unknown, visit: LeafVisitor, prefix = ''): void {
  if (isMap(value)) walk(value, prefix, 1, visit);
}

/**
 * Dot paths of the finite numeric leaves of `value`, added to `out` (a new map by default).
 * When two spellings collide (see forEachLeaf), the later key wins.
 */
export function flattenLeaves(
  value: Record<string, unknown>,
  prefix = '',
  out: Map<string, number> = new Map(),
): Map<string, number> {
  forEachLeaf(value, (path, leaf) => out.set(path, leaf), prefix);
  return out;
}

/**
 * A predicate for the leaf paths a value_path selects: the path itself, and with `expand`
 * every leaf below it (`country` selects `country.US` and `country.EU.FR`, not `countryside`).
 */
export function pathSelector(valuePath: string, expand: boolean): (path: string) => boolean {
  if (!expand) return (path) => path === valuePath;
  const below = `${valuePath}.`;
  return (path) => path === valuePath || path.startsWith(below);
}
