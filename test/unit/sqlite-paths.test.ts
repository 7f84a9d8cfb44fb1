// file_path rules with an organization's folder (SPEC 8): paths start in and stay inside the folder;
// companion names and files with a second hard link are refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { resolveSqlitePath } from '../../src/domain/sqlite-paths';

describe('sqlite paths in an organization folder', () => {
  let root: string;
  let mine: string;
  let theirs: string;
  before(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'svc-org-paths-'));
    mine = path.join(root, 'org-a');
    theirs = path.join(root, 'org-b');
    mkdirSync(mine);
    mkdirSync(theirs);
    writeFileSync(path.join(theirs, 'app.db'), '');
    writeFileSync(path.join(mine, 'one.db'), '');
    linkSync(path.join(mine, 'one.db'), path.join(mine, 'two.db'));
    symlinkSync(path.join(theirs, 'app.db'), path.join(mine, 'to-theirs.db'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));
  const resolve = (p: string) =>
    resolveSqlitePath(p, { root, folder: mine, serviceDb: path.join(root, 'service.db') });

  test('relative paths start in the folder; absolute ones must be inside it', () => {
    assert.deepEqual(resolve('x/stats.db'), { ok: true, value: path.join(mine, 'x', 'stats.db') });
    assert.deepEqual(resolve(path.join(mine, 'abs.db')), { ok: true, value: path.join(mine, 'abs.db') });
    for (const p of [path.join(theirs, 'app.db'), path.join(root, 'beside.db'), 'to-theirs.db', '.', mine]) {
      assert.equal(resolve(p).ok, false, p);
    }
  });

  test('companion names are refused in any case, also through a trailing slash', () => {
    for (const p of ['a.db-wal', 'a.db-shm', 'a.db-journal', 'A.DB-WAL', 'dir/x-journal', 'x.db-wal/']) {
      assert.deepEqual(resolve(p), { ok: false, message: 'must not end in -wal, -shm or -journal' }, p);
    }
    assert.equal(resolve('wal.db').ok, true);
  });

  test('a file with a second hard link is refused', () => {
    assert.deepEqual(resolve('one.db'), { ok: false, message: 'must not have more than one hard link' });
    assert.deepEqual(resolve('two.db'), { ok: false, message: 'must not have more than one hard link' });
  });
});
