// Group commit of metric writes. Concurrent requests merge their points into one pending write
// set per store; the set is committed in one transaction when the event loop is next free
// (setImmediate) or at once when it reaches a size cap, and each request's promise settles only
// after the transaction holding its points commits (or fails: then exactly the requests merged
// into that transaction are rejected). The queue is bounded by pending points: over the limit,
// enqueue throws 503 with Retry-After before taking anything, so memory cannot grow without bound.
import { unavailable } from '../../errors';
import type { Logger } from '../../lib/log';
import { emptyWriteSet, type MetricStore, type WriteSet } from '../../drivers/types';

export interface WriteQueueOptions {
  /** pending points above which enqueue answers 503 */
  maxPendingPoints: number;
  /** pending points of one store that trigger an immediate flush (default 20,000) */
  flushAtPoints?: number;
  log?: Logger;
  /** maps an apply failure to the error the waiting requests see (default: unchanged) */
  translateError?: (err: unknown) => unknown;
  /** defer a flush until the event loop is free (default setImmediate) */
  defer?: (fn: () => void) => void;
}

export interface WriteQueue {
  /**
   * Merges `pointCount` points (through `merge`, synchronously) into the pending writes of `store`;
   * resolves once they are committed. Throws 503 synchronously when the queue is full or closed.
   */
  enqueue(store: MetricStore, pointCount: number, merge: (writes: WriteSet) => void): Promise<void>;
  /** Commits everything pending now. */
  flush(): Promise<void>;
  /** Commits what is pending and refuses further writes. */
  close(): Promise<void>;
  /** points merged but not yet committed */
  readonly pendingPoints: number;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

interface Pending {
  writes: WriteSet;
  points: number;
  waiters: Waiter[];
}

export function createWriteQueue(options: WriteQueueOptions): WriteQueue {
  const flushAt = options.flushAtPoints ?? 20_000;
  const defer = options.defer ?? ((fn: () => void) => void setImmediate(fn));
  const translate = options.translateError ?? ((err: unknown) => err);
  const pending = new Map<MetricStore, Pending>();
  let pendingPoints = 0;
  let scheduled = false;
  let closed = false;

  function commit(store: MetricStore, batch: Pending): void {
    pendingPoints -= batch.points;
    try {
      store.apply(batch.writes);
    } catch (err) {
      options.log?.warn('metric write failed', { store: store.kind, points: batch.points, error: String(err) });
      const failure = translate(err);
      for (const w of batch.waiters) w.reject(failure);
      return;
    }
    for (const w of batch.waiters) w.resolve();
  }

  function flushAll(): void {
    scheduled = false;
    const batches = [...pending];
    pending.clear();
    for (const [store, batch] of batches) commit(store, batch);
  }

  function pendingFor(store: MetricStore): Pending {
    let entry = pending.get(store);
    if (!entry) pending.set(store, (entry = { writes: emptyWriteSet(), points: 0, waiters: [] }));
    return entry;
  }

  return {
    enqueue(store, pointCount, merge) {
      if (closed) throw unavailable('The server is shutting down, retry later', 1);
      // A lone request larger than the bound still passes: its size is capped by the body limit.
      if (pendingPoints > 0 && pendingPoints + pointCount > options.maxPendingPoints) {
        throw unavailable('Write queue is full, retry later', 1);
      }
      const entry = pendingFor(store);
      try {
        merge(entry.writes);
      } catch (err) {
        // The pending set may hold part of this request: drop it and fail the requests merged into it.
        pending.delete(store);
        pendingPoints -= entry.points;
        for (const w of entry.waiters) w.reject(err);
        throw err;
      }
      entry.points += pointCount;
      pendingPoints += pointCount;
      const done = new Promise<void>((resolve, reject) => entry.waiters.push({ resolve, reject }));
      if (entry.points >= flushAt) {
        pending.delete(store);
        commit(store, entry);
      } else if (!scheduled) {
        scheduled = true;
        defer(flushAll);
      }
      return done;
    },

    async flush() {
      flushAll();
    },

    async close() {
      closed = true;
      flushAll();
    },

    get pendingPoints() {
      return pendingPoints;
    },
  };
}
