// Group commit of metric writes. Concurrent requests merge their points into one pending write
// set per store; the set is committed in one transaction when the event loop is next free
// (setImmediate) or at once when it reaches a size cap, and each request's promise settles only
// after the transaction holding its points commits (or fails: then exactly the requests merged
// into that transaction are rejected). The queue is bounded by pending points: over the limit,
// enqueue throws 503 with Retry-After before taking anything, so memory cannot grow without bound.
//
// Store commits are asynchronous (a network store answers later). Each store has at most one
// commit in flight: writes arriving meanwhile gather in its next set, which is committed when the
// previous one settles, so one store's writes apply in arrival order (an assert is never
// overtaken by an earlier track) and a slow store batches more instead of opening more
// transactions. Points count as pending until their commit settles.
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

interface StoreState {
  /** points gathering for the next commit */
  next: Pending | null;
  /** the commit in flight, if any */
  running: Promise<void> | null;
}

export function createWriteQueue(options: WriteQueueOptions): WriteQueue {
  const flushAt = options.flushAtPoints ?? 20_000;
  const defer = options.defer ?? ((fn: () => void) => void setImmediate(fn));
  const translate = options.translateError ?? ((err: unknown) => err);
  const stores = new Map<MetricStore, StoreState>();
  let pendingPoints = 0;
  let scheduled = false;
  let closed = false;

  function stateOf(store: MetricStore): StoreState {
    let state = stores.get(store);
    if (!state) stores.set(store, (state = { next: null, running: null }));
    return state;
  }

  async function commit(store: MetricStore, batch: Pending): Promise<void> {
    try {
      await store.apply(batch.writes);
    } catch (err) {
      options.log?.warn('metric write failed', { store: store.kind, points: batch.points, error: String(err) });
      const failure = translate(err);
      for (const w of batch.waiters) w.reject(failure);
      return;
    } finally {
      pendingPoints -= batch.points;
    }
    for (const w of batch.waiters) w.resolve();
  }

  /** Starts the store's gathered set unless a commit is in flight; chains the next one after it. */
  function start(store: MetricStore, state: StoreState): void {
    if (state.running || !state.next) return;
    const batch = state.next;
    state.next = null;
    state.running = commit(store, batch).then(() => {
      state.running = null;
      if (state.next) start(store, state);
      else if (stores.get(store) === state) stores.delete(store);
    });
  }

  function flushAll(): void {
    scheduled = false;
    for (const [store, state] of stores) start(store, state);
  }

  /** Resolves once nothing is pending or in flight (commits chained meanwhile included). */
  async function settle(): Promise<void> {
    flushAll();
    for (;;) {
      const running = [...stores.values()].map((s) => s.running).filter((r): r is Promise<void> => r !== null);
      if (running.length === 0) return;
      await Promise.all(running);
    }
  }

  return {
    enqueue(store, pointCount, merge) {
      if (closed) throw unavailable('The server is shutting down, retry later', 1);
      // A lone request larger than the bound still passes: its size is capped by the body limit.
      if (pendingPoints > 0 && pendingPoints + pointCount > options.maxPendingPoints) {
        throw unavailable('Write queue is full, retry later', 1);
      }
      const state = stateOf(store);
      const entry = (state.next ??= { writes: emptyWriteSet(), points: 0, waiters: [] });
      try {
        merge(entry.writes);
      } catch (err) {
        // The pending set may hold part of this request: drop it and fail the requests merged into it.
        state.next = null;
        pendingPoints -= entry.points;
        for (const w of entry.waiters) w.reject(err);
        throw err;
      }
      entry.points += pointCount;
      pendingPoints += pointCount;
      const done = new Promise<void>((resolve, reject) => entry.waiters.push({ resolve, reject }));
      if (entry.points >= flushAt) {
        start(store, state);
      } else if (!scheduled) {
        scheduled = true;
        defer(flushAll);
      }
      return done;
    },

    flush: settle,

    async close() {
      closed = true;
      await settle();
    },

    get pendingPoints() {
      return pendingPoints;
    },
  };
}
