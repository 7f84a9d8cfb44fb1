// GET /api/v1/health while the metric writer's thread is dead (issue 27, docs/operations.md): 503
// {"status":"degraded","writer":{"state","error","code"}} while it is started again with back-off,
// then 200 once it runs; the points acknowledged before it died are replayed from the write log,
// each once.
//
// How the writer dies here, without a hook in the service: the test runs the server in its own
// process and sees each worker thread the service starts (node:worker_threads' Worker, replaced by
// a subclass before any is started; syncBuiltinESMExports hands the subclass to the modules that
// imported it), then terminates the writer's thread as a crash would end it. Its next start is
// made to fail by holding the database's write lock from another connection: the replay of the
// write log cannot commit (SQLITE_BUSY after the writer's busy timeout of 5 s), as a full disk or
// a damaged database would stop it. Once the lock is released, the next start succeeds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
import threads from 'node:worker_threads';
import Database from 'better-sqlite3';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';

/** The metric writer threads the service starts, with when each was started. */
const writers: Array<{ worker: threads.Worker; at: number }> = [];
const Original = threads.Worker;
class Tracked extends Original {
  constructor(...args: ConstructorParameters<typeof Original>) {
    super(...args);
    if (args[1]?.name === 'metric-writer') writers.push({ worker: this, at: performance.now() });
  }
}
(threads as { Worker: typeof Original }).Worker = Tracked;
syncBuiltinESMExports();

let server: TestServer;
let agent: ProjectAgent;
before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
});
after(async () => {
  await server.stop();
  (threads as { Worker: typeof Original }).Worker = Original;
  syncBuiltinESMExports();
});

const AT = '2026-03-01T10:00:00Z';
const as = () => ({ token: agent.sourceToken, sourceId: agent.sourceId });
const track = (key: string) =>
  request(server, 'POST', '/api/v1/metrics', { key, at: AT, values: { n: 1 } }, as());
const readN = async (key: string) => {
  const read = await request(
    server,
    'GET',
    `/api/v1/metrics?key=${key}&from=${AT}&to=${AT}&granularity=1h`,
    undefined,
    as(),
  );
  assert.equal(read.status, 200, read.text);
  return read.body.data.values[0]?.n;
};
const health = () => request(server, 'GET', '/api/v1/health');

/** Polls health until `accept` holds (at most `ms`); returns that answer. */
async function healthUntil(accept: (h: Awaited<ReturnType<typeof health>>) => boolean, ms: number) {
  const deadline = performance.now() + ms;
  for (;;) {
    const h = await health();
    if (accept(h)) return h;
    if (performance.now() > deadline) assert.fail(`health never matched: ${h.status} ${h.text}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

test(
  'health answers 503 degraded while the writer is dead, with why, and 200 once it runs again; nothing acknowledged is lost',
  embeddedOnly("the embedded store's metric writer holds no project in cluster mode"),
  async () => {
    // folded before the crash
    assert.equal((await track('before')).status, 201);
    assert.equal(await readN('before'), 1);
    const db = new Database(path.join(server.dataDir, 'service.db'));
    const foldedUpTo = () =>
      db.prepare('SELECT folded_up_to FROM metric_fold_state WHERE id = 1').pluck().get() as number;
    for (const deadline = performance.now() + 20_000; foldedUpTo() < 1;) {
      assert.ok(performance.now() < deadline, 'the first point is folded within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ok = await health();
    assert.deepEqual([ok.status, ok.body.status, ok.body.writer], [200, 'ok', undefined]);

    // acknowledged, in the write log, not folded yet (a window gathers for a second) when the thread dies
    assert.equal((await track('unfolded')).status, 201);
    assert.equal(writers.length, 1);
    const first = writers[0]!;
    // The next start cannot replay the log: another connection holds the write lock.
    db.exec('BEGIN IMMEDIATE');
    const killedAt = performance.now();
    assert.equal(await first.worker.terminate(), 1);

    const dead = await health();
    assert.equal(dead.status, 503, dead.text);
    assert.equal(dead.headers.get('retry-after'), '1');
    assert.equal(dead.body.status, 'degraded');
    assert.equal(dead.body.api_version, 'v1');
    assert.ok(dead.body.timestamp && dead.body.server_version);
    assert.deepEqual(dead.body.writer, { state: 'restarting', error: 'stopped (exit code 1)' });
    const refused = await track('while-dead');
    assert.equal(refused.status, 503, 'a write while the writer is dead is refused, never lost');
    assert.ok(refused.headers.get('retry-after'));

    // The restart after the first back-off (0.5 s) fails on the lock: health says why, with its code.
    const busy = await healthUntil((h) => h.body.writer?.code === 'SQLITE_BUSY', 20_000);
    assert.equal(busy.status, 503);
    assert.deepEqual(busy.body.writer, {
      state: 'restarting',
      error: 'database is locked',
      code: 'SQLITE_BUSY',
    });
    assert.ok(writers.length >= 2);
    assert.ok(
      writers[1]!.at - killedAt >= 450,
      `restarted ${Math.round(writers[1]!.at - killedAt)} ms after the crash`,
    );
    db.exec('ROLLBACK');

    // The next start waits the doubled back-off (1 s) after that failure (itself the writer's 5 s
    // busy timeout after the start), replays the log and runs.
    const back = await healthUntil((h) => h.status === 200, 20_000);
    assert.deepEqual([back.body.status, back.body.writer], ['ok', undefined]);
    assert.equal(writers.length, 3);
    assert.ok(
      writers[2]!.at - writers[1]!.at >= 950,
      `restarted ${Math.round(writers[2]!.at - writers[1]!.at)} ms after the failed start began`,
    );
    assert.equal(await readN('before'), 1, 'what was folded before is kept');
    assert.equal(await readN('unfolded'), 1, 'the acknowledged point is replayed once');
    assert.ok(foldedUpTo() >= 2, 'the replay folded the record left in the log');
    db.close();
    assert.equal(await readN('while-dead'), undefined);
    assert.equal((await track('after')).status, 201);
    assert.equal(await readN('after'), 1);
  },
);
