// Hostile sqlite source files (SPEC 8): the file is untrusted input. Each case through HTTP: setup
// answers 422 naming the problem, metrics calls 409 naming it, never a 500, and the server stays
// healthy. Rows whose data is not a JSON object are skipped on reads and refused on writes (422).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { request, signupWithOrganization, type Agent, embeddedOnly } from '../helpers/server';
import { setupPath } from '../helpers/databases';
import {
  AT,
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

function buildDb(file: string, sql: string, rows: [string, unknown][] = []): void {
  const db = new Database(file);
  db.exec(sql);
  for (const [key, data] of rows)
    db.prepare('INSERT INTO trifle_stats (key, data) VALUES (?, ?)').run(key, data);
  db.close();
}

describe(
  'hostile sqlite source files',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: Restartable;
    let agent: Agent;
    let folder: string;
    let n = 0;
    before(async () => {
      server = await startFresh();
      agent = await signupWithOrganization(server);
      folder = path.join(server.root, agent.organizationId);
      mkdirSync(folder, { recursive: true });
    });
    after(() => stopAndRemove(server));

    /** A source on a file built by `build`: setup 422 and both metric calls 409, all naming `problem`. */
    async function refused(build: (file: string) => void, problem: RegExp): Promise<void> {
      const name = `hostile-${++n}.db`;
      build(path.join(folder, name));
      const src = await sqliteSource(server, agent, { file_path: name }, false);
      const setup = await request(server, 'POST', setupPath(src.id), undefined, { token: agent.userToken });
      assert.equal(setup.status, 422, setup.text);
      assert.match(setup.body.errors.setup[0], problem);
      const read = await readHour(server, src);
      assert.equal(read.status, 409, read.text);
      assert.match(read.body.errors.detail, problem);
      const write = await track(server, src, { count: 1 });
      assert.equal(write.status, 409, write.text);
      assert.match(write.body.errors.detail, problem);
      assert.ok(await healthy(server));
    }

    test('a valid header followed by garbage', async () => {
      const bytes = Buffer.alloc(8192, 0xa5);
      bytes.write('SQLite format 3\u0000', 0, 'latin1');
      await refused((file) => writeFileSync(file, bytes), /not a database|malformed/);
    });

    test('a VIEW named trifle_stats', async () => {
      await refused(
        (file) =>
          buildDb(file, 'CREATE TABLE t (key, data); CREATE VIEW trifle_stats AS SELECT key, data FROM t;'),
        /trifle_stats is a view/,
      );
    });

    test('an fts5 table named trifle_stats', async () => {
      await refused(
        (file) => buildDb(file, 'CREATE VIRTUAL TABLE trifle_stats USING fts5(key, data);'),
        /trifle_stats is a virtual table/,
      );
    });

    test('a RAISE trigger', async () => {
      await refused(
        (file) =>
          buildDb(
            file,
            `${FULL} CREATE TRIGGER no_writes BEFORE INSERT ON trifle_stats BEGIN SELECT RAISE(ABORT, 'no'); END;`,
          ),
        /has a trigger \(no_writes\)/,
      );
    });

    test('an endless recursive trigger (the reported freeze) is refused before it can run', async () => {
      const endless =
        'CREATE TRIGGER spin BEFORE UPDATE ON trifle_stats BEGIN ' +
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c; END;';
      await refused(
        (file) => buildDb(file, `${FULL} ${endless}`, [[KEY_AT, '{"count":1}']]),
        /has a trigger \(spin\)/,
      );
    });

    test('a BLOB column', async () => {
      await refused(
        (file) => buildDb(file, 'CREATE TABLE trifle_stats (key varchar(255) PRIMARY KEY, data BLOB);'),
        /column data .* type BLOB/,
      );
    });

    test('CHECK(0)', async () => {
      await refused(
        (file) =>
          buildDb(file, 'CREATE TABLE trifle_stats (key varchar(255) PRIMARY KEY, data json, CHECK(0));'),
        /clause .*: CHECK/,
      );
    });

    test('a generated column', async () => {
      await refused(
        (file) =>
          buildDb(
            file,
            'CREATE TABLE trifle_stats (key varchar(255) PRIMARY KEY, data json, g text GENERATED ALWAYS AS (1));',
          ),
        /generated/,
      );
    });

    test('a missing unique index', async () => {
      await refused(
        (file) => buildDb(file, 'CREATE TABLE trifle_stats (key varchar(255), data json);'),
        /no unique index on \(key\)/,
      );
    });

    test('a corrupt schema', async () => {
      await refused((file) => {
        buildDb(file, FULL);
        const bytes = readFileSync(file);
        const at = bytes.indexOf('CREATE TABLE trifle_stats (key varchar(255), data json)');
        assert.ok(at > 0);
        bytes.write('CREATE TABLE trifle_stats (((((((', at, 'latin1');
        writeFileSync(file, bytes);
      }, /malformed database schema/);
    });

    test('a FIFO as file_path', async () => {
      const src = await sqliteSource(server, agent, { file_path: 'fifo.db' }, false);
      execFileSync('mkfifo', [path.join(folder, 'fifo.db')]);
      const setup = await request(server, 'POST', setupPath(src.id), undefined, { token: agent.userToken });
      assert.equal(setup.status, 422);
      assert.match(setup.body.errors.setup[0], /not a regular file/);
      for (const res of [await readHour(server, src), await track(server, src, { n: 1 })]) {
        assert.equal(res.status, 409, res.text);
        assert.match(res.body.errors.detail, /not a regular file/);
      }
      assert.ok(await healthy(server));
    });

    test('a source file deleted underneath: 409 naming it, nothing written into the deleted file; setup brings it back', async () => {
      const src = await sqliteSource(server, agent, { file_path: 'deleted.db' });
      assert.equal((await track(server, src, { count: 1 })).status, 201);
      rmSync(path.join(folder, 'deleted.db'));
      for (const res of [await track(server, src, { count: 1 }), await readHour(server, src)]) {
        assert.equal(res.status, 409, res.text);
        assert.match(res.body.errors.detail, /has disappeared/);
      }
      const setup = await request(server, 'POST', setupPath(src.id), undefined, { token: agent.userToken });
      assert.equal(setup.status, 200);
      assert.equal((await track(server, src, { count: 1 })).status, 201);
      assert.deepEqual((await readHour(server, src)).body.data.values, [{ count: 1 }]);
    });

    test('rows whose data is not a JSON object: skipped on reads, refused on writes with 422, other rows unharmed', async () => {
      const cases: [string, unknown][] = [
        ['malformed JSON', '{"count": 1,'],
        ['a JSON array', '[1, 2]'],
        ['a number', 42],
        ['a blob', Buffer.from('{"count":1}')],
        // A huge value would exhaust the worker's heap, and V8 then aborts the whole process.
        ['a 100 MB object', `{"count":1,"pad":"${'x'.repeat(100 * 1024 * 1024)}"}`],
      ];
      for (const [label, data] of cases) {
        const name = `rows-${++n}.db`;
        buildDb(path.join(folder, name), FULL, [
          [KEY_AT, data],
          ['orders::1h::1741086000', '{"count":7}'],
        ]);
        const src = await sqliteSource(server, agent, { file_path: name });
        const read = await request(
          server,
          'GET',
          `/api/v1/metrics?key=orders&from=${AT}&to=2025-03-04T11:00:00Z&granularity=1h`,
          undefined,
          { token: src.token, sourceId: src.id },
        );
        assert.equal(read.status, 200, label);
        assert.deepEqual(read.body.data.values, [{}, { count: 7 }], label);
        const write = await track(server, src, { count: 1 });
        assert.equal(write.status, 422, label);
        assert.match(
          write.body.errors.data[0],
          /is not a JSON object of at most 4194304 bytes; nothing was written/,
          label,
        );
        // The refused write is all or nothing: the good row's bucket is unchanged too.
        const db = new Database(path.join(folder, name), { readonly: true });
        const rows = db.prepare('SELECT key, data FROM trifle_stats ORDER BY key').raw(true).all();
        db.close();
        assert.deepEqual(
          rows,
          [
            [KEY_AT, data],
            ['orders::1h::1741086000', '{"count":7}'],
          ],
          label,
        );
        // Other buckets of the file still take writes.
        assert.equal(
          (await track(server, src, { count: 1 }, 'orders', '2025-03-04T11:00:00Z')).status,
          201,
          label,
        );
        assert.deepEqual(
          (await readHour(server, src, 'orders', '2025-03-04T11:00:00Z')).body.data.values,
          [{ count: 8 }],
          label,
        );
      }
      assert.ok(await healthy(server));
    });
  },
);
