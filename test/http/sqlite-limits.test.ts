// Bounds on sqlite source files (SPEC 8, 9): a slow operation on a pathological but schema-valid
// file answers 503 + Retry-After past its deadline while health keeps answering and leaves no trace; unused handles are
// closed (descriptors drop back); a symlink or hard link swapped in after setup is refused at open.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, readdirSync, readlinkSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { request, signupWithOrganization, type Agent, embeddedOnly } from '../helpers/server';
import {
  type Restartable,
  healthy,
  readHour,
  sqliteSource,
  startFresh,
  stopAndRemove,
  track,
} from '../helpers/sqlite-sources';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Descriptors of this process open on files under `dir`. */
function descriptorsUnder(dir: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${dir}${path.sep}`)) n++;
    } catch {
      // closed while listing
    }
  }
  return n;
}

describe('sqlite source bounds', embeddedOnly('SQLite database sources are refused in cluster mode'), () => {
  let server: Restartable;
  let agent: Agent;
  let folder: string;
  before(async () => {
    server = await startFresh({
      SERVICE_SQLITE_SOURCE_TIMEOUT_MS: '1000',
      SERVICE_SQLITE_IDLE_CLOSE_MS: '400',
    });
    agent = await signupWithOrganization(server);
    folder = path.join(server.root, agent.organizationId);
    mkdirSync(folder, { recursive: true });
  });
  after(() => stopAndRemove(server));

  test('a slow write answers 503 with Retry-After; health answers within a second meanwhile; the row is intact; others keep working', async () => {
    // Schema-valid but pathological: one bucket row of 3.5 MB holding 290,000 members. A point of
    // 1,000 leaves into it is 1,000 upserts, each parsing and rewriting that JSON: tens of seconds.
    const file = path.join(folder, 'slow.db');
    const members = Array.from({ length: 290_000 }, (_, i) => `"k${i}":1`).join(',');
    const db = new Database(file);
    db.exec(
      'CREATE TABLE trifle_stats (key varchar(255), data json); CREATE UNIQUE INDEX idx_trifle_stats_key ON trifle_stats (key);',
    );
    db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run(
      'orders::1h::1741082400',
      `{${members}}`,
    );
    db.close();
    const slow = await sqliteSource(server, agent, { file_path: 'slow.db' });
    const other = await sqliteSource(server, agent, { file_path: 'other.db' });
    assert.equal((await track(server, other, { count: 3 })).status, 201);

    const leaves = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`leaf${i}`, 1]));
    const pending = track(server, slow, leaves);
    await sleep(50);
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      assert.ok(await healthy(server));
      assert.ok(Date.now() - started < 1000, `health took ${Date.now() - started} ms`);
      await sleep(50);
    }
    const res = await pending;
    assert.equal(res.status, 503, res.text);
    assert.equal(res.headers.get('retry-after'), '30'); // the slow file rests for 30 s
    assert.deepEqual(res.body, {
      errors: { detail: 'The database source took too long to answer, retry later' },
    });
    // The slow file rests: asked again at once, it answers 503 without running (well within the limit).
    const started = Date.now();
    const again = await readHour(server, slow);
    assert.equal(again.status, 503);
    const retryAfter = Number(again.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 30, String(retryAfter));
    assert.ok(Date.now() - started < 900, `took ${Date.now() - started} ms`);
    assert.deepEqual((await readHour(server, other)).body.data.values, [{ count: 3 }]);
    assert.ok(await healthy(server));
    // The cut transaction left nothing behind: the row is as it was, and the file is not locked.
    const check = new Database(file, { timeout: 5000 });
    const row = check
      .prepare('SELECT data FROM trifle_stats WHERE key = ?')
      .pluck()
      .get('orders::1h::1741082400') as string;
    check.close();
    assert.equal(row, `{${members}}`);
  });

  test('handles unused for the idle time are closed: descriptors drop back', async () => {
    const sources = [];
    for (let i = 0; i < 5; i++)
      sources.push(await sqliteSource(server, agent, { file_path: `idle/${i}.db` }));
    await sleep(600);
    const idleDir = path.join(folder, 'idle');
    const before = descriptorsUnder(idleDir);
    for (const src of sources) assert.equal((await track(server, src, { count: 1 })).status, 201);
    assert.ok(descriptorsUnder(idleDir) >= 5, `open: ${descriptorsUnder(idleDir)}`);
    let now = descriptorsUnder(idleDir);
    for (let i = 0; i < 40 && now > before; i++) {
      await sleep(100);
      now = descriptorsUnder(idleDir);
    }
    assert.equal(now, before);
    // Closed handles open again on use.
    assert.deepEqual((await readHour(server, sources[0]!)).body.data.values, [{ count: 1 }]);
    // A file deleted while its handle was closed is still noticed (409, not an empty read).
    rmSync(path.join(idleDir, '1.db'));
    const gone = await readHour(server, sources[1]!);
    assert.equal(gone.status, 409, gone.text);
    assert.match(gone.body.errors.detail, /has disappeared/);
  });

  test('a symlink swapped in after setup is refused at open (409); the data behind it is untouched', async () => {
    const src = await sqliteSource(server, agent, { file_path: 'swap/stats.db' });
    assert.equal((await track(server, src, { count: 1 })).status, 201);
    renameSync(path.join(folder, 'swap', 'stats.db'), path.join(folder, 'swap', 'moved.db'));
    symlinkSync(path.join(folder, 'swap', 'moved.db'), path.join(folder, 'swap', 'stats.db'));
    for (const res of [await track(server, src, { count: 1 }), await readHour(server, src)]) {
      assert.equal(res.status, 409, res.text);
      assert.match(res.body.errors.detail, /symbolic link/);
    }
    // A folder on the way swapped for a symlink is refused the same way.
    const dirSrc = await sqliteSource(server, agent, { file_path: 'dir/stats.db' });
    renameSync(path.join(folder, 'dir'), path.join(folder, 'dir-real'));
    symlinkSync(path.join(folder, 'dir-real'), path.join(folder, 'dir'));
    const res = await track(server, dirSrc, { count: 1 });
    assert.equal(res.status, 409, res.text);
    assert.match(res.body.errors.detail, /symbolic link/);
    const db = new Database(path.join(folder, 'swap', 'moved.db'), { readonly: true });
    assert.deepEqual(
      db.prepare('SELECT data FROM trifle_stats WHERE key = ?').pluck().get('orders::1h::1741082400'),
      '{"count":1}',
    );
    db.close();
    assert.ok(await healthy(server));
  });

  test('a hard link made after setup is refused at open (409)', async () => {
    const src = await sqliteSource(server, agent, { file_path: 'linked.db' });
    assert.equal((await track(server, src, { count: 1 })).status, 201);
    linkSync(path.join(folder, 'linked.db'), path.join(folder, 'second-name'));
    const res = await readHour(server, src);
    assert.equal(res.status, 409, res.text);
    assert.match(res.body.errors.detail, /more than one hard link/);
  });
});
