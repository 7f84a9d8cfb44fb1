// The metric writer: the one owner of the embedded store's writes and of their merge state. It
// runs on a thread of its own (embedded/writer-thread.ts), so merging and folding never hold the event
// loop that serves requests; tests and the backup command also run it in-process.
//
// A group commit's points are acknowledged once their record is in the write log (embedded/log.ts):
// on its thread the event loop appends them and hands them on (`merge`), in-process the writer
// appends them itself (`append`). They are merged, in order, into the gathering window
// (model/window/window.ts); a read asks after the merges before it. A second after a window's first
// point, at `foldAtBytes` of rows, or when asked to settle, the window is folded into the buckets in
// short transactions (embedded/fold.ts) while a new window gathers. A fold costs about the same for a
// second of points as for five when they touch the same rows, so a window gathers for four times as
// long as the last fold took (up to `maxFoldAfterMs`): under a heavy load folds take at most about
// a fifth of the writer's time. A read of the embedded store is lent what is not folded yet
// (`pending`), each window's part tagged with the number of the fold that writes it: the read
// keeps a part only for rows whose stored `fold` is below that number in its own snapshot, so it
// sees every acknowledged point at once and exactly once, also while a fold runs or cannot run (a
// full disk), and never asks again (drivers/embedded.ts).
//
// Back pressure: in-process, while a fold runs, a window that holds `maxWindowBytes` makes further
// appends wait, so the queue before the writer fills and the service answers 503 instead of
// growing; on its thread, the event loop bounds what it has handed on and not seen merged.
import path from 'node:path';
import type { Logger } from '../../lib/log';
import type { Db } from '../../storage/db';
import type { WriteGate } from '../../storage/write-gate';
import type { BucketCacheLimits } from './bucket-cache';
import { LogAppender, type LogRecord, dropFolded, recoverLog, setAside } from './log';
import type { PendingPart, PendingSeries } from '../../model/row-delta';
import { SYSTEM_KEY, type WriteSet } from '../../model/write-set';
import { Fold } from './fold';
import { FoldTarget } from './fold-target';
import { PlanCache, type PlanInput, type SourcePlan } from '../../model/plan';
import type { LoggedPoints } from '../../model/wire';
import { wireFromBytes, wireToParts } from '../../model/point-wire';
import { IngestWindow } from '../../model/window/window';

/**
 * A window gathers for this many times as long as the last fold took (within foldAfterMs and
 * maxFoldAfterMs): under a heavy load folds then take about a fifth of the writer's time.
 */
export const FOLD_FACTOR = 4;

/** One source's points of a group commit (model/wire.ts). */
export type AppendEntry = LoggedPoints;

export interface MetricWriterOptions {
  /** the writer's own connection to the service database (file-backed: the log lives beside it) */
  db: Db;
  log?: Logger;
  /** how long a window gathers after its first point, at least (default 1,000 ms) */
  foldAfterMs?: number;
  /** ... and at most, when folds are slow (default 5,000 ms) */
  maxFoldAfterMs?: number;
  /** bytes of rows and groups that start a window's fold at once (default 32 MB: about 300,000 rows) */
  foldAtBytes?: number;
  /**
   * bytes of the gathering window beyond which appends wait for the running fold (default 64 MB),
   * whatever clients send: many keys, many leaves per point
   */
  maxWindowBytes?: number;
  /** work per fold transaction (default 8 ms) */
  chunkMs?: number;
  /** a failed fold is retried after this long (default 1,000 ms) */
  retryMs?: number;
  cacheLimits?: BucketCacheLimits;
  /** the settings of a source, for records of a first-version log (which name only the source) */
  sourceSettings?: (id: string) => PlanInput | undefined;
  /**
   * Takes the requests waiting for the writer, in the middle of a fold's transaction (its thread
   * passes them to merge, pending...): a request then waits a millisecond, not a transaction.
   */
  poll?: () => void;
  /**
   * Answers the reads waiting for the writer (pending) and nothing else: called in the middle of
   * a long spread of a window's groups (model/window/window.ts), where a merge must not run.
   */
  pollReads?: () => void;
  /**
   * Whether the writer appends to the write log itself (default). Its thread leaves that to the
   * event loop (embedded/writer-client.ts), which logs a commit and acknowledges it at once, and only hands
   * the logged points on (`merge`).
   */
  appends?: boolean;
  /**
   * The gate of the other connection to the database (storage/write-gate.ts): each fold
   * transaction waits until none of its writes is waiting for the lock.
   */
  gate?: WriteGate;
  /**
   * Tests: inside a fold's transaction, every look at the clock first stalls this long (a slow
   * disk, a large window), so that requests are answered in the middle of long transactions.
   */
  foldStallMs?: number;
  /**
   * Told after each fold how far the log is folded (committed): the event loop then reads a series
   * with nothing appended since without asking the writer (embedded/writer-client.ts).
   */
  onFolded?: (upTo: number) => void;
  /**
   * Tests: every merge first stalls this long, answering reads meanwhile (pollReads), as a writer
   * far behind a burst does: reads must not wait for the merges queued before them.
   */
  mergeStallMs?: number;
}

interface AppendJob {
  entries: AppendEntry[];
  /** the number of the last log record of these points when they were logged elsewhere, else null */
  loggedUpTo: number | null;
  /** called once the points are logged and merged (no error), or were refused */
  done(err?: unknown): void;
}

/** Throws unless every point's key and path list exist and the values are the leaves' count. */
function checkWire(wire: ReturnType<typeof wireFromBytes>): void {
  const { keys, pathLists, meta, values } = wire;
  if (!Array.isArray(keys) || !Array.isArray(pathLists) || meta.length % 2 !== 0)
    throw new Error('body is not a list of points');
  let leaves = 0;
  for (let i = 1; i < meta.length; i += 2) {
    const m = meta[i]!;
    const key = Math.floor(m / 2 ** 24);
    const list = Math.floor((m % 2 ** 24) / 4);
    if (!Number.isSafeInteger(m) || m < 0 || key >= keys.length || !Array.isArray(pathLists[list]))
      throw new Error('body names a key or path list it lacks');
    leaves += pathLists[list]!.length;
  }
  if (leaves !== values.length) throw new Error('body holds another number of values than of leaves');
  const { assertFrom } = wire;
  if (
    assertFrom !== undefined &&
    (!Array.isArray(assertFrom) ||
      assertFrom.length !== pathLists.length ||
      assertFrom.some(
        (from, i) => !Number.isInteger(from) || (from < 1 && from !== -1) || from > pathLists[i]!.length,
      ))
  )
    throw new Error('body names pairs its path lists cannot hold');
}

/** The head of a log record: its source's bucketing settings. */
export const logHead = (p: PlanInput) =>
  JSON.stringify({
    id: p.id,
    timeZone: p.timeZone,
    beginningOfWeek: p.beginningOfWeek,
    granularities: p.granularities,
  });

export class MetricWriter {
  private readonly target: FoldTarget;
  private readonly logDir: string;
  /** the writer's own appender (null when the event loop appends: options.appends false) */
  private readonly appender: LogAppender | null;
  /** the last record number of the log (for the event loop's appender to go on from) */
  readonly lastSeq: number;
  private readonly plans = new PlanCache();
  private current = new IngestWindow();
  /** the last folded window, emptied, to gather next */
  private spare: IngestWindow | null = null;
  private folding: Fold | null = null;
  private foldNumber: number;
  private stamp: number;
  private foldedUpTo: number;
  /** log records merged into `current` end here */
  private currentUpTo: number;
  private readonly queue: AppendJob[] = [];
  private readonly afterFold: Array<() => void> = [];
  private timer: NodeJS.Timeout | null = null;
  private urgent = false;
  private stepping = false;
  private foldStarted = 0;
  /** how long the last fold took, first transaction to last (ms) */
  private lastFoldMs = 0;
  /** the rows the last fold wrote (sizes the next fold's row columns) */
  private lastFoldRows = 0;
  private closed = false;
  private readonly o: Required<
    Omit<
      MetricWriterOptions,
      | 'log'
      | 'cacheLimits'
      | 'sourceSettings'
      | 'poll'
      | 'pollReads'
      | 'appends'
      | 'gate'
      | 'foldStallMs'
      | 'mergeStallMs'
      | 'onFolded'
    >
  >;
  /** what the fold's transactions call every few pieces of work (MetricWriterOptions.poll) */
  private readonly poll?: () => void;

  constructor(private readonly options: MetricWriterOptions) {
    this.o = {
      db: options.db,
      foldAfterMs: options.foldAfterMs ?? 1000,
      maxFoldAfterMs: Math.max(options.maxFoldAfterMs ?? 5000, options.foldAfterMs ?? 1000),
      foldAtBytes: options.foldAtBytes ?? 32 * 1024 * 1024,
      maxWindowBytes: options.maxWindowBytes ?? 64 * 1024 * 1024,
      chunkMs: options.chunkMs ?? 8,
      retryMs: options.retryMs ?? 1000,
    };
    const stall = options.foldStallMs ?? 0;
    this.poll =
      stall > 0
        ? () => {
            for (const until = performance.now() + stall; performance.now() < until;);
            options.poll?.();
          }
        : options.poll;
    this.target = new FoldTarget(options.db, options.cacheLimits);
    const state = this.target.state();
    this.foldNumber = state.foldNumber;
    this.stamp = state.stamp;
    this.foldedUpTo = state.foldedUpTo;
    this.logDir = path.dirname(options.db.name);
    const warn = (msg: string, fields: Record<string, unknown>) => options.log?.warn(msg, fields);
    const { records, lastSeq } = recoverLog(this.logDir, state.foldedUpTo, { warn });
    this.recover(records, state.foldingUpTo);
    this.lastSeq = lastSeq;
    this.currentUpTo = lastSeq;
    this.current.poll = options.pollReads ?? null;
    this.appender = options.appends === false ? null : new LogAppender(this.logDir, lastSeq);
  }

  /** Points of one group commit: resolves once they are in the log and merged (acknowledged). */
  append(entries: AppendEntry[]): Promise<void> {
    return new Promise((resolve, reject) =>
      this.appendThen(entries, (err) => (err === undefined ? resolve() : reject(err))),
    );
  }

  /** append with a callback, called as soon as the points are in. */
  appendThen(entries: AppendEntry[], done: (err?: unknown) => void): void {
    if (this.closed) return done(new Error('the metric writer is closed'));
    this.queue.push({ entries, loggedUpTo: null, done });
    this.pump();
  }

  /**
   * Points the event loop has logged (records up to `upTo`) and acknowledged: merged in order.
   * They are never refused and never wait for window room (the event loop bounds what it has
   * handed on and not seen merged), only for a fold when their source's settings changed.
   */
  merge(entries: AppendEntry[], upTo: number, done: () => void = () => undefined): void {
    this.queue.push({ entries, loggedUpTo: upTo, done });
    this.pump();
  }

  /** Whether merges wait in the queue (a read then waits for them: whenDrained). */
  get waiting(): boolean {
    return this.queue.length > 0;
  }

  /** Resolves once the queue is empty (every acknowledged point is in a window). */
  whenDrained(): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (this.queue.length === 0 ? resolve() : this.afterFold.push(check));
      check();
    });
  }

  /**
   * What a read of one series must add to the stored rows: the part of each window, tagged with the
   * number of the fold that writes it (the folding window's, and the next for the gathering one). The
   * read compares that number with each stored row's `fold` in its own read transaction, whenever
   * that begins: nothing to retry (embedded/store.ts). `mergedUpTo` says which log records the
   * windows hold: the read merges the later ones it was acknowledged itself, so it never waits for
   * the merges queued before it.
   */
  pending(sourceId: string, key: string, granularity: string, startsMs: readonly number[]): PendingSeries {
    const out: PendingSeries = { parts: [], mergedUpTo: this.currentUpTo };
    if (startsMs.length === 0) return out;
    const firstMs = startsMs[0]!;
    const lastMs = startsMs[startsMs.length - 1]!;
    const windows: Array<[IngestWindow, number]> = [[this.current, this.foldNumber + 1]];
    if (this.folding) windows.unshift([this.folding.window, this.folding.number]);
    for (const [w, fold] of windows) {
      const part: PendingPart = { fold, rows: [], counts: [] };
      if (key === SYSTEM_KEY) part.counts = w.pendingCounts(sourceId, granularity, firstMs, lastMs);
      else part.rows = w.pendingRows(sourceId, key, granularity, startsMs);
      if (part.rows.length > 0 || part.counts.length > 0) out.parts.push(part);
    }
    return out;
  }

  /**
   * `pending` of many keys of one source, granularity and range, taken at one moment (one state of
   * the windows, one `mergedUpTo`), in the keys' order: a multi-key read's one request.
   */
  pendingMany(
    sourceId: string,
    keys: readonly string[],
    granularity: string,
    startsMs: readonly number[],
  ): PendingSeries[] {
    return keys.map((key) => this.pending(sourceId, key, granularity, startsMs));
  }

  /** Resolves once every point acknowledged before the call is folded into the buckets. */
  async settle(): Promise<void> {
    await this.whenDrained();
    const target = this.currentUpTo;
    while (this.foldedUpTo < target) {
      this.urgent = true;
      const done = new Promise<void>((resolve) => this.afterFold.push(resolve));
      this.startFold();
      await done;
    }
  }

  /**
   * A merged write set (the store contract's `apply`), folded in one transaction after everything
   * acknowledged before it: all of it or, on an error, nothing.
   */
  async applyWriteSet(writes: WriteSet): Promise<void> {
    // It takes the next fold number, which reads lent the gathering window under: that window must
    // be empty (folded) when it does.
    for (;;) {
      await this.settle();
      if (this.folding) await new Promise<void>((resolve) => this.afterFold.push(resolve));
      else if (this.current.points === 0 && this.queue.length === 0) break;
    }
    const window = new IngestWindow();
    for (const [sourceId, keys] of writes.sources) window.addWriteSet(sourceId, keys);
    const fold = new Fold(this.target, window, this.foldNumber + 1, this.foldedUpTo);
    fold.step(Infinity, this.stamp + 1);
    this.foldNumber++;
    this.stamp++;
  }

  /** Folds what is acknowledged, then refuses appends; the caller closes the database. */
  async close(): Promise<void> {
    await this.settle();
    this.closed = true;
    this.clearTimer();
    for (const job of this.queue.splice(0)) job.done(new Error('the metric writer is closed'));
    this.appender?.close();
  }

  /** Folds the log's records that the fold state does not cover (after a restart), at once. */
  private recover(records: LogRecord[], foldingUpTo: number | null): void {
    if (records.length === 0) return;
    let window = new IngestWindow();
    let number = foldingUpTo !== null ? this.foldNumber : this.foldNumber + 1;
    let upTo = this.foldedUpTo;
    const foldNow = () => {
      if (window.points > 0) {
        const fold = new Fold(this.target, window, number, upTo);
        while (!fold.done) fold.step(Infinity, ++this.stamp);
        this.foldNumber = number;
        number++;
      }
      this.foldedUpTo = upTo;
      window = new IngestWindow();
    };
    for (const record of records) {
      // An interrupted fold is finished under its own number first (embedded/fold.ts: exactly once).
      if (foldingUpTo !== null && upTo <= foldingUpTo && record.seq > foldingUpTo) foldNow();
      let entry: AppendEntry | null;
      let plan: SourcePlan | null = null;
      try {
        entry = this.decode(record);
        if (entry) plan = this.plans.get(entry.settings);
      } catch (err) {
        // A record that reads whole but does not decode (a log of an older format has no
        // checksum) is set aside; the records after it are replayed.
        setAside(record, `does not decode: ${String(err)}`, (msg, fields) =>
          this.options.log?.warn(msg, fields),
        );
        entry = null;
      }
      if (entry && plan) {
        if (window.planOf(plan.sourceId) && window.planOf(plan.sourceId) !== plan) foldNow();
        window.add(plan, entry.wire);
      }
      upTo = record.seq;
    }
    foldNow();
    dropFolded(this.logDir, this.foldedUpTo);
    this.options.log?.info('metric write log replayed', { records: records.length });
  }

  /** A record's points; throws when they do not decode into what a window can take. */
  private decode(record: LogRecord): AppendEntry | null {
    const settings =
      record.head !== null
        ? (JSON.parse(record.head) as PlanInput)
        : this.options.sourceSettings?.(record.sourceId!);
    if (!settings) return null; // a deleted source's points are dropped
    const s = settings as Partial<PlanInput>;
    if (typeof s.id !== 'string' || typeof s.timeZone !== 'string' || !Array.isArray(s.granularities))
      throw new Error("head is not a source's settings");
    const wire = wireFromBytes(record.body);
    checkWire(wire);
    return { settings, wire };
  }

  /** Takes queued appends in order while the window can take them. */
  private pump(): void {
    while (this.queue.length > 0) {
      const job = this.queue[0]!;
      if (job.loggedUpTo === null && this.folding && this.current.bytes >= this.o.maxWindowBytes)
        return this.waitForFold();
      const plans = job.entries.map((e) => this.plans.get(e.settings));
      // A window holds each source under one set of settings: a change waits for the next window.
      if (
        plans.some(
          (p) => this.current.planOf(p.sourceId) !== undefined && this.current.planOf(p.sourceId) !== p,
        )
      ) {
        this.urgent = true;
        this.startFold();
        return this.waitForFold();
      }
      const stall = this.options.mergeStallMs ?? 0;
      for (const until = performance.now() + stall; performance.now() < until;) this.options.pollReads?.();
      this.queue.shift();
      let upTo: number;
      try {
        upTo =
          job.loggedUpTo ??
          this.appender!.append(
            job.entries.map((e) => ({ head: logHead(e.settings), body: wireToParts(e.wire) })),
          );
      } catch (err) {
        job.done(err);
        continue;
      }
      // A read is answered between two merges, never inside one (the window does not poll while it
      // adds): it finds every record up to currentUpTo in the windows and none after it.
      job.entries.forEach((e, i) => this.current.add(plans[i]!, e.wire));
      this.currentUpTo = upTo;
      this.current.spreadIfFull(); // a long spread: it answers reads as it goes
      job.done();
    }
    if (this.current.bytes >= this.o.foldAtBytes) this.urgent = true;
    if (this.urgent) this.startFold();
    else if (this.current.points > 0) this.schedule();
  }

  private waitForFold(): void {
    this.afterFold.push(() => this.pump());
  }

  /** Begins folding the gathering window unless a fold runs (it then follows that one). */
  private startFold(): void {
    if (this.folding || this.closed) return;
    if (this.current.points === 0) {
      this.urgent = false;
      this.foldedUpTo = Math.max(this.foldedUpTo, this.currentUpTo); // nothing of it is left to fold
      return this.foldFinished();
    }
    this.clearTimer();
    this.urgent = false;
    const window = this.current;
    window.reserveRows(this.lastFoldRows); // its groups spread into about as many rows as the last fold's
    this.current = this.spare ?? new IngestWindow({ rows: 0, groups: window.held.groups });
    this.current.poll = this.options.pollReads ?? null;
    this.spare = null;
    this.folding = new Fold(this.target, window, ++this.foldNumber, this.currentUpTo);
    this.foldStarted = performance.now();
    this.stepSoon();
  }

  private stepSoon(): void {
    if (this.stepping) return;
    this.stepping = true;
    setImmediate(() => {
      this.stepping = false;
      this.step();
    });
  }

  /** One transaction of the running fold; then the next, after the event loop had its turn. */
  private step(): void {
    const fold = this.folding;
    if (!fold) return;
    try {
      this.options.gate?.waitClear();
      fold.step(this.o.chunkMs, this.stamp + 1, this.poll);
      this.stamp++;
    } catch (err) {
      this.options.log?.error('metric fold failed, retrying', {
        error: String(err),
        code: (err as { code?: unknown }).code,
      });
      setTimeout(() => this.stepSoon(), this.o.retryMs).unref();
      return;
    }
    if (!fold.done) return this.stepSoon();
    this.folding = null;
    this.foldedUpTo = fold.upTo;
    this.lastFoldRows = fold.window.rows.count;
    // Its columns take the next window, but for the rows': those are sized again when it is folded.
    fold.window.reset();
    fold.window.releaseRows();
    this.spare = fold.window;
    try {
      dropFolded(this.logDir, fold.upTo);
    } catch (err) {
      this.options.log?.warn('folded write log segment not removed', { error: String(err) });
    }
    this.foldFinished();
    this.lastFoldMs = performance.now() - this.foldStarted;
    if (this.urgent || this.current.bytes >= this.o.foldAtBytes) this.startFold();
    else if (this.current.points > 0) this.schedule();
  }

  private foldFinished(): void {
    this.options.onFolded?.(this.foldedUpTo);
    for (const done of this.afterFold.splice(0)) done();
  }

  private schedule(): void {
    if (this.timer || this.closed) return;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.urgent = true;
        this.startFold();
      },
      Math.min(Math.max(FOLD_FACTOR * this.lastFoldMs, this.o.foldAfterMs), this.o.maxFoldAfterMs),
    );
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

export type { SourcePlan };
