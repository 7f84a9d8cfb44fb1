// A look-up cache for rows that another process may change (cluster mode: another node writes the
// same PostgreSQL tables). An entry is answered for `ttlMs` after its load started, then loaded
// again, so a change made elsewhere is seen within `ttlMs`; a change made through this process
// drops the entry at once (`delete`/`clear`), and so does a change another process announces
// (cluster mode: storage/pg/changes.ts). Concurrent misses of one key share one load, and a
// load that started before a `delete` or `clear` is not kept (it may have read the old row).
// Misses (undefined) are not cached, as BoundedCache's. When full it is emptied, like BoundedCache.

export const CLUSTER_CACHE_TTL_MS = 2_000;

interface Entry<V> {
  value: V;
  /** when its load started (performance.now()) */
  at: number;
}

export class ExpiringCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private readonly loading = new Map<K, Promise<V | undefined>>();
  /** +1 on every delete and clear: a load that started under an older one is not kept */
  private generation = 0;

  constructor(
    readonly limit: number,
    readonly ttlMs: number = CLUSTER_CACHE_TTL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(limit >= 1)) throw new RangeError('limit must be at least 1');
    if (!(ttlMs >= 0)) throw new RangeError('ttlMs must not be negative');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value while it is fresh, else undefined. */
  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    return entry && this.now() - entry.at < this.ttlMs ? entry.value : undefined;
  }

  /**
   * The fresh value, or `load(key, expired)` remembered when it is not undefined (shared by
   * concurrent misses). `expired` is the value kept past its time-to-live, if any: a loader may
   * answer it again when nothing changed, so that callers keep seeing one object.
   */
  getOrLoad(
    key: K,
    load: (key: K, expired: V | undefined) => Promise<V | undefined>,
  ): Promise<V | undefined> {
    const entry = this.entries.get(key);
    if (entry && this.now() - entry.at < this.ttlMs) return Promise.resolve(entry.value);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const generation = this.generation;
    const at = this.now();
    const promise = load(key, entry?.value).then(
      (value) => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
        if (value !== undefined && generation === this.generation) this.set(key, value, at);
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(key) === promise) this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }

  delete(key: K): void {
    this.generation++;
    this.entries.delete(key);
    this.loading.delete(key);
  }

  /**
   * Drops the entries `match` selects, and every load under way (what it will answer is not known
   * yet, and it may have read the row before the change): for a change known by another key than
   * the cache's (a token revoked, known by its id, in a cache by hash).
   */
  deleteWhere(match: (key: K, value: V) => boolean): void {
    this.generation++;
    this.loading.clear();
    for (const [key, entry] of this.entries) if (match(key, entry.value)) this.entries.delete(key);
  }

  clear(): void {
    this.generation++;
    this.entries.clear();
    this.loading.clear();
  }

  private set(key: K, value: V, at: number): void {
    if (this.entries.size >= this.limit && !this.entries.has(key)) this.entries.clear();
    this.entries.set(key, { value, at });
  }
}
