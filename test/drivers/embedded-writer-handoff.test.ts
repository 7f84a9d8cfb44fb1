// The metric writer's client hands the appends logged in one turn of the event loop to its thread
// in one message (drivers/embedded/writer-client.ts); a request to the thread made in that same
// turn, such as a settle, must reach it after them. Here a settle follows an append at once, on a
// real writer thread, and the stored rows alone (the read asks the writer for nothing pending)
// must hold the append.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createEmbeddedStore } from '../../src/drivers/embedded/store';
import { startWriterThread } from '../../src/drivers/embedded/writer-client';
import { encodePoints } from '../../src/model/point-wire';
import type { ValidPoint } from '../../src/model/point';

const T0 = Date.UTC(2026, 1, 2);
const M = 60_000;
const settings = { id: 'src', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1m', '1h'] };

test('a settle right after an append folds the append (the hand-off goes first)', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'writer-handoff-'));
  const dbFile = path.join(dir, 'service.db');
  const db = openDatabase(dbFile);
  migrate(db);
  const port = startWriterThread({ dbFile, options: { foldAfterMs: 600_000, maxFoldAfterMs: 600_000 } });
  const store = createEmbeddedStore(db, { ...port, pending: async () => ({ parts: [] }) });
  try {
    for (let round = 0; round < 3; round++) {
      const points = Array.from(
        { length: 10 },
        (_, m) =>
          ({
            key: 'a',
            atMs: T0 + m * M,
            paths: ['n'],
            values: [1],
            assert: false,
            untracked: false,
          }) as ValidPoint,
      );
      await port.append([{ settings, wire: encodePoints(points) }]);
      await port.settle();
      const [hour] = await store.read({ sourceId: 'src', key: 'a', granularity: '1h' }, [T0]);
      assert.deepEqual(JSON.parse(hour!), { n: 10 * (round + 1) }, `round ${round}`);
    }
  } finally {
    await port.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
