// The node caches of cluster mode dropped on LISTEN/NOTIFY (src/storage/pg/changes.ts): two or
// three nodes, each with its own store (pool and listening connection) and its own repositories
// over one scratch PostgreSQL database. The caches here keep an entry for a minute, so an entry
// dropped sooner was dropped by a notification (or a reconnection), never by the time-to-live.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPgSourcesRepo } from '../../src/storage/pg/sources';
import { createPgEnabledTransponders, createPgTranspondersRepo } from '../../src/storage/pg/transponders';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { CHANGES_CHANNEL, notifyChange, type ChangeFeed } from '../../src/storage/pg/changes';
import { SOURCE_CACHE_LIMIT, type SourceTokenRow } from '../../src/storage/sources';
import type { EnabledTransponders, Transponder } from '../../src/storage/transponders';
import type { Source } from '../../src/model/source';
import { pgSkip, proxyToDatabase, scratchPgStore, testSource, type ScratchStore } from '../helpers/pg-store';
import { SERVERS } from './network';

const skip = pgSkip();
/** the caches' time-to-live here: far longer than any wait of these tests */
const LONG_TTL_MS = 60_000;
/** what "at once" allows on this shared 2-core machine (the delays measured are printed) */
const PROMPT_MS = 500;

const source = testSource;

const token = (id: string, sourceId: string): SourceTokenRow => ({
  id,
  source_id: sourceId,
  organization_id: 'org-a',
  user_id: 'user-1',
  name: `token ${id}`,
  token_hash: `hash-${id}`,
  last5: id.slice(-5).padStart(5, '0'),
  can_read: 1,
  can_write: 1,
  created_at: 2000,
});

const transponder = (id: string, sourceId: string, patch: Partial<Transponder> = {}): Transponder => ({
  id,
  organizationId: 'org-a',
  sourceType: 'project',
  sourceId,
  name: `transponder ${id}`,
  key: 'api',
  paths: ['requests.errors', 'requests.count'],
  expression: 'a / b * 100',
  response: 'requests.error_rate',
  enabled: true,
  order: 0,
  insertedAt: 4000,
  updatedAt: 4000,
  ...patch,
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `seen` (every ms or so) until true: the ms from `since`; fails after `limitMs`. */
async function until(since: number, seen: () => Promise<boolean> | boolean, limitMs: number, what: string) {
  for (;;) {
    if (await seen()) return performance.now() - since;
    if (performance.now() - since > limitMs) assert.fail(`${what}: not within ${limitMs} ms`);
    await sleep(1);
  }
}

/** prefetch when it asks to be awaited, then enabled: what the engine's read path does */
async function read(cache: EnabledTransponders, sourceId: string) {
  const loading = cache.prefetch(sourceId);
  if (loading) await loading;
  return cache.enabled(sourceId);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => x.toFixed(1);

interface Node {
  store: PgStore;
  feed: ChangeFeed;
  sources: ReturnType<typeof createPgSourcesRepo>;
  transponders: ReturnType<typeof createPgTranspondersRepo>;
  enabled: EnabledTransponders;
}

function nodeOn(store: PgStore): Node {
  const node = {
    store,
    sources: createPgSourcesRepo(store, SOURCE_CACHE_LIMIT, LONG_TTL_MS),
    transponders: createPgTranspondersRepo(store),
    enabled: createPgEnabledTransponders(store, LONG_TTL_MS),
  };
  return { ...node, feed: store.changes()! };
}

describe('the node caches across nodes: LISTEN/NOTIFY', { skip }, () => {
  let pg: ScratchStore;
  let a: Node;
  let b: Node;
  const extra: PgStore[] = [];

  before(async () => {
    pg = await scratchPgStore();
    await pg.store.run(
      "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES ('user-1', 'a@example.com', 'a@example.com', 'A', 'x', 0)",
    );
    await pg.store.run(
      "INSERT INTO organizations (id, name, slug, created_at) VALUES ('org-a', 'Org', 'org-a', 0)",
    );
    a = nodeOn(pg.store);
    const other = createPgStore(pg.url, { applicationName: 'node-b' });
    extra.push(other);
    b = nodeOn(other);
    await until(performance.now(), () => a.feed.listening && b.feed.listening, 5_000, 'both nodes listen');
  });
  after(async () => {
    for (const store of extra) await store.close().catch(() => undefined);
    await pg?.drop();
  });

  test('a token revoked through node A is refused by node B at once; a source changed or removed too', async (t) => {
    await a.sources.insert(source('s1'));
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      assert.equal(await a.sources.insertToken(token(`t1-${i}`, 's1'), 'project'), true);
      const row = (await b.sources.tokenByHash(`hash-t1-${i}`))!;
      assert.equal(row.id, `t1-${i}`);
      assert.equal(await b.sources.tokenByHash(`hash-t1-${i}`), row, 'cached on B: no query per look-up');
      const started = performance.now();
      await a.sources.deleteToken(row);
      delays.push(
        await until(
          started,
          async () => (await b.sources.tokenByHash(`hash-t1-${i}`)) === undefined,
          PROMPT_MS,
          'revoked on B',
        ),
      );
    }
    t.diagnostic(
      `token revoked on A, refused on B after (from before A's DELETE): min ${ms(Math.min(...delays))}, median ${ms(median(delays))}, max ${ms(Math.max(...delays))} ms`,
    );

    const cached = (await b.sources.cachedById('s1'))!;
    assert.equal(await b.sources.cachedById('s1'), cached);
    let started = performance.now();
    await a.sources.updateSettings('s1', (current) => ({ ...current, displayName: 'Renamed on A' }));
    const renamed = await until(
      started,
      async () => (await b.sources.cachedById('s1'))?.displayName === 'Renamed on A',
      PROMPT_MS,
      'renamed on B',
    );
    await a.sources.setSetupStatus('s1', 'done');
    await until(
      started,
      async () => (await b.sources.cachedById('s1'))?.setupStatus === 'done',
      PROMPT_MS,
      'setup status on B',
    );

    assert.equal(await a.sources.insertToken(token('t1-last', 's1'), 'project'), true);
    assert.ok(await b.sources.tokenByHash('hash-t1-last'));
    started = performance.now();
    await a.sources.remove('s1');
    const removed = await until(
      started,
      async () =>
        (await b.sources.tokenByHash('hash-t1-last')) === undefined &&
        (await b.sources.cachedById('s1')) === undefined,
      PROMPT_MS,
      'the removed source and its token gone on B',
    );
    t.diagnostic(`source renamed on A, seen on B after ${ms(renamed)} ms; removed, ${ms(removed)} ms`);
  });

  test("a transponder added, changed, removed through node A is seen at once by node B's enabled-transponders cache", async (t) => {
    await a.sources.insert(source('s2'));
    assert.deepEqual(await read(b.enabled, 's2'), []);
    assert.equal(b.enabled.prefetch('s2'), undefined, 'cached on B');
    const ids = (list: readonly Transponder[]) => list.map((x) => x.id);

    let started = performance.now();
    const added = (await a.transponders.insert(transponder('x1', 's2'), true))!;
    const seenAdded = await until(started, () => b.enabled.prefetch('s2') !== undefined, PROMPT_MS, 'added');
    assert.deepEqual(ids(await read(b.enabled, 's2')), ['x1']);
    assert.equal(b.enabled.prefetch('s2'), undefined, 'cached again');

    started = performance.now();
    assert.ok(await a.transponders.update('s2', added.id, (current) => ({ ...current, enabled: false })));
    const seenChanged = await until(
      started,
      () => b.enabled.prefetch('s2') !== undefined,
      PROMPT_MS,
      'changed',
    );
    assert.deepEqual(await read(b.enabled, 's2'), []);

    assert.ok(await a.transponders.update('s2', added.id, (current) => ({ ...current, enabled: true })));
    await until(started, () => b.enabled.prefetch('s2') !== undefined, PROMPT_MS, 'enabled again');
    assert.deepEqual(ids(await read(b.enabled, 's2')), ['x1']);

    started = performance.now();
    assert.equal(await a.transponders.remove('s2', 'x1'), true);
    const seenRemoved = await until(
      started,
      () => b.enabled.prefetch('s2') !== undefined,
      PROMPT_MS,
      'removed',
    );
    assert.deepEqual(await read(b.enabled, 's2'), []);

    // a source with no change keeps its entry: only the source named is made stale
    await a.sources.insert(source('s2-other'));
    await read(b.enabled, 's2-other');
    await a.transponders.insert(transponder('x2', 's2'), true);
    await until(performance.now(), () => b.enabled.prefetch('s2') !== undefined, PROMPT_MS, 'added');
    assert.equal(b.enabled.prefetch('s2-other'), undefined, 'another source stays cached');
    t.diagnostic(
      `transponder change on A seen on B after: added ${ms(seenAdded)}, changed ${ms(seenChanged)}, removed ${ms(seenRemoved)} ms`,
    );
  });

  test('a listening connection killed reconnects and drops everything cached; a change missed meanwhile is not kept', async (t) => {
    // node C: a slower first retry (250-500 ms), so that a change lands while it is not listening
    const store = createPgStore(pg.url, { applicationName: 'node-c', listen: { minBackoffMs: 500 } });
    extra.push(store);
    const c = nodeOn(store);
    await until(performance.now(), () => c.feed.listening, 5_000, 'C listens');
    await a.sources.insert(source('s3'));
    await a.transponders.insert(transponder('x3', 's3'), true);
    for (const id of ['t3-kept', 't3-missed'])
      assert.equal(await a.sources.insertToken(token(id, 's3'), 'project'), true);
    const kept = (await c.sources.tokenByHash('hash-t3-kept'))!;
    const missed = (await c.sources.tokenByHash('hash-t3-missed'))!;
    const source3 = (await c.sources.cachedById('s3'))!;
    const list = await read(c.enabled, 's3');
    assert.equal(c.enabled.prefetch('s3'), undefined);

    const listens = c.feed.listens;
    const pid = c.feed.backendPid!;
    assert.ok(pid > 0);
    const found = await pg.store.one<{ application_name: string }>(
      'SELECT application_name FROM pg_stat_activity WHERE pid = $1',
      [pid],
    );
    assert.equal(found?.application_name, 'node-c changes', 'its own connection, not one of the pool');
    const killed = performance.now();
    const ok = await pg.store.one<{ ok: boolean }>('SELECT pg_terminate_backend($1) AS ok', [pid]);
    assert.equal(ok?.ok, true);
    await until(killed, () => !c.feed.listening, 2_000, 'C sees its connection gone');

    // Revoked while C does not listen: the notification is lost, C's cache still holds the row.
    await a.sources.deleteToken(missed);
    assert.equal(c.feed.listening, false, 'still reconnecting (else this test proves nothing)');
    assert.equal(
      await c.sources.tokenByHash('hash-t3-missed'),
      missed,
      'missed: kept until the reconnection',
    );

    const back = await until(killed, () => c.feed.listens === listens + 1, 5_000, 'C listens again');
    assert.notEqual(c.feed.backendPid, pid, 'a new connection');
    assert.equal(await c.sources.tokenByHash('hash-t3-missed'), undefined, 'the missed revocation holds');
    const reloaded = await c.sources.tokenByHash('hash-t3-kept');
    assert.notEqual(reloaded, kept, 'read again: the cache was dropped');
    assert.deepEqual(reloaded, kept);
    assert.notEqual(await c.sources.cachedById('s3'), source3, 'the source read again');
    assert.ok(c.enabled.prefetch('s3') instanceof Promise, 'the enabled transponders read again');
    assert.deepEqual(await read(c.enabled, 's3'), list);

    // and notifications arrive again
    const started = performance.now();
    await a.sources.deleteToken(kept);
    const after = await until(
      started,
      async () => (await c.sources.tokenByHash('hash-t3-kept')) === undefined,
      PROMPT_MS,
      'revoked after the reconnection',
    );
    t.diagnostic(`listening again ${ms(back)} ms after the kill; a revocation then seen in ${ms(after)} ms`);
  });

  test('a listening connection that stops answering (no error) is found by the ping and replaced; the caches are dropped', async (t) => {
    const proxy = await proxyToDatabase();
    const database = new URL(pg.url).pathname.slice(1);
    const url = `postgres://${SERVERS.postgres.user}@127.0.0.1:${proxy.port}/${database}`;
    const store = createPgStore(url, {
      applicationName: 'node-d',
      connectTimeoutMs: 500,
      listen: { pingMs: 100, pingTimeoutMs: 200, minBackoffMs: 50 },
    });
    extra.push(store);
    try {
      const d = nodeOn(store);
      await until(performance.now(), () => d.feed.listening, 5_000, 'D listens');
      await a.sources.insert(source('s5'));
      assert.equal(await a.sources.insertToken(token('t5', 's5'), 'project'), true);
      const row = (await d.sources.tokenByHash('hash-t5'))!;
      const listens = d.feed.listens;

      const stalledAt = performance.now();
      proxy.stall();
      const noticed = await until(stalledAt, () => !d.feed.listening, 2_000, 'D gives its connection up');
      await a.sources.deleteToken(row); // D cannot hear of it
      assert.equal(await d.sources.tokenByHash('hash-t5'), row, 'D still answers from its cache');
      await sleep(300);
      assert.equal(d.feed.listens, listens, 'no LISTEN through the stalled proxy');
      proxy.resume();
      const back = await until(stalledAt, () => d.feed.listens === listens + 1, 5_000, 'D listens again');
      assert.equal(await d.sources.tokenByHash('hash-t5'), undefined, 'dropped on the new LISTEN');
      t.diagnostic(
        `stall noticed after ${ms(noticed)} ms (ping every 100, answered within 200); listening again ${ms(back)} ms after the stall began (resumed after ~${ms(noticed + 300)})`,
      );
    } finally {
      proxy.cut();
    }
  });

  test('a change in a transaction rolled back is not delivered; payloads not ours are ignored', async () => {
    await a.sources.insert(source('s4'));
    assert.equal(await a.sources.insertToken(token('t4', 's4'), 'project'), true);
    const row = (await b.sources.tokenByHash('hash-t4'))!;
    const heard: string[] = [];
    b.feed.subscribe({ change: (kind, id) => heard.push(`${kind}:${id}`), reset: () => heard.push('reset') });

    await assert.rejects(
      pg.store.tx(async (sql) => {
        await sql.run('DELETE FROM source_tokens WHERE id = $1', ['t4']);
        await notifyChange(sql, 'token', 't4');
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    for (const payload of ['nonsense', 'token:', ':t4', 'unknown:t4', 'token'])
      await pg.store.run('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, payload]);
    await pg.store.run('SELECT pg_notify($1, $2)', ['another_channel', 'token:t4']);
    // Notifications are delivered in commit order: once the marker is heard, the others would have been.
    await notifyChange(pg.store, 'source', 'marker');
    await until(performance.now(), () => heard.includes('source:marker'), PROMPT_MS, 'the marker');
    assert.deepEqual(heard, ['source:marker']);
    assert.equal(await b.sources.tokenByHash('hash-t4'), row, 'still cached on B: nothing dropped it');
    assert.ok(b.feed.listening);
  });
});
