// Range totals as named items (category, list, distribution): a wildcard entry is named by what
// the wildcard matched ("US" for country.US) unless its row has a label.
import type { Entry } from './rows';
import type { Item } from './list';

export const itemName = (e: Entry): string => (e.binding && e.name === e.source ? e.binding : e.name);

export function itemsOf(entries: readonly Entry[]): Array<Item & { entry: Entry }> {
  return entries.map((entry) => ({ name: itemName(entry), value: entry.values[0] ?? 0, entry }));
}

/** The largest `keep - 1` items and one "Other" holding the rest, so a pie stays readable. */
export function foldSmall<T extends Item>(items: readonly T[], keep: number): Array<Item & Partial<T>> {
  if (items.length <= keep) return [...items];
  const sorted = [...items].sort((a, b) => b.value - a.value);
  const rest = sorted.slice(keep - 1).reduce((sum, i) => sum + i.value, 0);
  return [...sorted.slice(0, keep - 1), { name: 'Other', value: rest } as Item & Partial<T>];
}

/** Start and end angles (radians, clockwise from 12 o'clock) of each positive value's slice. */
export function sliceAngles(values: readonly number[]): Array<[number, number]> {
  const total = values.reduce((s, v) => s + Math.max(0, v), 0);
  let angle = 0;
  return values.map((v) => {
    const start = angle;
    angle += total > 0 ? (Math.max(0, v) / total) * Math.PI * 2 : 0;
    return [start, angle];
  });
}

/**
 * At most `max` entries: the largest by absolute total, in their original order, so a wildcard
 * over thousands of keys stays drawable; `total` is how many there were.
 */
export function largest<T extends { values: ReadonlyArray<number | null> }>(entries: readonly T[], max: number): { kept: T[]; total: number } {
  if (entries.length <= max) return { kept: [...entries], total: entries.length };
  const size = (e: T) => e.values.reduce<number>((s, v) => s + Math.abs(v ?? 0), 0);
  const keep = new Set([...entries].sort((a, b) => size(b) - size(a)).slice(0, max));
  return { kept: entries.filter((e) => keep.has(e)), total: entries.length };
}
