// SQLite uploads leave nothing behind (SPEC 8, issue 9): a file name with a 300-character extension
// is a 422 (not ENAMETOOLONG), a refused two-file upload and an upload cut midway by the client leave
// no staged file, and what a crash left in the staging folder is removed at start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { signupWithOrganization, type Agent, embeddedOnly } from '../helpers/server';
import { DATABASES, sqliteBytes, upload } from '../helpers/databases';
import { type Restartable, healthy, restart, startFresh, stopAndRemove } from '../helpers/sqlite-sources';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe(
  'sqlite uploads leave nothing behind',
  embeddedOnly('SQLite database sources are refused in cluster mode'),
  () => {
    let server: Restartable;
    let agent: Agent;
    const staging = () => path.join(server.root, '.uploads');
    const staged = () => readdirSync(staging());
    async function stagedSettles(): Promise<string[]> {
      for (let i = 0; i < 50 && staged().length > 0; i++) await sleep(50);
      return staged();
    }
    before(async () => {
      server = await startFresh({ SERVICE_SQLITE_UPLOAD_MAX_BYTES: '1048576' });
      agent = await signupWithOrganization(server);
    });
    after(() => stopAndRemove(server));

    test('a file name with a 300-character extension is 422 on sqlite_file', async () => {
      const res = await upload(
        server,
        agent.userToken,
        { display_name: 'x', driver: 'sqlite' },
        { name: `stats.${'x'.repeat(300)}`, bytes: sqliteBytes() },
      );
      assert.equal(res.status, 422, res.text);
      assert.deepEqual(res.body, {
        errors: { sqlite_file: ['must be a file ending in .sqlite, .sqlite3, .db'] },
      });
      assert.deepEqual(await stagedSettles(), []);
      assert.ok(await healthy(server));
    });

    test('a two-file upload is refused with 422 and leaves no staged file', async () => {
      const form = new FormData();
      form.append('display_name', 'two');
      form.append('driver', 'sqlite');
      form.append('sqlite_file', new Blob([sqliteBytes()]), 'a.sqlite');
      form.append('sqlite_file', new Blob([sqliteBytes()]), 'b.sqlite');
      const before = readdirSync(server.root).sort();
      const res = await fetch(`${server.url}${DATABASES}`, {
        method: 'POST',
        body: form,
        headers: { authorization: `Bearer ${agent.userToken}` },
      });
      assert.equal(res.status, 422);
      assert.deepEqual(await res.json(), { errors: { sqlite_file: ['only one file may be uploaded'] } });
      assert.deepEqual(await stagedSettles(), []);
      assert.deepEqual(readdirSync(server.root).sort(), before);
      assert.ok(await healthy(server));
    });

    test('an upload cut midway by the client leaves no staged file', async () => {
      const boundary = 'cut-boundary';
      const head =
        `--${boundary}\r\nContent-Disposition: form-data; name="display_name"\r\n\r\ncut\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="driver"\r\n\r\nsqlite\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="sqlite_file"; filename="cut.sqlite"\r\nContent-Type: application/octet-stream\r\n\r\n`;
      const socket = net.connect(server.port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(
        `POST ${DATABASES} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${agent.userToken}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 900000\r\n\r\n${head}`,
      );
      socket.write(Buffer.concat([sqliteBytes(), Buffer.alloc(64 * 1024, 7)]));
      // The partial file exists while the upload runs...
      for (let i = 0; i < 100 && staged().length === 0; i++) await sleep(20);
      assert.equal(staged().length, 1);
      socket.destroy();
      // ...and is gone once the client has left.
      assert.deepEqual(await stagedSettles(), []);
      assert.ok(await healthy(server));
    });

    test("a crash's leftovers in the staging folder are removed at start", async () => {
      writeFileSync(path.join(staging(), 'a1b2c3d4e5f6'), 'half an upload');
      writeFileSync(path.join(staging(), 'ffeeddccbbaa'), '');
      server = await restart(server);
      assert.deepEqual(staged(), []);
      assert.ok(await healthy(server));
    });
  },
);
