// What every metric widget decides the same way: which entries it draws, and whether it is
// ready, empty (no visible entry has data; the message names the paths) or broken (a bad expression).
import type { WidgetState } from './frame';
import { rowPaths, rowsError, visibleEntries, type Entry } from './data/rows';
import type { WidgetData } from './data/series';

export interface Drawable {
  state: WidgetState;
  entries: Entry[];
  message: string | null;
  paths: string[];
}

export function drawable(
  { rows, resolved }: WidgetData,
  hasData: (e: Entry) => boolean = anyValue,
): Drawable {
  const paths = rowPaths(rows);
  const error = rowsError(resolved);
  const entries = visibleEntries(resolved).filter(hasData);
  // A broken expression beside rows that draw: draw them, and say what is wrong underneath.
  if (entries.length) return { state: 'ready', entries, message: error, paths };
  if (error) return { state: 'error', entries, message: error, paths };
  return {
    state: 'empty',
    entries,
    message: null,
    paths: paths.length ? paths : rows.map((r) => r.expression).filter(Boolean),
  };
}

const anyValue = (e: Entry) => e.values.some((v) => v !== null);

/** A boolean widget option (Trifle also stored "true"/"false" strings from forms). */
export const flag = (value: unknown, fallback = false): boolean =>
  value === undefined || value === null ? fallback : value === true || value === 'true' || value === 1;
