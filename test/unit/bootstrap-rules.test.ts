// Pure bootstrap rules: organization slugs, source settings, sqlite path confinement, upload
// checks and password hashing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { slugify } from '../../src/domain/organizations';
import {
  parseBeginningOfWeek,
  parseExpireAfter,
  parseGranularities,
  parseTimeframe,
  parseTimeZone,
  pickDefaultGranularity,
} from '../../src/domain/source-settings';
import { checkSqliteUpload, resolveSqlitePath } from '../../src/domain/sqlite-paths';
import { hashPassword, verifyNothing, verifyPassword } from '../../src/domain/passwords';

describe('slugify', () => {
  test('lower case, runs of other characters to one dash, trimmed, accents dropped', () => {
    const cases: [string, string][] = [
      ['Acme Widgets', 'acme-widgets'],
      ['  Analytical Engines, Ltd.  ', 'analytical-engines-ltd'],
      ['Café Ünïon', 'cafe-union'],
      ['a--b__c', 'a-b-c'],
      ['2024 Q1', '2024-q1'],
      ['!!!', 'org'],
      ['日本語', 'org'],
      ['', 'org'],
    ];
    for (const [name, slug] of cases) assert.equal(slugify(name), slug, name);
  });

  test('at most 64 characters, never ending in a dash', () => {
    assert.equal(slugify('x'.repeat(100)), 'x'.repeat(64));
    const cut = slugify(`${'a'.repeat(63)} b`);
    assert.equal(cut, 'a'.repeat(63));
  });
});

describe('source settings', () => {
  test('time zones: IANA names in canonical spelling, UTC by default', () => {
    assert.deepEqual(parseTimeZone(undefined), { ok: true, value: 'UTC' });
    assert.deepEqual(parseTimeZone('europe/berlin'), { ok: true, value: 'Europe/Berlin' });
    assert.deepEqual(parseTimeZone(' America/New_York '), { ok: true, value: 'America/New_York' });
    for (const bad of ['Mars/Olympus', '+01:00', '', 'UTC; DROP', 5])
      assert.equal(parseTimeZone(bad).ok, false, String(bad));
  });

  test('beginning_of_week 1..7 as an integer or digits', () => {
    assert.deepEqual(parseBeginningOfWeek(null), { ok: true, value: 1 });
    assert.deepEqual(parseBeginningOfWeek('7'), { ok: true, value: 7 });
    for (const bad of [0, 8, 2.5, '', 'x', true, [1]])
      assert.equal(parseBeginningOfWeek(bad).ok, false, String(bad));
  });

  test('granularities: list or comma string, trimmed, each parsed, no duplicates, at most 50', () => {
    assert.deepEqual(parseGranularities(undefined), {
      ok: true,
      value: ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'],
    });
    assert.deepEqual(parseGranularities('5s, 60m,1h'), { ok: true, value: ['5s', '60m', '1h'] });
    assert.deepEqual(parseGranularities(['2w', '3mo']), { ok: true, value: ['2w', '3mo'] });
    for (const bad of ['', '1h,', '1h,,1d', '0s', '1H', '1 h', 'h', ['1h', '1h'], [null], {}, 7]) {
      assert.equal(parseGranularities(bad).ok, false, JSON.stringify(bad));
    }
    assert.equal(parseGranularities(Array.from({ length: 50 }, (_, i) => `${i + 1}s`)).ok, true);
    assert.equal(parseGranularities(Array.from({ length: 51 }, (_, i) => `${i + 1}s`)).ok, false);
  });

  test('default granularity from the list, first by default', () => {
    assert.deepEqual(pickDefaultGranularity(['1h', '1d'], null), { ok: true, value: '1h' });
    assert.deepEqual(pickDefaultGranularity(['1h', '1d'], '1d'), { ok: true, value: '1d' });
    assert.equal(pickDefaultGranularity(['1h', '1d'], '60m').ok, false);
  });

  test('timeframe defaults to 24h; expire_after positive seconds or null', () => {
    assert.deepEqual(parseTimeframe(undefined), { ok: true, value: '24h' });
    assert.deepEqual(parseTimeframe('7d'), { ok: true, value: '7d' });
    assert.equal(parseTimeframe('7 days').ok, false);
    assert.deepEqual(parseExpireAfter(null), { ok: true, value: null });
    assert.deepEqual(parseExpireAfter(3600), { ok: true, value: 3600 });
    for (const bad of [0, -1, 1.5, Infinity, 'x', 2 ** 60])
      assert.equal(parseExpireAfter(bad).ok, false, String(bad));
  });
});

describe('sqlite path confinement', () => {
  let base: string;
  let root: string;
  let outside: string;
  let serviceDb: string;
  before(() => {
    base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'svc-paths-')));
    root = path.join(base, 'root');
    outside = path.join(base, 'outside');
    mkdirSync(path.join(root, '.uploads'), { recursive: true });
    mkdirSync(outside);
    serviceDb = path.join(root, 'service.db');
    writeFileSync(serviceDb, '');
    symlinkSync(outside, path.join(root, 'out'));
    symlinkSync(path.join(root, 'inside'), path.join(root, 'in-link'));
    mkdirSync(path.join(root, 'inside'));
  });
  after(() => rmSync(base, { recursive: true, force: true }));
  const resolve = (p: string) => resolveSqlitePath(p, { root, serviceDb });

  test('relative paths are taken from the root; missing folders are fine', () => {
    assert.deepEqual(resolve('a.sqlite'), { ok: true, value: path.join(root, 'a.sqlite') });
    assert.deepEqual(resolve('./x/y/z.db'), { ok: true, value: path.join(root, 'x', 'y', 'z.db') });
    assert.deepEqual(resolve(path.join(root, 'b.sqlite')), { ok: true, value: path.join(root, 'b.sqlite') });
    assert.deepEqual(resolve('in-link/c.sqlite'), { ok: true, value: path.join(root, 'inside', 'c.sqlite') });
  });

  test('escapes are refused: .., absolute elsewhere, symlinks out, the root itself, staging, own database', () => {
    for (const p of [
      '..',
      '../a',
      'x/../a',
      'x\\..\\a',
      path.join(outside, 'a.sqlite'),
      'out/a.sqlite',
      'out',
      '.',
      '',
      '.uploads/a',
      'service.db',
      'service.db-wal',
    ]) {
      assert.equal(resolve(p).ok, false, p);
    }
  });
});

describe('sqlite upload check', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'svc-upload-check-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, bytes: Buffer) => {
    const filepath = path.join(dir, `${Math.random()}`);
    writeFileSync(filepath, bytes);
    return { filepath, originalFilename: name, size: bytes.length };
  };
  const sqliteHeader = Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(84)]);

  test('extension (any case) and the 16-byte SQLite header', async () => {
    assert.deepEqual(await checkSqliteUpload(file('a.SQLite', sqliteHeader)), { ok: true, value: '.sqlite' });
    assert.deepEqual(await checkSqliteUpload(file('a.b.db', sqliteHeader)), { ok: true, value: '.db' });
    assert.deepEqual(await checkSqliteUpload(file('x.sqlite3', sqliteHeader)), {
      ok: true,
      value: '.sqlite3',
    });
    assert.equal((await checkSqliteUpload(file('a.sqlite.txt', sqliteHeader))).ok, false);
    assert.equal((await checkSqliteUpload({ ...file('x', sqliteHeader), originalFilename: null })).ok, false);
    assert.equal((await checkSqliteUpload(file('a.db', Buffer.alloc(0)))).ok, false);
    assert.equal((await checkSqliteUpload(file('a.db', Buffer.from('SQLite format 3')))).ok, false);
    assert.equal((await checkSqliteUpload(file('a.db', Buffer.alloc(100, 0x41)))).ok, false);
  });
});

describe('passwords', () => {
  test('argon2id hashes that verify only the same password', async () => {
    const stored = await hashPassword('pässwörd 123');
    assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    assert.equal(await verifyPassword(stored, 'pässwörd 123'), true);
    assert.equal(await verifyPassword(stored, 'pässwörd 124'), false);
    assert.notEqual(await hashPassword('pässwörd 123'), stored);
    assert.equal(await verifyPassword('not a hash', 'x'), false);
    assert.equal(await verifyNothing('anything'), false);
  });
});
