// The fold window of a store with a write log (write-queue.ts): points whose log entries are
// durable wait here, merged, until the window is folded into the store's buckets, about once a
// second or at once when it holds `atPoints` points or a read needs it. The write set of a fold
// carries the id of the last log entry it covers, and the store removes those entries in the
// same transaction, so every accepted point is applied exactly once. When the window cannot be
// trusted (at start, when the log may hold entries of a previous run, and after a failed fold) it
// is rebuilt from the log instead of from memory.
import type { Logger } from '../../lib/log';
import { emptyWriteSet, type LogRecord, type MetricStore, type WriteSet } from '../../drivers/types';
import { finishMerging } from './merge';

export interface FoldWindowOptions {
  store: MetricStore;
  replay: (record: LogRecord, writes: WriteSet) => void;
  log?: Logger;
  /** default 1,000 ms */
  afterMs?: number;
  /** default 200,000 */
  atPoints?: number;
  /** asks the queue to run the store's next operation (a due fold) */
  wake: () => void;
}

export class FoldWindow {
  private writes: WriteSet = emptyWriteSet();
  private points = 0;
  private lastId = 0;
  private rebuild = true;
  private urgent = false;
  private timer: NodeJS.Timeout | null = null;
  private folding: Promise<void> | null = null;
  private waiting: Array<() => void> = [];
  private readonly afterMs: number;
  private readonly atPoints: number;

  constructor(private readonly options: FoldWindowOptions) {
    this.afterMs = options.afterMs ?? 1000;
    this.atPoints = options.atPoints ?? 200_000;
  }

  /** A fold should run before the store's next commit. */
  get due(): boolean {
    return this.urgent && this.holdsAnything();
  }

  /** Marks the window due when it holds anything; says whether it did. */
  wantsFold(): boolean {
    if (this.holdsAnything()) this.urgent = true;
    return this.urgent;
  }

  /** Resolves after the fold in flight, or the next one to start, has finished. */
  nextFold(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The fold in flight, if any. */
  get inFlight(): Promise<void> | null {
    return this.folding;
  }

  /** Takes the points of a durable log append (entries up to `lastId`). */
  accept(merges: ReadonlyArray<(writes: WriteSet) => void>, points: number, lastId: number): void {
    this.lastId = Math.max(this.lastId, lastId);
    if (!this.rebuild) for (const merge of merges) merge(this.writes);
    this.points += points;
    if (this.points >= this.atPoints) this.urgent = true;
    else this.schedule();
  }

  fold(): Promise<void> {
    this.urgent = false;
    this.clearTimer();
    const waiting = this.waiting;
    this.waiting = [];
    this.folding = this.foldNow().finally(() => {
      this.folding = null;
      for (const resolve of waiting) resolve();
    });
    return this.folding;
  }

  stop(): void {
    this.clearTimer();
  }

  private holdsAnything(): boolean {
    return this.points > 0 || this.rebuild;
  }

  private async foldNow(): Promise<void> {
    const { store } = this.options;
    let writes = this.writes;
    this.writes = emptyWriteSet();
    this.points = 0;
    try {
      if (this.rebuild) writes = await this.fromLog();
      else {
        finishMerging(writes);
        writes.logUpTo = this.lastId;
      }
      if (writes.logUpTo !== undefined) await store.apply(writes);
      this.rebuild = false;
    } catch (err) {
      // The points stay in the log: rebuild the window from it on the next attempt.
      this.options.log?.error('metric fold failed, retrying from the write log', { store: store.kind, error: String(err) });
      this.rebuild = true;
      this.schedule();
    }
  }

  /** The whole log as one write set (the log holds every accepted point not yet folded). */
  private async fromLog(): Promise<WriteSet> {
    const writes = emptyWriteSet();
    const records = await this.options.store.log!.unfolded();
    for (const record of records) this.options.replay(record, writes);
    finishMerging(writes);
    if (records.length > 0) writes.logUpTo = records[records.length - 1]!.id;
    return writes;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.urgent = true;
      this.options.wake();
    }, this.afterMs);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
