// A map with a size bound for look-up caches: when full it is simply emptied, so memory stays
// bounded without bookkeeping on every hit (entries are cheap to read again from their source).

export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(readonly limit: number) {
    if (!(limit >= 1)) throw new RangeError('limit must be at least 1');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  set(key: K, value: V): void {
    if (this.entries.size >= this.limit && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, value);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  /** The cached value, or `load(key)` remembered when it is not undefined (misses are not cached). */
  getOrLoad(key: K, load: (key: K) => V | undefined): V | undefined {
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached;
    const loaded = load(key);
    if (loaded !== undefined) this.set(key, loaded);
    return loaded;
  }
}
