// The in-memory caches behind source-token authentication: BoundedCache, and the sources repo's
// cached token and source look-ups, checked against the database rows they stand for.
import { afterEach, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BoundedCache } from '../../src/lib/bounded-cache';
import { hashToken, mintToken, SOURCE_TOKEN_PREFIX } from '../../src/lib/tokens';
import { openDatabase, type Db } from '../../src/storage/db';
import { migrate } from '../../src/storage/migrations';
import { createSourcesRepo, type SourceTokenRow } from '../../src/storage/sources';
import type { Source } from '../../src/domain/types';

describe('BoundedCache', () => {
  test('never holds more than its limit, and keeps what was set last', async () => {
    const cache = new BoundedCache<number, string>(3);
    for (let i = 0; i < 10; i++) {
      cache.set(i, `v${i}`);
      assert.ok(cache.size <= 3);
      assert.equal(cache.get(i), `v${i}`);
    }
    cache.set(9, 'again'); // replacing a held key does not empty the cache
    assert.equal(cache.get(9), 'again');
    assert.equal(cache.size, 1);
  });

  test('getOrLoad remembers found values but not misses', async () => {
    const cache = new BoundedCache<string, number>(10);
    const loads: string[] = [];
    const table: Record<string, number> = { a: 1 };
    const load = (key: string) => (loads.push(key), table[key]);
    assert.equal(cache.getOrLoad('a', load), 1);
    assert.equal(cache.getOrLoad('a', load), 1);
    assert.equal(cache.getOrLoad('b', load), undefined);
    table.b = 2;
    assert.equal(cache.getOrLoad('b', load), 2);
    assert.deepEqual(loads, ['a', 'b', 'b']);
    cache.delete('a');
    assert.equal(cache.getOrLoad('a', load), 1);
    assert.deepEqual(loads, ['a', 'b', 'b', 'a']);
  });

  test('refuses a limit below 1', async () => {
    assert.throws(() => new BoundedCache(0), RangeError);
  });
});

const ORG = 'org-1';
const USER = 'user-1';

function source(id: string): Source {
  return {
    id,
    organizationId: ORG,
    type: 'database',
    displayName: `db ${id}`,
    driver: 'sqlite',
    timeZone: 'Europe/Berlin',
    beginningOfWeek: 1,
    granularities: ['1m', '1h', '1d'],
    defaultTimeframe: '24h',
    defaultGranularity: '1h',
    expireAfter: null,
    projectClusterId: null,
    config: { file_path: `/data/${id}.sqlite` },
    setupStatus: 'pending',
    createdAt: 1,
  };
}

function tokenRow(id: string, sourceId: string): { row: SourceTokenRow; value: string } {
  const minted = mintToken(SOURCE_TOKEN_PREFIX);
  const row: SourceTokenRow = {
    id,
    source_id: sourceId,
    organization_id: ORG,
    user_id: USER,
    name: id,
    token_hash: minted.hash,
    last5: minted.last5,
    can_read: 1,
    can_write: 0,
    created_at: 2,
  };
  return { row, value: minted.value };
}

describe('sources repo caches', () => {
  let dir: string;
  let db: Db;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'source-cache-test-'));
    db = openDatabase(path.join(dir, 'service.db'));
    migrate(db);
    db.prepare(
      "INSERT INTO users (id, email, email_lower, name, password_hash, created_at) VALUES (?, 'a@b.c', 'a@b.c', 'A', 'x', 0)",
    ).run(USER);
    db.prepare("INSERT INTO organizations (id, name, slug, created_at) VALUES (?, 'Org', 'org', 0)").run(ORG);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rowInDb = (hash: string) => db.prepare('SELECT * FROM source_tokens WHERE token_hash = ?').get(hash);

  test('tokenByHash answers what the database holds, for every token past the cache limit', async () => {
    const repo = createSourcesRepo(db, 2);
    await repo.insert(source('s1'));
    const tokens = ['t1', 't2', 't3', 't4', 't5'].map((id) => tokenRow(id, 's1'));
    for (const { row } of tokens) await repo.insertToken(row, 'database');
    for (let round = 0; round < 3; round++) {
      for (const { row, value } of tokens) {
        const found = await repo.tokenByHash(hashToken(value));
        assert.deepEqual({ ...found }, rowInDb(row.token_hash));
        assert.equal(found?.id, row.id);
      }
    }
    assert.equal(await repo.tokenByHash(hashToken(`${SOURCE_TOKEN_PREFIX}${'x'.repeat(43)}`)), undefined);
  });

  test('an unknown token is not remembered: a token minted after a miss is found', async () => {
    const repo = createSourcesRepo(db);
    await repo.insert(source('s1'));
    const { row, value } = tokenRow('t1', 's1');
    assert.equal(await repo.tokenByHash(hashToken(value)), undefined);
    await repo.insertToken(row, 'database');
    assert.equal((await repo.tokenByHash(hashToken(value)))?.id, 't1');
  });

  test('cachedById equals byId, frozen, and follows setup status changes', async () => {
    const repo = createSourcesRepo(db, 2);
    for (const id of ['s1', 's2', 's3']) await repo.insert(source(id));
    for (const id of ['s1', 's2', 's3', 's1'])
      assert.deepEqual(await repo.cachedById(id), await repo.byId(id));
    const cached = (await repo.cachedById('s1'))!;
    assert.ok(
      Object.isFrozen(cached) && Object.isFrozen(cached.config) && Object.isFrozen(cached.granularities),
    );
    await repo.setSetupStatus('s1', 'ready');
    assert.equal((await repo.cachedById('s1'))?.setupStatus, 'ready');
    assert.deepEqual(await repo.cachedById('s1'), await repo.byId('s1'));
    assert.equal(await repo.cachedById('missing'), undefined);
  });
});
