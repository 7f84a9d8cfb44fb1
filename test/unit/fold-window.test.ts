// The write queue with a store that has a write log: acknowledgement after the append, folds that
// remove the entries they cover, a failed fold rebuilt from the log, a restart that finds entries.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LogEntry, LogRecord, MetricStore, WriteSet } from '../../src/drivers/types';

import { createWriteQueue, type LoggedPoints } from '../../src/domain/metrics/write-queue';
import { parsePoint } from '../../src/domain/metrics/ingest';
import { decodePoints, encodePoints, wireFromBytes, wireToBytes } from '../../src/domain/metrics/point-wire';

/** A store with an in-memory log; applied sets are recorded as the tags merged into them. */
function logStore(log: LogRecord[] = []) {
  const applied: string[][] = [];
  let failNext = 0;
  let nextId = log.length ? log[log.length - 1]!.id + 1 : 1;
  const store: MetricStore = {
    kind: 'logged',
    log: {
      async append(entries: readonly LogEntry[]) {
        for (const e of entries) log.push({ sourceId: e.sourceId, body: Buffer.from(e.body), id: nextId++ }); // bodies are lent for the call
        return nextId - 1;
      },
      async unfolded() {
        return [...log];
      },
    },
    setup: async () => ({ status: 'ready', message: '' }),
    async apply(writes: WriteSet) {
      if (failNext > 0) {
        failNext--;
        throw new Error('disk full');
      }
      applied.push([...(writes.sources.get('tags')?.keys() ?? [])]);
      if (writes.logUpTo !== undefined) log.splice(0, log.filter((r) => r.id <= writes.logUpTo!).length);
    },
    read: async (_s, starts) => starts.map(() => '{}'),
    async close() {},
  };
  return { store, applied, log, failOnce: () => (failNext = 1) };
}

const tagWrites = (writes: WriteSet, name: string) => {
  let tags = writes.sources.get('tags');
  if (!tags) writes.sources.set('tags', (tags = new Map()));
  tags.set(name, new Map());
};
// Points stand for tags: each tag is the key of one point.
const pointOf = (name: string) => parsePoint({ key: name, at: '2026-01-01T00:00:00Z', values: { n: 1 } });
const entry = (name: string): LoggedPoints => ({ sourceId: 's', points: [pointOf(name)] });
const replay = (record: LogRecord, writes: WriteSet) => {
  for (const p of decodePoints(wireFromBytes(record.body))) tagWrites(writes, p.key);
};
const queueFor = () => createWriteQueue({ maxPendingPoints: 100, replay, foldAfterMs: 60_000 });

describe('write queue with a write log', () => {
  test('writes are acknowledged once logged (one entry per commit), folded on settle, and the log is emptied', async () => {
    const { store, applied, log } = logStore();
    const queue = queueFor();
    await Promise.all(['a', 'b'].map((t) => queue.enqueue(store, 1, (w) => tagWrites(w, t), entry(t))));
    assert.equal(log.length, 1);
    assert.deepEqual(applied, []); // the first fold is a rebuild from the log
    await queue.settle(store);
    assert.deepEqual(applied, [['a', 'b']]);
    assert.equal(log.length, 0);
    await queue.enqueue(store, 1, (w) => tagWrites(w, 'c'), entry('c'));
    await queue.settle(store);
    assert.deepEqual(applied, [['a', 'b'], ['c']]);
    await queue.close();
  });

  test('entries found in the log at start are folded before anything else, once', async () => {
    const { store, applied, log } = logStore([{ id: 7, sourceId: 's', body: wireToBytes(encodePoints([pointOf('old')])) }]);
    const queue = queueFor();
    await queue.enqueue(store, 1, (w) => tagWrites(w, 'new'), entry('new'));
    await queue.settle(store);
    assert.deepEqual(applied, [['old', 'new']]);
    assert.equal(log.length, 0);
    await queue.settle(store);
    assert.equal(applied.length, 1);
    await queue.close();
  });

  test('after a failed fold the points stay in the log and the next fold applies them once', async () => {
    const { store, applied, log, failOnce } = logStore();
    const queue = queueFor();
    await queue.settle(store); // the start-up rebuild (empty)
    await queue.enqueue(store, 1, (w) => tagWrites(w, 'a'), entry('a'));
    failOnce();
    await queue.settle(store);
    assert.deepEqual(applied, []);
    assert.equal(log.length, 1);
    await queue.enqueue(store, 1, (w) => tagWrites(w, 'b'), entry('b'));
    await queue.settle(store);
    assert.deepEqual(applied, [['a', 'b']]);
    assert.equal(log.length, 0);
    await queue.close();
  });

  test('a write without its log entry is a programming error, refused before anything is taken', () => {
    const { store } = logStore();
    const queue = queueFor();
    assert.throws(() => queue.enqueue(store, 1, (w) => tagWrites(w, 'x')), /needs its logged points/);
    assert.equal(queue.pendingPoints, 0);
  });
});
