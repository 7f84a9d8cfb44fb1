// Ranked items for list and category widgets: sort by value or name, then keep the first `limit`.

export interface Item {
  name: string;
  value: number;
}

export type ListSort = 'desc' | 'asc' | 'alpha' | 'alpha_desc';

export function toSort(raw: unknown): ListSort {
  return raw === 'asc' || raw === 'alpha' || raw === 'alpha_desc' ? raw : 'desc';
}

const byName = (a: Item, b: Item) => a.name.localeCompare(b.name, 'en', { numeric: true });

/** Items sorted (ties by name) and cut to `limit` when it is a positive integer. */
export function rankItems(items: readonly Item[], sort: ListSort, limit?: unknown): Item[] {
  const sorted = [...items].sort((a, b) => {
    if (sort === 'alpha') return byName(a, b);
    if (sort === 'alpha_desc') return byName(b, a);
    return (sort === 'asc' ? a.value - b.value : b.value - a.value) || byName(a, b);
  });
  const n = typeof limit === 'number' ? limit : typeof limit === 'string' ? Number(limit) : NaN;
  return Number.isInteger(n) && n >= 1 ? sorted.slice(0, n) : sorted;
}
