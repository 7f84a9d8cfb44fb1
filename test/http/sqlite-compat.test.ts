// Files the Trifle::Stats libraries wrote, through HTTP: the owner's journal mode is kept (the
// service never switches a user's file to WAL), and a row holding both a flat `a.b` and a nested
// `a` -> `b` copy continues from the nested copy (SPEC 8's last rule; issue 10, point 5).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { signupWithOrganization, type Agent, embeddedOnly } from '../helpers/server';
import {
  type Restartable,
  healthy,
  readHour,
  sqliteSource,
  startFresh,
  stopAndRemove,
  track,
} from '../helpers/sqlite-sources';

const FULL =
  'CREATE TABLE trifle_stats (key varchar(255), data json); CREATE UNIQUE INDEX idx_trifle_stats_key ON trifle_stats (key);';
const KEY_AT = 'orders::1h::1741082400'; // orders, 1h, 2025-03-04T10:00:00Z

/** Bytes 18 and 19 of the header: 1 for a rollback journal, 2 for WAL (what persists in the file). */
function headerJournal(file: string): string {
  const header = readFileSync(file).subarray(18, 20);
  return header[0] === 2 && header[1] === 2
    ? 'wal'
    : header[0] === 1 && header[1] === 1
      ? 'rollback'
      : `other ${header.join(',')}`;
}

describe(
  'sqlite files as their owners made them',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: Restartable;
    let agent: Agent;
    let folder: string;
    before(async () => {
      server = await startFresh();
      agent = await signupWithOrganization(server);
      folder = path.join(server.root, agent.organizationId);
      mkdirSync(folder, { recursive: true });
    });
    after(() => stopAndRemove(server));

    function build(name: string, journal: 'delete' | 'wal', rows: [string, string][] = []): string {
      const file = path.join(folder, name);
      const db = new Database(file);
      db.pragma(`journal_mode = ${journal}`);
      db.exec(FULL);
      for (const [key, data] of rows)
        db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run(key, data);
      db.close();
      return file;
    }

    test('a rollback-journal file stays in its mode after the service reads and writes it', async () => {
      const file = build('rollback.db', 'delete');
      assert.equal(headerJournal(file), 'rollback');
      const src = await sqliteSource(server, agent, { file_path: 'rollback.db' });
      assert.equal((await track(server, src, { count: 2 })).status, 201);
      assert.deepEqual((await readHour(server, src)).body.data.values, [{ count: 2 }]);
      assert.equal(headerJournal(file), 'rollback');
      assert.ok(!existsSync(`${file}-wal`));
      const db = new Database(file, { readonly: true });
      assert.equal(db.pragma('journal_mode', { simple: true }), 'delete');
      db.close();
    });

    test('a WAL file stays WAL', async () => {
      const file = build('wal.db', 'wal');
      const src = await sqliteSource(server, agent, { file_path: 'wal.db' });
      assert.equal((await track(server, src, { count: 1 })).status, 201);
      assert.equal(headerJournal(file), 'wal');
    });

    for (const [label, data] of [
      ['flat member first', '{"a.b":120,"a":{"b":80}}'],
      ['nested copy first', '{"a":{"b":80},"a.b":120}'],
    ] as const) {
      test(`flat a.b and a nested a -> b copy (${label}): reads 80, track +10 reads 90, stored flat, nested copy gone`, async () => {
        const name = `both-${label.split(' ')[0]}.db`;
        const file = build(name, 'delete', [[KEY_AT, data]]);
        const src = await sqliteSource(server, agent, { file_path: name });
        assert.deepEqual((await readHour(server, src)).body.data.values, [{ a: { b: 80 } }]);
        assert.equal((await track(server, src, { a: { b: 10 } })).status, 201);
        assert.deepEqual((await readHour(server, src)).body.data.values, [{ a: { b: 90 } }]);
        const db = new Database(file, { readonly: true });
        const row = db
          .prepare(
            `SELECT json_extract(data, '$."a.b"') AS flat, json_extract(data, '$.a.b') AS nested FROM trifle_stats WHERE key = ?`,
          )
          .get(KEY_AT);
        db.close();
        assert.deepEqual(row, { flat: 90, nested: null });
        assert.ok(await healthy(server));
      });
    }
  },
);
