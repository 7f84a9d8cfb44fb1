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
});
