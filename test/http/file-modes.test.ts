// The data directory is 0700 and service.db with its -wal/-shm 0600 (SPEC 9), whatever the umask;
// files left with wider modes are narrowed on start. Issue 9: they were 0644 while holding password
// hashes and database passwords.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { startServer } from '../../src/server';
import { createLogger } from '../../src/lib/log';
import { createProjectWithToken, request, embeddedOnly } from '../helpers/server';

const parent = mkdtempSync(path.join(os.tmpdir(), 'file-modes-'));
after(() => rmSync(parent, { recursive: true, force: true }));

const dataDir = path.join(parent, 'data');
const mode = (file: string) => statSync(file).mode & 0o777;
const files = ['service.db', 'service.db-wal', 'service.db-shm'].map((f) => path.join(dataDir, f));

async function start() {
  const config = loadConfig({ env: { SERVICE_DATA_DIR: dataDir, SERVICE_PORT: '0' }, cwd: parent });
  return startServer(config, { log: createLogger('silent') });
}

test(
  'created under a permissive umask: directory 0700, database files 0600; wider modes are narrowed on start',
  embeddedOnly("file modes of one node's service.db"),
  async () => {
    const umask = process.umask(0); // the most permissive: every mode the code asks for is what it gets
    try {
      const server = await start();
      const agent = await createProjectWithToken(server);
      const point = { key: 'modes', at: '2026-01-24T10:00:00Z', values: { n: 1 } };
      assert.equal(
        (
          await request(server, 'POST', '/api/v1/metrics', point, {
            token: agent.sourceToken,
            sourceId: agent.sourceId,
          })
        ).status,
        201,
      );
      assert.equal(mode(dataDir).toString(8), '700');
      for (const file of files) assert.equal(mode(file).toString(8), '600', file);
      await server.close();

      // An older version (or an operator) left them readable by everyone.
      chmodSync(dataDir, 0o755);
      chmodSync(files[0]!, 0o644);
      for (const file of files.slice(1)) {
        try {
          chmodSync(file, 0o666);
        } catch {
          /* removed at a clean shutdown */
        }
      }
      const again = await start();
      assert.equal(mode(dataDir).toString(8), '700');
      for (const file of files) {
        try {
          assert.equal(mode(file).toString(8), '600', file);
        } catch (err) {
          if ((err as { code?: string }).code !== 'ENOENT') throw err;
        }
      }
      const health = await request(again, 'GET', '/api/v1/health');
      assert.equal(health.status, 200);
      await again.close();
    } finally {
      process.umask(umask);
    }
  },
);
