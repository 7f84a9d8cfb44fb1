// Group commit of metric writes. Concurrent requests gather per store into one commit, made when
// the event loop is next free (setImmediate) or at once at a size cap; each request's promise
// settles only after the commit holding its points (or fails: then exactly the requests gathered
// into that commit are rejected). The queue is bounded by points not yet committed: over the
// limit, enqueue throws 503 with Retry-After before taking anything, so memory cannot grow
// without bound.
//
// Each store has at most one commit in flight: writes arriving meanwhile gather for the next, so
// one store's writes apply in arrival order and a slow store batches more instead of opening more
// transactions. Two kinds of store:
// - plain stores (database sources): the gathered points are merged into a write set and applied;
// - stores with a write log (the embedded store): the commit hands each source's points, in
//   arrival order, to the store's metric writer (metric-writer.ts), which logs and merges them and
//   owns all merge state from there; it folds them into the buckets in the background.
import { unavailable } from '../../errors';
import type { Logger } from '../../lib/log';
import { emptyWriteSet, type LoggedPoints, type MetricStore, type WriteSet } from '../../drivers/types';
import type { BucketSettings, WirePoints } from '../../model/wire';
import type { ValidPoint } from './ingest';
import { finishMerging } from './merge';
import { encodePoints } from './point-wire';

export type Merge = (writes: WriteSet) => void;

/** A request's points as a store with a write log takes them: parsed (small requests) or as a wire. */
export interface LoggedRequest {
  settings: BucketSettings;
  points?: readonly ValidPoint[];
  wire?: WirePoints;
}

export interface WriteQueueOptions {
  /** pending points above which enqueue answers 503 */
  maxPendingPoints: number;
  /** pending points of one store that trigger an immediate commit (default 20,000) */
  flushAtPoints?: number;
  log?: Logger;
  /** maps an apply failure to the error the waiting requests see (default: unchanged) */
  translateError?: (err: unknown) => unknown;
  /** defer a commit until the event loop is free (default setImmediate) */
  defer?: (fn: () => void) => void;
}

export interface WriteQueue {
  /**
   * Takes `pointCount` points: `merge` merges them into a write set (a plain store), `logged` hands
   * them to a store with a write log. Resolves once they are durable. Throws 503 synchronously
   * when the queue is full or closed.
   */
  enqueue(store: MetricStore, pointCount: number, merge: Merge, logged?: LoggedRequest): Promise<void>;
  /** Resolves once the points taken so far are committed (not those taken meanwhile). */
  drain(store: MetricStore): Promise<void>;
  /** Commits everything pending now, and has every store with a log fold what it holds. */
  flush(): Promise<void>;
  /** Commits what is pending and refuses further writes. */
  close(): Promise<void>;
  /** points taken but not yet durable */
  readonly pendingPoints: number;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

interface Pending {
  /** plain stores: the points merged so far */
  writes: WriteSet;
  /** log stores: the requests, in arrival order */
  logged: LoggedRequest[];
  points: number;
  waiters: Waiter[];
}

interface StoreState {
  /** points gathering for the next commit */
  next: Pending | null;
  /** the commit in flight, if any */
  running: Promise<void> | null;
}

/**
 * A commit's requests as log entries: per source in arrival order, consecutive parsed requests
 * encoded together (a second of single points is one entry per commit, not one per request).
 */
function logEntries(requests: readonly LoggedRequest[]): LoggedPoints[] {
  const bySource = new Map<string, Array<{ settings: BucketSettings; points: ValidPoint[] | null; wire: WirePoints | null }>>();
  for (const r of requests) {
    let list = bySource.get(r.settings.id);
    if (!list) bySource.set(r.settings.id, (list = []));
    const last = list[list.length - 1];
    if (r.wire) list.push({ settings: r.settings, points: null, wire: r.wire });
    else if (last?.points && last.settings === r.settings) for (const p of r.points!) last.points.push(p);
    else list.push({ settings: r.settings, points: [...r.points!], wire: null });
  }
  const entries: LoggedPoints[] = [];
  for (const list of bySource.values()) {
    for (const e of list) entries.push({ settings: e.settings, wire: e.wire ?? encodePoints(e.points!) });
  }
  return entries;
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

  function settleWaiters(batch: Pending, err: unknown): void {
    if (err === undefined) for (const w of batch.waiters) w.resolve();
    else for (const w of batch.waiters) w.reject(translate(err));
  }

  async function commit(store: MetricStore, batch: Pending): Promise<void> {
    try {
      if (store.log) await store.log.append(logEntries(batch.logged));
      else {
        finishMerging(batch.writes);
        await store.apply(batch.writes);
      }
    } catch (err) {
      options.log?.warn('metric write failed', { store: store.kind, points: batch.points, error: String(err) });
      return settleWaiters(batch, err ?? new Error('write failed'));
    } finally {
      pendingPoints -= batch.points;
    }
    settleWaiters(batch, undefined);
  }

  /** Starts the store's next commit unless one is in flight. */
  function start(store: MetricStore, state: StoreState): void {
    if (state.running || !state.next) return;
    const batch = state.next;
    state.next = null;
    state.running = commit(store, batch).then(() => {
      state.running = null;
      start(store, state);
    });
  }

  function flushAll(): void {
    scheduled = false;
    for (const [store, state] of stores) start(store, state);
  }

  /** Commits what the store has gathered, and what gathers meanwhile. */
  async function drainCommits(store: MetricStore, state: StoreState): Promise<void> {
    while (state.running || state.next) {
      if (state.running) await state.running;
      else start(store, state);
    }
  }

  async function flushStores(): Promise<void> {
    await Promise.all(
      [...stores].map(async ([store, state]) => {
        await drainCommits(store, state);
        await store.log?.settle();
      }),
    );
  }

  return {
    enqueue(store, pointCount, merge, logged) {
      if (closed) throw unavailable('The server is shutting down, retry later', 1);
      // A lone request larger than the bound still passes: its size is capped by the body limit.
      if (pendingPoints > 0 && pendingPoints + pointCount > options.maxPendingPoints) {
        throw unavailable('Write queue is full, retry later', 1);
      }
      if (store.log && !logged) throw new Error(`a write to the ${store.kind} store needs its logged points`);
      const state = stateOf(store);
      const batch = (state.next ??= { writes: emptyWriteSet(), logged: [], points: 0, waiters: [] });
      // Merging cannot fail on validated points; it runs before anything of this request is counted.
      if (store.log) batch.logged.push(logged!);
      else merge(batch.writes);
      batch.points += pointCount;
      pendingPoints += pointCount;
      const done = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
      if (batch.points >= flushAt) start(store, state);
      else if (!scheduled) {
        scheduled = true;
        defer(flushAll);
      }
      return done;
    },

    async drain(store) {
      const state = stateOf(store);
      const target = state.next;
      if (target) {
        const done = new Promise<void>((resolve) => target.waiters.push({ resolve, reject: () => resolve() }));
        start(store, state);
        await done;
      } else if (state.running) await state.running;
    },

    flush: flushStores,

    async close() {
      closed = true;
      await flushStores();
    },

    get pendingPoints() {
      return pendingPoints;
    },
  };
}
