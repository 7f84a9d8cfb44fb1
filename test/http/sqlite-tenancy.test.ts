// sqlite sources are apart per organization (SPEC 8): each organization's paths live in its own
// folder <sqlite_root>/<organization id>/, companion names (-wal, -shm, -journal) are refused, and
// sources created before the rule keep working after the start-up migration.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, linkSync, mkdirSync, readdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { request, signupWithOrganization, type Agent, embeddedOnly } from '../helpers/server';
import { DATABASES, configOf } from '../helpers/databases';
import {
  type Restartable,
  healthy,
  readHour,
  restart,
  sqliteSource,
  startFresh,
  stopAndRemove,
  track,
} from '../helpers/sqlite-sources';

describe(
  'sqlite sources per organization',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: Restartable;
    let a: Agent;
    let b: Agent;
    before(async () => {
      server = await startFresh();
      a = await signupWithOrganization(server);
      b = await signupWithOrganization(server);
    });
    after(() => stopAndRemove(server));
    const create = (agent: Agent, filePath: string) =>
      request(
        server,
        'POST',
        DATABASES,
        { display_name: 'x', driver: 'sqlite', file_path: filePath },
        { token: agent.userToken },
      );

    test("the reported attack: B cannot register A's app.db companions; after a restart A's acknowledged points are all there", async () => {
      const srcA = await sqliteSource(server, a, { file_path: 'app.db' });
      const folderA = path.join(server.root, a.organizationId);
      assert.equal((await configOf(server as never, srcA.id)).file_path, path.join(folderA, 'app.db'));
      for (let i = 0; i < 5; i++) assert.equal((await track(server, srcA, { count: 1 })).status, 201);
      const attempts = [
        'app.db-wal',
        'app.db-shm',
        'app.db-journal',
        'APP.DB-WAL',
        path.join(folderA, 'app.db-wal'),
        path.join(folderA, 'app.db-shm'),
        path.join(folderA, 'app.db'),
        `../${a.organizationId}/app.db-wal`,
        `${folderA}/`,
      ];
      for (const filePath of attempts) {
        const res = await create(b, filePath);
        assert.equal(res.status, 422, filePath);
        assert.ok(Array.isArray(res.body.errors.file_path), filePath);
      }
      // B's own app.db is another file, in B's folder.
      const srcB = await sqliteSource(server, b, { file_path: 'app.db' });
      assert.equal(
        (await configOf(server as never, srcB.id)).file_path,
        path.join(server.root, b.organizationId, 'app.db'),
      );
      assert.equal((await track(server, srcB, { count: 100 })).status, 201);
      assert.deepEqual(readdirSync(folderA).sort(), ['app.db']);

      server = await restart(server);
      const res = await readHour(server, srcA);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body.data.values, [{ count: 5 }]);
      assert.deepEqual((await readHour(server, srcB)).body.data.values, [{ count: 100 }]);
      assert.ok(await healthy(server));
    });

    test("symlinks and hard links into another organization's folder are refused", async () => {
      const srcA = await sqliteSource(server, a, { file_path: 'linked.db' });
      const fileA = (await configOf(server as never, srcA.id)).file_path as string;
      const folderB = path.join(server.root, b.organizationId);
      mkdirSync(folderB, { recursive: true });
      symlinkSync(fileA, path.join(folderB, 'sym.db'));
      symlinkSync(path.dirname(fileA), path.join(folderB, 'dir-link'));
      linkSync(fileA, path.join(folderB, 'hard.db'));
      assert.match((await create(b, 'sym.db')).body.errors.file_path[0], /organization's folder/);
      assert.match((await create(b, 'dir-link/linked.db')).body.errors.file_path[0], /organization's folder/);
      assert.deepEqual((await create(b, 'hard.db')).body, {
        errors: { file_path: ['must not have more than one hard link'] },
      });
      // A's own file now has two links as well: its store refuses to open it (409), and its data stays.
      const res = await track(server, srcA, { n: 1 });
      assert.equal(res.status, 409);
      assert.match(res.body.errors.detail, /more than one hard link/);
      assert.ok(await healthy(server));
    });
  },
);

describe(
  'sources created before per-organization folders',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: Restartable;
    after(() => stopAndRemove(server));

    test('a grandfathered file_path and a moved upload still read after the upgrade', async () => {
      server = await startFresh();
      const agent = await signupWithOrganization(server);
      // Build both as the old code did: the absolute real path in the root itself.
      const srcPath = await sqliteSource(server, agent, { file_path: 'tmp-path.db' });
      const srcUpload = await sqliteSource(server, agent, { file_path: 'tmp-upload.db' });
      for (const src of [srcPath, srcUpload])
        assert.equal((await track(server, src, { count: 2 })).status, 201);
      await server.close();
      const folder = path.join(server.root, agent.organizationId);
      const legacyPath = path.join(server.root, 'legacy.sqlite');
      const legacyUpload = path.join(server.root, `${srcUpload.id}.sqlite3`);
      copyFileSync(path.join(folder, 'tmp-path.db'), legacyPath);
      copyFileSync(path.join(folder, 'tmp-upload.db'), legacyUpload);
      const db = new Database(path.join(server.dataDir, 'service.db'));
      const setPath = db.prepare(
        "UPDATE sources SET config = json_set(config, '$.file_path', ?) WHERE id = ?",
      );
      setPath.run(legacyPath, srcPath.id);
      setPath.run(legacyUpload, srcUpload.id);
      db.close();

      server = await restart(server);
      assert.deepEqual((await readHour(server, srcPath)).body.data.values, [{ count: 2 }]);
      assert.deepEqual((await readHour(server, srcUpload)).body.data.values, [{ count: 2 }]);
      assert.equal((await track(server, srcPath, { count: 1 })).status, 201);
      assert.deepEqual((await readHour(server, srcPath)).body.data.values, [{ count: 3 }]);
      // The upload moved into the organization's folder; the named file stayed where its writer expects it.
      assert.ok(!existsSync(legacyUpload));
      assert.ok(existsSync(path.join(folder, `${srcUpload.id}.sqlite3`)));
      assert.ok(existsSync(legacyPath));
      const setup = await request(server, 'POST', `${DATABASES}/${srcPath.id}/setup`, undefined, {
        token: agent.userToken,
      });
      assert.equal(setup.status, 200, setup.text);
    });
  },
);
