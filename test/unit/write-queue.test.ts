import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/errors';
import type { LoggedPoints, MetricStore } from '../../src/drivers/types';
import { type WriteRequest, createWriteQueue } from '../../src/domain/metrics/write-queue';

/** The tags of a commit's entries (each tag is the source of its request). */
const tagsOf = (entries: readonly LoggedPoints[]) => entries.map((e) => e.settings.id);

/** A store that records each commit (as the list of tags of the requests in it). */
function fakeStore(kind = 'fake', fail?: (tags: string[]) => boolean) {
  const applied: string[][] = [];
  const store: MetricStore = {
    kind,
    setup: async () => ({ status: 'ready', message: '' }),
    async commit(entries) {
      const tags = tagsOf(entries);
      if (fail?.(tags)) throw new Error(`disk full while writing ${tags.join(',')}`);
      applied.push(tags);
    },
    settle: async () => undefined,
    read: async (_s, starts) => starts.map(() => '{}'),
    async close() {},
  };
  return { store, applied };
}

/** A request tagged by its source (no points of its own: the queue counts what it is told). */
const tag = (name: string): WriteRequest => ({
  settings: { id: name, timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1h'] },
  points: [],
});

/** A manual scheduler: deferred flushes run only when the test says so. */
function manualDefer() {
  const queued: Array<() => void> = [];
  return {
    defer: (fn: () => void) => void queued.push(fn),
    run: () => queued.splice(0).forEach((fn) => fn()),
  };
}

/** A manual merge-window timer: windows close only when the test says so. */
function manualWindows() {
  const open: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  return {
    timer: (fn: () => void, ms: number) => {
      const w = { fn, ms, cancelled: false };
      open.push(w);
      return () => void (w.cancelled = true);
    },
    /** the windows opened and neither closed nor cancelled, by length */
    pending: () => open.filter((w) => !w.cancelled).map((w) => w.ms),
    close: () => open.splice(0).forEach((w) => w.cancelled || w.fn()),
  };
}

/** A store whose commits wait for the test (gates), recording each commit's tags. */
function gatedStore(mergeWindowMs?: number) {
  const applied: string[][] = [];
  const gates: Array<() => void> = [];
  const store: MetricStore = {
    kind: 'gated',
    mergeWindowMs,
    setup: async () => ({ status: 'ready', message: '' }),
    async commit(entries) {
      const tags = tagsOf(entries);
      await new Promise<void>((resolve) => gates.push(resolve));
      applied.push(tags);
    },
    settle: async () => undefined,
    read: async (_s, starts) => starts.map(() => '{}'),
    async close() {},
  };
  return { store, applied, gates };
}

/** How a promise stands once pending callbacks have run: 'resolved', 'pending' or its rejection. */
async function settled(promise: Promise<unknown>): Promise<unknown> {
  const marker = Symbol('pending');
  const turn = new Promise((resolve) => setImmediate(() => resolve(marker)));
  const result = await Promise.race([
    promise.then(
      () => 'resolved',
      (err: unknown) => err,
    ),
    turn,
  ]);
  return result === marker ? 'pending' : result;
}

describe('write queue', () => {
  test('writes of one event-loop turn commit together, once, and only then resolve', async () => {
    const { store, applied } = fakeStore();
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, defer: clock.defer });
    const a = queue.enqueue(store, 1, tag('a'));
    const b = queue.enqueue(store, 2, tag('b'));
    assert.equal(queue.pendingPoints, 3);
    assert.equal(await settled(a), 'pending');
    assert.deepEqual(applied, []);
    clock.run();
    assert.equal(await settled(a), 'resolved');
    assert.equal(await settled(b), 'resolved');
    assert.deepEqual(applied, [['a', 'b']]);
    assert.equal(queue.pendingPoints, 0);
  });

  test('with the real scheduler the flush happens without any sleep', async () => {
    const { store, applied } = fakeStore();
    const queue = createWriteQueue({ maxPendingPoints: 100 });
    await Promise.all([queue.enqueue(store, 1, tag('a')), queue.enqueue(store, 1, tag('b'))]);
    assert.deepEqual(applied, [['a', 'b']]);
  });

  test('one transaction per store per flush', async () => {
    const one = fakeStore('one');
    const two = fakeStore('two');
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, defer: clock.defer });
    const all = Promise.all([
      queue.enqueue(one.store, 1, tag('a')),
      queue.enqueue(two.store, 1, tag('b')),
      queue.enqueue(one.store, 1, tag('c')),
    ]);
    clock.run();
    await all;
    assert.deepEqual(one.applied, [['a', 'c']]);
    assert.deepEqual(two.applied, [['b']]);
  });

  test('reaching the size cap commits at once, without waiting for the event loop', async () => {
    const { store, applied } = fakeStore();
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, flushAtPoints: 5, defer: clock.defer });
    const a = queue.enqueue(store, 2, tag('a'));
    const b = queue.enqueue(store, 3, tag('b'));
    assert.deepEqual(applied, [['a', 'b']]);
    assert.equal(await settled(a), 'resolved');
    assert.equal(await settled(b), 'resolved');
    const c = queue.enqueue(store, 1, tag('c'));
    assert.equal(await settled(c), 'pending');
    clock.run();
    assert.deepEqual(applied, [['a', 'b'], ['c']]);
  });

  test('a full queue refuses synchronously with 503 and Retry-After, taking nothing', async () => {
    const { store, applied } = fakeStore();
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 10, defer: clock.defer });
    const first = queue.enqueue(store, 8, tag('a'));
    let merged = false;
    const refused: WriteRequest = {
      ...tag('x'),
      get points() {
        merged = true;
        return [];
      },
    };
    assert.throws(
      () => queue.enqueue(store, 3, refused),
      (err: unknown) => err instanceof AppError && err.status === 503 && err.options.retryAfter === 1,
    );
    assert.equal(merged, false);
    assert.equal(queue.pendingPoints, 8);
    const fits = queue.enqueue(store, 2, tag('b'));
    clock.run();
    await Promise.all([first, fits]);
    assert.deepEqual(applied, [['a', 'b']]);
    // Once committed, there is room again; a lone request larger than the bound still passes.
    const big = queue.enqueue(store, 50, tag('c'));
    clock.run();
    await big;
  });

  test('a failed transaction rejects exactly the requests merged into it', async () => {
    const failing = fakeStore('failing', (tags) => tags.includes('bad'));
    const healthy = fakeStore('healthy');
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, defer: clock.defer });
    const a = queue.enqueue(failing.store, 1, tag('a'));
    const bad = queue.enqueue(failing.store, 1, tag('bad'));
    const other = queue.enqueue(healthy.store, 1, tag('c'));
    clock.run();
    assert.match(String(await settled(a)), /disk full while writing a,bad/);
    assert.match(String(await settled(bad)), /disk full/);
    assert.equal(await settled(other), 'resolved');
    assert.equal(queue.pendingPoints, 0);
    // The next flush of the same store starts clean.
    const later = queue.enqueue(failing.store, 1, tag('d'));
    clock.run();
    assert.equal(await settled(later), 'resolved');
    assert.deepEqual(failing.applied, [['d']]);
  });

  test('apply failures pass through translateError', async () => {
    const { store } = fakeStore('busy', () => true);
    const clock = manualDefer();
    const queue = createWriteQueue({
      maxPendingPoints: 100,
      defer: clock.defer,
      translateError: () => new Error('mapped'),
    });
    const p = queue.enqueue(store, 1, tag('a'));
    clock.run();
    assert.match(String(await settled(p)), /mapped/);
  });

  test('flush commits now; close commits and then refuses', async () => {
    const { store, applied } = fakeStore();
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, defer: clock.defer });
    const a = queue.enqueue(store, 1, tag('a'));
    await queue.flush();
    assert.equal(await settled(a), 'resolved');
    const b = queue.enqueue(store, 1, tag('b'));
    await queue.close();
    assert.equal(await settled(b), 'resolved');
    assert.deepEqual(applied, [['a'], ['b']]);
    assert.throws(
      () => queue.enqueue(store, 1, tag('c')),
      (err: unknown) => err instanceof AppError && err.status === 503,
    );
  });

  test('a slow store has one commit in flight; writes arriving meanwhile commit next, in order', async () => {
    const applied: string[][] = [];
    const gates: Array<() => void> = [];
    const store: MetricStore = {
      kind: 'slow',
      setup: async () => ({ status: 'ready', message: '' }),
      async commit(entries) {
        const tags = tagsOf(entries);
        await new Promise<void>((resolve) => gates.push(resolve));
        applied.push(tags);
      },
      settle: async () => undefined,
      read: async (_s, starts) => starts.map(() => '{}'),
      async close() {},
    };
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, defer: clock.defer });
    const a = queue.enqueue(store, 1, tag('a'));
    clock.run();
    const b = queue.enqueue(store, 1, tag('b'));
    const c = queue.enqueue(store, 1, tag('c'));
    clock.run(); // 'a' is still in flight: b and c wait for it
    assert.equal(gates.length, 1);
    assert.equal(queue.pendingPoints, 3);
    gates.shift()!();
    assert.equal(await settled(a), 'resolved');
    await new Promise((r) => setImmediate(r));
    assert.equal(gates.length, 1, 'b and c start as one commit once a settles');
    gates.shift()!();
    assert.deepEqual([await settled(b), await settled(c)], ['resolved', 'resolved']);
    assert.deepEqual(applied, [['a'], ['b', 'c']]);
    assert.equal(queue.pendingPoints, 0);
  });

  test('a store with a merge window commits once the window since its first write has passed', async () => {
    const windowed = fakeStore('cluster');
    const plain = fakeStore('embedded');
    const windows = manualWindows();
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, defer: clock.defer, windowTimer: windows.timer });
    (windowed.store as { mergeWindowMs?: number }).mergeWindowMs = 50;
    const a = queue.enqueue(windowed.store, 1, tag('a'));
    const b = queue.enqueue(windowed.store, 1, tag('b'));
    const other = queue.enqueue(plain.store, 1, tag('x'));
    assert.deepEqual(windows.pending(), [50], 'one window for the store, opened by its first write');
    clock.run(); // the event loop is free: the plain store commits, the windowed one waits
    assert.equal(await settled(other), 'resolved');
    assert.equal(await settled(a), 'pending');
    const c = queue.enqueue(windowed.store, 1, tag('c'));
    assert.deepEqual(windowed.applied, []);
    windows.close();
    assert.deepEqual(
      [await settled(a), await settled(b), await settled(c)],
      ['resolved', 'resolved', 'resolved'],
    );
    assert.deepEqual(windowed.applied, [['a', 'b', 'c']]);
    assert.equal(queue.pendingPoints, 0);
  });

  test('a merge window: the next commit waits for its own window even when the last one is done', async () => {
    const { store, applied, gates } = gatedStore(20);
    const windows = manualWindows();
    const clock = manualDefer();
    const queue = createWriteQueue({ maxPendingPoints: 100, defer: clock.defer, windowTimer: windows.timer });
    const a = queue.enqueue(store, 1, tag('a'));
    windows.close();
    assert.equal(gates.length, 1, 'a is in flight');
    const b = queue.enqueue(store, 1, tag('b'));
    assert.deepEqual(windows.pending(), [20], "b's window opened while a is in flight");
    gates.shift()!();
    assert.equal(await settled(a), 'resolved');
    clock.run();
    await new Promise((r) => setImmediate(r));
    assert.equal(gates.length, 0, 'b waits for its window although nothing is in flight');
    windows.close();
    assert.equal(gates.length, 1);
    // A window that closes while a commit is in flight starts its commit when that one is done.
    const c = queue.enqueue(store, 1, tag('c'));
    windows.close();
    assert.equal(gates.length, 1, 'c waits for b');
    gates.shift()!();
    assert.equal(await settled(b), 'resolved');
    await new Promise((r) => setImmediate(r));
    assert.equal(gates.length, 1, 'c starts as soon as b is done');
    gates.shift()!();
    assert.equal(await settled(c), 'resolved');
    assert.deepEqual(applied, [['a'], ['b'], ['c']]);
  });

  test('a merge window yields to the size cap, to drain and to close', async () => {
    const { store, applied } = fakeStore('cluster');
    (store as { mergeWindowMs?: number }).mergeWindowMs = 1000;
    const windows = manualWindows();
    const queue = createWriteQueue({ maxPendingPoints: 100, flushAtPoints: 5, windowTimer: windows.timer });
    const a = queue.enqueue(store, 2, tag('a'));
    const b = queue.enqueue(store, 3, tag('b'));
    assert.deepEqual(applied, [['a', 'b']], 'the cap commits at once');
    assert.deepEqual(windows.pending(), [], 'and cancels the window');
    await Promise.all([a, b]);
    const c = queue.enqueue(store, 1, tag('c'));
    await queue.drain(store);
    assert.equal(await settled(c), 'resolved');
    const d = queue.enqueue(store, 1, tag('d'));
    await queue.close();
    assert.equal(await settled(d), 'resolved');
    assert.deepEqual(applied, [['a', 'b'], ['c'], ['d']]);
    assert.deepEqual(windows.pending(), []);
  });

  test('with the real timer a merge window gathers writes spread over it into one commit', async () => {
    const { store, applied } = fakeStore('cluster');
    (store as { mergeWindowMs?: number }).mergeWindowMs = 40;
    const queue = createWriteQueue({ maxPendingPoints: 100 });
    const started = performance.now();
    const writes = [queue.enqueue(store, 1, tag('a'))];
    await new Promise((r) => setTimeout(r, 10));
    writes.push(queue.enqueue(store, 1, tag('b')));
    await Promise.all(writes);
    assert.ok(performance.now() - started >= 39, 'answered after the window');
    assert.deepEqual(applied, [['a', 'b']]);
  });
});
