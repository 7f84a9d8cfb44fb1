// Group commit of metric writes, and the one owner of merge state. Concurrent requests gather per
// store into one set, committed when the event loop is next free (setImmediate) or at once at a
// size cap; each request's promise settles only after the commit holding its points (or fails:
// then exactly the requests gathered into that commit are rejected). The queue is bounded by
// points not yet committed: over the limit, enqueue throws 503 with Retry-After before taking
// anything, so memory cannot grow without bound.
//
// Each store has at most one operation in flight: writes arriving meanwhile gather for the next,
// so one store's writes apply in arrival order and a slow store batches more instead of opening
// more transactions. Two kinds of store:
// - plain stores (database sources): the gathered points are merged into a write set and applied;
// - stores with a write log (the embedded store): the commit is a durable append of the gathered
//   points' log entries; after it the points are merged into the store's fold window
//   (fold-window.ts), which is applied about once a second, so a hot bucket is rewritten once per
//   window instead of once per request. The window's set removes the log entries it folds in its
//   own transaction; after a restart or a failed fold the window is rebuilt from the log.
//   `settle(store)` folds at once: reads call it, so they see every acknowledged point.
import { unavailable } from '../../errors';
import type { Logger } from '../../lib/log';
import { emptyWriteSet, type LogEntry, type LogRecord, type MetricStore, type WriteSet } from '../../drivers/types';
import { FoldWindow } from './fold-window';
import type { ValidPoint } from './ingest';
import { finishMerging } from './merge';
import { WireScratch } from './point-wire';

export type Merge = (writes: WriteSet) => void;

/** A request's points as a log store logs them (one log row per source per commit). */
export interface LoggedPoints {
  sourceId: string;
  points: readonly ValidPoint[];
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
  /** merges a logged entry back into a write set; without it log stores are used as plain ones */
  replay?: (record: LogRecord, writes: WriteSet) => void;
  /** how long accepted points wait in a fold window (default 1,000 ms) */
  foldAfterMs?: number;
  /** points in a fold window that start its fold at once (default 200,000) */
  foldAtPoints?: number;
}

export interface WriteQueue {
  /**
   * Takes `pointCount` points: `merge` merges them into a write set (synchronously for a plain
   * store, after the log append for a log store, which also needs them as `logged`). Resolves once
   * they are durable. Throws 503 synchronously when the queue is full or closed.
   */
  enqueue(store: MetricStore, pointCount: number, merge: Merge, logged?: LoggedPoints): Promise<void>;
  /** Folds a log store's window: resolves once every acknowledged point is in the store. */
  settle(store: MetricStore): Promise<void>;
  /** Commits the points taken so far (acknowledged or not), then settles the store. */
  drain(store: MetricStore): Promise<void>;
  /** Commits and folds everything pending now. */
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
  /** log stores: merges run once the entries are durable */
  merges: Merge[];
  logged: LoggedPoints[];
  points: number;
  waiters: Waiter[];
}

interface StoreState {
  /** points gathering for the next commit */
  next: Pending | null;
  /** the operation in flight, if any */
  running: Promise<void> | null;
  /** log stores only */
  window: FoldWindow | null;
  /** log stores only: where a commit's log entries are encoded */
  scratch: WireScratch | null;
}

/** One log entry per source for the requests of a commit: one encoding and one record, not one per request. */
function logEntries(logged: readonly LoggedPoints[], scratch: WireScratch): LogEntry[] {
  const bySource = new Map<string, ValidPoint[]>();
  for (const { sourceId, points } of logged) {
    const all = bySource.get(sourceId);
    if (all) for (const p of points) all.push(p);
    else bySource.set(sourceId, points.slice());
  }
  scratch.reset(); // the previous commit's bodies are written: their bytes can be reused
  return [...bySource].map(([sourceId, points]) => ({ sourceId, body: scratch.encode(points) }));
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
    if (!state) {
      const logged = store.log && options.replay;
      const window = logged
        ? new FoldWindow({ store, replay: options.replay!, log: options.log, afterMs: options.foldAfterMs, atPoints: options.foldAtPoints, wake: () => start(store, stateOf(store)) })
        : null;
      stores.set(store, (state = { next: null, running: null, window, scratch: window ? new WireScratch() : null }));
    }
    return state;
  }

  function settleWaiters(batch: Pending, err: unknown): void {
    if (err === undefined) for (const w of batch.waiters) w.resolve();
    else for (const w of batch.waiters) w.reject(translate(err));
  }

  async function commit(store: MetricStore, state: StoreState, batch: Pending): Promise<void> {
    let lastId = 0;
    try {
      if (state.window) lastId = await store.log!.append(logEntries(batch.logged, state.scratch!));
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
    state.window?.accept(batch.merges, batch.points, lastId);
    settleWaiters(batch, undefined);
  }

  /** Starts the store's next operation unless one is in flight: a due fold first, then a commit. */
  function start(store: MetricStore, state: StoreState): void {
    if (state.running) return;
    let op: Promise<void>;
    if (state.window?.due) op = state.window.fold();
    else if (state.next) {
      const batch = state.next;
      state.next = null;
      op = commit(store, state, batch);
    } else return;
    state.running = op.then(() => {
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

  /** Folds the store's window now (after the operation in flight): every accepted point is in it. */
  async function foldNow(store: MetricStore, state: StoreState): Promise<void> {
    const window = state.window;
    if (!window) return;
    if (window.inFlight) await window.inFlight;
    if (!window.wantsFold()) return;
    const done = window.nextFold();
    start(store, state);
    await done;
  }

  /** Waits for the commits of the points taken so far (not for those taken meanwhile). */
  async function commitsTaken(store: MetricStore, state: StoreState): Promise<void> {
    const target = state.next;
    if (target) {
      const done = new Promise<void>((resolve) => target.waiters.push({ resolve, reject: () => resolve() }));
      start(store, state);
      await done;
    } else if (state.running) await state.running;
  }

  async function settleAll(): Promise<void> {
    await Promise.all(
      [...stores].map(async ([store, state]) => {
        await drainCommits(store, state);
        await foldNow(store, state);
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
      const state = stateOf(store);
      if (state.window && !logged) throw new Error(`a write to the ${store.kind} store needs its logged points`);
      const batch = (state.next ??= { writes: emptyWriteSet(), merges: [], logged: [], points: 0, waiters: [] });
      if (logged && state.window) {
        batch.merges.push(merge);
        batch.logged.push(logged);
      } else {
        // Merging cannot fail on validated points; it runs before anything of this request is counted.
        merge(batch.writes);
      }
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

    // Acknowledged points are applied (plain stores) or in the fold window (log stores).
    settle: (store) => foldNow(store, stateOf(store)),
    async drain(store) {
      const state = stateOf(store);
      await commitsTaken(store, state);
      await foldNow(store, state);
    },
    flush: settleAll,

    async close() {
      closed = true;
      await settleAll();
      for (const state of stores.values()) state.window?.stop();
    },

    get pendingPoints() {
      return pendingPoints;
    },
  };
}
