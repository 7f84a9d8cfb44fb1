// Group commit of metric writes. Concurrent requests gather per store into one commit, made when
// the event loop is next free (setImmediate), or for a store with a merge window (`mergeWindowMs`:
// the projects on a metrics cluster, docs/cluster.md) once the window has passed since the first
// of them, or at once at a size cap; each request's promise
// settles only after the commit holding its points (or fails: then exactly the requests gathered
// into that commit are rejected). The queue is bounded by points not yet committed: over the
// limit, enqueue throws 503 with Retry-After before taking anything, so memory cannot grow
// without bound.
//
// Each store has at most one commit in flight: writes arriving meanwhile gather for the next, so
// one store's writes apply in arrival order and a slow store batches more instead of opening more
// transactions. A store with a window starts a commit at most once per window (the next commit's
// window opens with the first write after the previous commit started), so a node updates a hot
// row of it at most 1000 / window times a second however many requests arrive. A commit is one
// call whatever the store: `store.commit(entries)` with the gathered requests' points per source
// in arrival order (drivers/types.ts). The embedded store
// logs them and its metric writer merges them; a database source's store merges them into one
// write set and applies it (drivers/index.ts).
import { unavailable } from '../../errors';
import type { Logger } from '../../lib/log';
import type { LoggedPoints, MetricStore } from '../../drivers/types';
import type { BucketSettings, WirePoints } from '../../model/wire';
import type { ValidPoint } from './ingest/points';
import { encodePoints } from '../../model/point-wire';

/** A request's points: parsed (single points, small bodies) or as the batch parser's wire. */
export interface WriteRequest {
  settings: BucketSettings;
  points?: readonly ValidPoint[];
  wire?: WirePoints;
}

/**
 * A commit's requests as entries: per source in arrival order, consecutive parsed requests
 * encoded together (a second of single points is one entry per commit, not one per request).
 */
function commitEntries(requests: readonly WriteRequest[]): LoggedPoints[] {
  const bySource = new Map<
    string,
    Array<{ settings: BucketSettings; points: ValidPoint[] | null; wire: WirePoints | null }>
  >();
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
  /** runs `fn` after a store's merge window of `ms`; returns a cancel (default setTimeout) */
  windowTimer?: (fn: () => void, ms: number) => () => void;
}

function setWindowTimer(fn: () => void, ms: number): () => void {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
}

export interface WriteQueue {
  /**
   * Takes a request's `pointCount` points for the store's next commit. Resolves once they are
   * durable. Throws 503 synchronously when the queue is full or closed.
   */
  enqueue(store: MetricStore, pointCount: number, request: WriteRequest): Promise<void>;
  /** Resolves once the points taken so far are committed (not those taken meanwhile). */
  drain(store: MetricStore): Promise<void>;
  /** Commits everything pending now, and has every store settle what it holds. */
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
  /** the requests, in arrival order */
  requests: WriteRequest[];
  points: number;
  waiters: Waiter[];
  /** may start as soon as no commit is in flight (false while its merge window is open) */
  due: boolean;
}

interface StoreState {
  /** points gathering for the next commit */
  next: Pending | null;
  /** the commit in flight, if any */
  running: Promise<void> | null;
  /** cancels the timer of the open merge window of `next` */
  cancelWindow: (() => void) | null;
}

export function createWriteQueue(options: WriteQueueOptions): WriteQueue {
  const flushAt = options.flushAtPoints ?? 20_000;
  const defer = options.defer ?? ((fn: () => void) => void setImmediate(fn));
  const windowTimer = options.windowTimer ?? setWindowTimer;
  const translate = options.translateError ?? ((err: unknown) => err);
  const stores = new Map<MetricStore, StoreState>();
  let pendingPoints = 0;
  let scheduled = false;
  let closed = false;

  function stateOf(store: MetricStore): StoreState {
    let state = stores.get(store);
    if (!state) stores.set(store, (state = { next: null, running: null, cancelWindow: null }));
    return state;
  }

  function settleWaiters(batch: Pending, err: unknown): void {
    if (err === undefined) for (const w of batch.waiters) w.resolve();
    else for (const w of batch.waiters) w.reject(translate(err));
  }

  async function commit(store: MetricStore, batch: Pending): Promise<void> {
    try {
      await store.commit(commitEntries(batch.requests));
    } catch (err) {
      options.log?.warn('metric write failed', {
        store: store.kind,
        points: batch.points,
        error: String(err),
      });
      return settleWaiters(batch, err ?? new Error('write failed'));
    } finally {
      pendingPoints -= batch.points;
    }
    settleWaiters(batch, undefined);
  }

  /** Starts the store's next commit unless one is in flight or its merge window is open. */
  function start(store: MetricStore, state: StoreState): void {
    if (state.running || !state.next?.due) return;
    const batch = state.next;
    state.next = null;
    state.cancelWindow?.();
    state.cancelWindow = null;
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
      else {
        state.next!.due = true;
        start(store, state);
      }
    }
  }

  async function flushStores(): Promise<void> {
    await Promise.all(
      [...stores].map(async ([store, state]) => {
        await drainCommits(store, state);
        await store.settle();
      }),
    );
  }

  return {
    enqueue(store, pointCount, request) {
      if (closed) throw unavailable('The server is shutting down, retry later', 1);
      // A lone request larger than the bound still passes: its size is capped by the body limit.
      if (pendingPoints > 0 && pendingPoints + pointCount > options.maxPendingPoints) {
        throw unavailable('Write queue is full, retry later', 1);
      }
      const state = stateOf(store);
      let batch = state.next;
      if (!batch) {
        const window = store.mergeWindowMs ?? 0;
        batch = state.next = { requests: [], points: 0, waiters: [], due: window <= 0 };
        if (window > 0) {
          const opened = batch;
          state.cancelWindow = windowTimer(() => {
            state.cancelWindow = null;
            opened.due = true;
            start(store, state);
          }, window);
        }
      }
      batch.requests.push(request);
      batch.points += pointCount;
      pendingPoints += pointCount;
      const done = new Promise<void>((resolve, reject) => batch.waiters.push({ resolve, reject }));
      if (batch.points >= flushAt) {
        batch.due = true;
        start(store, state);
      } else if (batch.due && !scheduled) {
        scheduled = true;
        defer(flushAll);
      }
      return done;
    },

    async drain(store) {
      const state = stateOf(store);
      const target = state.next;
      if (target) {
        const done = new Promise<void>((resolve) =>
          target.waiters.push({ resolve, reject: () => resolve() }),
        );
        target.due = true;
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
