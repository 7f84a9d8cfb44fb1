// The Trifle::Stats 2.x sqlite layouts, per identifier mode (the libraries' `joined_identifier`):
//   full       key = "<key>::<granularity>::<bucket start, epoch seconds>"; columns key, data
//   partial    key = "<key>::<granularity>", at = bucket start; columns key, at, data
//   separated  key, granularity, at = bucket start; columns key, granularity, at, data
// `at` is UTC RFC 3339 to the second (`2025-01-01T10:00:00Z`); the libraries also read the
// `.000000Z` spelling, and so does this driver. `data` is a JSON object of dot paths -> numbers.
//
// Writes keep rows flat: each leaf is set through a quoted single-member JSON path (`$."a.b"`).
// A leaf that an older writer nested (`{"a":{"b":1}}`, what an unquoted `$.a.b` path produces) is
// read as the starting value (it wins over a flat copy) and moved to the flat spelling by the same
// statement.
import type { IdentifierMode } from './setup';
import { MAX_PATH_DEPTH, isMap } from '../../model/paths';

export const SEPARATOR = '::';

/**
 * A stored row's data larger than this is not read or written: a Trifle row with 20,000 keys is
 * about 600 KB, and a single huge value would exhaust the thread's heap (a V8 out-of-memory in a
 * worker still aborts the whole process).
 */
export const MAX_ROW_BYTES = 4 * 1024 * 1024;
/** Data text one read may carry across (a year of 1h buckets x 10 leaves is under 2 MB). */
export const MAX_READ_BYTES = 64 * 1024 * 1024;
// Only text rows within the size cap cross into JavaScript; others read as NULL (skipped).
const DATA = `CASE WHEN typeof(data) = 'text' AND octet_length(data) <= ${MAX_ROW_BYTES} THEN data END`;

interface ModeSql {
  /** identity columns, in the order identity() returns their values */
  columns: string[];
  identity(key: string, granularity: string, startMs: number): unknown[];
  /** selects (at-or-key, data) rows of one series over a range; parameters from rangeParams */
  range: string;
  rangeParams(key: string, granularity: string, startsMs: readonly number[]): unknown[];
}

/** UTC RFC 3339 to the second, the `at` spelling the libraries write. */
export function formatAt(ms: number): string {
  return `${new Date(Math.floor(ms / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

/** `at` bounds that include every spelling of the first and last bucket starts (text order). */
function atBounds(startsMs: readonly number[]): [string, string] {
  const first = formatAt(startsMs[0]!).slice(0, 19);
  const last = formatAt(startsMs[startsMs.length - 1]!);
  return [first, last];
}

export const MODES: Record<IdentifierMode, ModeSql> = {
  full: {
    columns: ['key'],
    identity: (key, g, ms) => [`${key}${SEPARATOR}${g}${SEPARATOR}${Math.floor(ms / 1000)}`],
    range: `SELECT key, ${DATA} FROM trifle_stats WHERE key IN (SELECT value FROM json_each(?))`,
    rangeParams: (key, g, starts) => [
      JSON.stringify(starts.map((ms) => `${key}${SEPARATOR}${g}${SEPARATOR}${Math.floor(ms / 1000)}`)),
    ],
  },
  partial: {
    columns: ['key', 'at'],
    identity: (key, g, ms) => [`${key}${SEPARATOR}${g}`, formatAt(ms)],
    range: `SELECT at, ${DATA} FROM trifle_stats WHERE key = ? AND at >= ? AND at <= ?`,
    rangeParams: (key, g, starts) => [`${key}${SEPARATOR}${g}`, ...atBounds(starts)],
  },
  separated: {
    columns: ['key', 'granularity', 'at'],
    identity: (key, g, ms) => [key, g, formatAt(ms)],
    range: `SELECT at, ${DATA} FROM trifle_stats WHERE key = ? AND granularity = ? AND at >= ? AND at <= ?`,
    rangeParams: (key, g, starts) => [key, g, ...atBounds(starts)],
  },
};

/**
 * Upserts of one leaf, with named parameters: @c0.. the identity columns, @leaf the dot path,
 * @flat and @nested its two JSON path spellings, @value.
 *
 * A track continues from the nested copy when a row holds both spellings (the libraries' unquoted
 * paths write the nested one and read it last, so that is the value they and this driver show),
 * then stores the sum flat and removes the nested copy. The WHERE leaves a row whose data is not a
 * JSON object untouched (no change reported), so the caller can refuse the write instead of
 * failing on malformed JSON or silently dropping the leaf (so does a row over MAX_ROW_BYTES).
 */
export function leafStatements(mode: IdentifierMode): { add: string; set: string } {
  const { columns } = MODES[mode];
  const names = columns.map((_, i) => `@c${i}`).join(', ');
  const insert =
    `INSERT INTO trifle_stats (${columns.join(', ')}, data) VALUES (${names}, json_object(@leaf, @value)) ` +
    `ON CONFLICT (${columns.join(', ')}) DO UPDATE SET data = `;
  const start = "json_remove(COALESCE(data, '{}'), @nested)";
  const onlyObjects =
    ` WHERE data IS NULL OR (typeof(data) = 'text' AND octet_length(data) <= ${MAX_ROW_BYTES} AND ` +
    "CASE WHEN json_valid(data) THEN json_type(data) = 'object' ELSE 0 END)";
  return {
    add: `${insert}json_set(${start}, @flat, COALESCE(json_extract(data, @nested), json_extract(data, @flat), 0) + @value)${onlyObjects}`,
    set: `${insert}json_set(${start}, @flat, @value)${onlyObjects}`,
  };
}

/** `$."a.b"`: the whole dot path as one member. */
export function flatPath(path: string): string {
  return `$.${JSON.stringify(path)}`;
}

/** `$."a"."b"`: the dot path as nested members. */
export function nestedPath(segments: readonly string[]): string {
  return `$${segments.map((s) => `.${JSON.stringify(s)}`).join('')}`;
}

/** Integers bind as SQLite integers, so stored JSON keeps `1` rather than `1.0`. */
export function bindNumber(value: number): number | bigint {
  return Number.isSafeInteger(value) ? BigInt(value) : value;
}

/**
 * The leaves of a stored row's data text, or null when it is not a JSON object (skipped on reads).
 * When a leaf is spelled both flat (`"a.b"`) and nested (`{"a":{"b"}}`), the more deeply nested
 * spelling wins whatever the member order, as in the libraries' own reads of such rows.
 */
export function rowLeaves(text: string): Map<string, number> | null {
  let tree: unknown;
  try {
    tree = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isMap(tree)) return null;
  const depths = new Map<string, number>();
  const out = new Map<string, number>();
  const walk = (node: Record<string, unknown>, prefix: string, depth: number): void => {
    for (const key of Object.keys(node)) {
      const child = node[key];
      const p = prefix === '' ? key : `${prefix}.${key}`;
      if (typeof child === 'number') {
        if (Number.isFinite(child) && depth >= (depths.get(p) ?? 0)) {
          out.set(p, child);
          depths.set(p, depth);
        }
      } else if (depth < MAX_PATH_DEPTH && isMap(child)) walk(child, p, depth + 1);
    }
  };
  walk(tree, '', 1);
  return out;
}
