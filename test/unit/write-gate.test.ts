// The event loop's connection gets the write lock between the metric writer's fold transactions
// (storage/write-gate.ts): with folds running back to back, its writes still commit well within a
// short busy timeout, instead of missing the gaps until the timeout runs out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { toHttp } from '../../src/errors';
import { openDatabase } from '../../src/storage/db';
import { writeGateOf } from '../../src/storage/write-gate';
import { migrate } from '../../src/storage/migrations';
import { createMetricsEngine } from '../../src/domain/metrics/engine';
import { projectSource } from '../helpers/source';

const project = Object.freeze(projectSource({ id: 'b3f1c7a2-0000-4000-8000-00000000000a' }));

test('writes of the event loop connection commit between back-to-back folds', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gate-test-'));
  const db = openDatabase(path.join(dir, 'service.db'));
  migrate(db);
  const engine = createMetricsEngine({
    db,
    config: {
      limits: { maxBodyBytes: 1 << 20, sqliteUploadMaxBytes: 1 << 20, writeQueueMaxPoints: 1_000_000 },
      features: { projectsEnabled: true, registrationEnabled: true },
    },
    // fold at once and in transactions of 2 ms: the writer holds the lock nearly all the time
    writer: { foldAfterMs: 1, maxFoldAfterMs: 1, chunkMs: 2 },
  });
  try {
    db.exec('CREATE TABLE gate_probe (n INTEGER)');
    db.pragma('busy_timeout = 150');
    const at = Date.UTC(2025, 2, 4, 10);
    const writes: Array<Promise<number>> = [];
    for (let b = 0; b < 25; b++) {
      const points = Array.from({ length: 2_000 }, (_, i) => ({
        key: `k${b}.${i}`,
        at: new Date(at + i * 60_000).toISOString(),
        values: { n: 1 },
      }));
      writes.push(engine.ingestBatch(project, { points }));
    }
    await Promise.all(writes);
    // The writer folds 50,000 keys x 7 granularities now; meanwhile the event loop writes.
    const insert = db.prepare('INSERT INTO gate_probe (n) VALUES (?)');
    let slowest = 0;
    for (let n = 0; n < 40; n++) {
      const started = performance.now();
      insert.run(n);
      slowest = Math.max(slowest, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    assert.equal(db.prepare('SELECT count(*) FROM gate_probe').pluck().get(), 40);
    assert.ok(slowest < 150, `slowest write ${slowest.toFixed(1)} ms`);
    await engine.flush();
  } finally {
    await engine.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a write that does not get the lock within its busy timeout is a 503 with Retry-After, not a 500', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gate-test-'));
  const holder = openDatabase(path.join(dir, 'service.db'));
  const other = openDatabase(path.join(dir, 'service.db'));
  try {
    holder.exec('CREATE TABLE t (n INTEGER)');
    other.pragma('busy_timeout = 0');
    holder.exec('BEGIN IMMEDIATE');
    let caught: unknown;
    try {
      other.prepare('INSERT INTO t (n) VALUES (1)').run();
    } catch (err) {
      caught = err;
    }
    holder.exec('ROLLBACK');
    const http = toHttp(caught);
    assert.equal(http.status, 503);
    assert.equal(http.headers['Retry-After'], '1');
    assert.match(String(http.body.errors.detail), /busy/);
  } finally {
    holder.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('writes hold the gate while they run; reads and deferred transactions do not', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gate-test-'));
  const db = openDatabase(path.join(dir, 'service.db'));
  try {
    const gate = writeGateOf(db);
    db.exec('CREATE TABLE t (n INTEGER)');
    const clear = () => gate.waitClear(0);
    db.function('gate_clear', () => (clear() ? 1 : 0));
    // a statement that writes runs with the gate held; one that reads does not
    db.prepare('INSERT INTO t (n) SELECT gate_clear()').run();
    assert.equal(db.prepare('SELECT n FROM t').pluck().get(), 0);
    assert.equal(db.prepare('SELECT gate_clear()').pluck().get(), 1);
    assert.equal(
      db.transaction(() => clear())(),
      true,
      'a deferred transaction (reads) leaves the gate open',
    );
    assert.equal(db.transaction(() => clear()).immediate(), false, 'an immediate one holds it from BEGIN');
    assert.equal(db.transaction(() => clear()).exclusive(), false);
    assert.equal(clear(), true, 'and lets go at COMMIT');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
