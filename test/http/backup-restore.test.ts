// service backup / service restore (SPEC section 11) through the real CLI: a backup taken while the
// server takes writes is one consistent snapshot, restores into a new data directory and serves
// every series as it was; restore checks its file and refuses while a service runs on the directory.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';
import { MAIN, runCli } from '../helpers/process';

const work = mkdtempSync(path.join(os.tmpdir(), 'svc-backup-'));

/** Every bucket row of every series, by source, key and granularity. */
function dump(dataDir: string): Map<string, string> {
  const db = new Database(path.join(dataDir, 'service.db'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT s.source_id, s.key, s.granularity, b.bucket, b.data FROM metric_buckets b
         JOIN metric_series s ON s.id = b.series_id ORDER BY 1, 2, 3, 4`,
      )
      .raw()
      .all() as Array<[string, string, string, number, string]>;
    return new Map(rows.map(([source, key, g, bucket, data]) => [`${source} ${key} ${g} ${bucket}`, data]));
  } finally {
    db.close();
  }
}

/** The CLI as a child process, asynchronously (the server in this process keeps serving). */
function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe(
  'backup and restore',
  embeddedOnly("service backup/restore copy one node's service.db (refused in cluster mode: pg_dump)"),
  () => {
    let server: TestServer;
    let p: ProjectAgent;
    before(async () => {
      server = await startTestServer();
      p = await createProjectWithToken(server, { time_zone: 'Europe/Bratislava' });
    });
    after(async () => {
      await server.stop();
      rmSync(work, { recursive: true, force: true });
    });

    const auth = () => ({ token: p.sourceToken, sourceId: p.sourceId });

    test('a backup under write load restores into a new data directory with every series', async () => {
      const fixed = Array.from({ length: 2000 }, (_, i) => ({
        key: `fixed.k${i % 40}`,
        at: new Date(Date.UTC(2026, 0, 1) + i * 7_919_000).toISOString(),
        values: { count: 1, amount: { net: i % 13, tax: 0.25 } },
      }));
      assert.equal(
        (await request(server, 'POST', '/api/v1/metrics/batch', { points: fixed }, auth())).status,
        201,
      );

      // Load: each batch adds the same values to load.a and load.b in one transaction, so any
      // consistent snapshot holds equal totals for the two.
      let stop = false;
      let batches = 0;
      const load = (async () => {
        while (!stop) {
          const at = new Date(Date.UTC(2026, 1, 1) + (batches % 500) * 60_000).toISOString();
          const points = ['load.a', 'load.b'].flatMap((key) =>
            Array.from({ length: 50 }, () => ({ key, at, values: { n: 1 } })),
          );
          const res = await request(server, 'POST', '/api/v1/metrics/batch', { points }, auth());
          assert.equal(res.status, 201);
          batches++;
        }
      })();
      await new Promise((r) => setTimeout(r, 200));
      const backupFile = path.join(work, 'backup.db');
      const before = batches;
      const backup = await cli(['backup', '--to', backupFile, '--data', server.dataDir]);
      const during = batches - before;
      stop = true;
      await load;
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /backup written to .*backup\.db/);
      assert.ok(during > 0, 'writes were committed while the backup ran');
      assert.equal(statSync(backupFile).mode & 0o777, 0o600);
      assert.ok(!existsSync(`${backupFile}-wal`) && !existsSync(`${backupFile}.partial`));
      assert.equal(
        (await cli(['backup', '--to', backupFile, '--data', server.dataDir])).code,
        1,
        'an existing file is not overwritten',
      );

      const restoredDir = path.join(work, 'restored');
      const restore = runCli(['restore', '--from', backupFile, '--data', restoredDir]);
      assert.equal(restore.status, 0, restore.stderr);
      await server.deps.metrics.flush(); // the server's own rows hold every acknowledged point too
      const original = dump(server.dataDir);
      const restored = dump(restoredDir);
      let compared = 0;
      for (const [name, data] of original) {
        if (name.includes(' load.') || name.includes(' __system__key__ ')) continue;
        assert.equal(restored.get(name), data, name);
        compared++;
      }
      assert.ok(compared > 1000, `${compared} fixed buckets compared`);
      const total = (dumped: Map<string, string>, key: string) =>
        [...dumped]
          .filter(([n]) => n.includes(` ${key} 1m `))
          .reduce((sum, [, d]) => sum + (JSON.parse(d).n as number), 0);
      assert.equal(
        total(restored, 'load.a'),
        total(restored, 'load.b'),
        'one snapshot: both halves of every batch',
      );
      assert.ok(total(restored, 'load.a') <= total(original, 'load.a'));

      // The restored directory serves: same source token, same series through the API.
      const copy = await startTestServer({ SERVICE_DATA_DIR: restoredDir });
      try {
        const qs =
          '/api/v1/metrics?key=fixed.k7&granularity=1d&from=2026-01-01T00:00:00Z&to=2026-07-01T00:00:00Z';
        const a = await request(server, 'GET', qs, undefined, auth());
        const b = await request(copy, 'GET', qs, undefined, auth());
        assert.equal(b.status, 200, b.text);
        assert.deepEqual(b.body, a.body);
        const login = await request(copy, 'POST', '/api/v1/bootstrap/login', {
          email: p.email,
          password: p.password,
        });
        assert.equal(login.status, 201);
      } finally {
        await copy.stop();
      }
    });

    test('restore checks its file and refuses while a service runs on the data directory', () => {
      const backupFile = path.join(work, 'backup.db');
      const running = runCli(['restore', '--from', backupFile, '--data', server.dataDir]);
      assert.equal(running.status, 1);
      assert.match(
        running.stderr,
        new RegExp(`a service \\(pid ${process.pid}, .*\\) is running on .*: stop it first`),
      );

      const target = path.join(work, 'target');
      const refuse = (file: string, message: RegExp) => {
        const res = runCli(['restore', '--from', file, '--data', target]);
        assert.equal(res.status, 1, res.stderr);
        assert.match(res.stderr, message);
        assert.equal(res.stderr.trim().split('\n').length, 1);
      };
      refuse(path.join(work, 'missing.db'), /is not a file/);
      writeFileSync(path.join(work, 'text.db'), 'not a database at all');
      refuse(path.join(work, 'text.db'), /is not a SQLite database/);
      const other = new Database(path.join(work, 'other.db'));
      other.exec('CREATE TABLE trifle_stats (key TEXT)');
      other.close();
      refuse(path.join(work, 'other.db'), /is not a database of this service/);
      const newer = path.join(work, 'newer.db');
      assert.equal(runCli(['backup', '--to', newer, '--data', server.dataDir]).status, 0);
      const db = new Database(newer);
      db.pragma('user_version = 999');
      db.close();
      refuse(newer, /schema version 999, newer than this build/);
      assert.ok(!existsSync(target) || readdirSync(target).length === 0, 'nothing was put in place');

      // Over an existing database: the old one is kept aside.
      assert.equal(runCli(['restore', '--from', backupFile, '--data', target]).status, 0);
      const again = runCli(['restore', '--from', backupFile, '--data', target]);
      assert.equal(again.status, 0, again.stderr);
      assert.match(again.stdout, /the database it replaced is now .*service\.db\.before-restore-/);
      assert.ok(readdirSync(target).some((f) => f.startsWith('service.db.before-restore-')));
    });

    test('restore refuses a backup holding triggers, views or tables the schema does not know', () => {
      const backupFile = path.join(work, 'backup.db');
      const target = path.join(work, 'crafted-target');
      const crafted = (name: string, sql: string) => {
        const file = path.join(work, name);
        assert.equal(
          runCli(['restore', '--from', backupFile, '--data', path.join(work, `${name}.d`)]).status,
          0,
        );
        const db = new Database(path.join(work, `${name}.d`, 'service.db'));
        db.pragma('journal_mode = DELETE');
        db.exec(sql);
        db.close();
        rmSync(file, { force: true });
        writeFileSync(file, readFileSync(path.join(work, `${name}.d`, 'service.db')));
        return file;
      };
      const steal = crafted(
        'steal.db',
        `CREATE TABLE stolen (hash TEXT);
       CREATE TRIGGER steal AFTER INSERT ON user_tokens BEGIN INSERT INTO stolen VALUES (new.token_hash); END;`,
      );
      const res = runCli(['restore', '--from', steal, '--data', target]);
      assert.equal(res.status, 1, res.stdout);
      assert.match(res.stderr, /holds what the service's schema does not \(.*table stolen.*\)/);
      assert.match(res.stderr, /trigger steal/);
      assert.equal(res.stderr.trim().split('\n').length, 1);
      assert.ok(!existsSync(path.join(target, 'service.db')), 'nothing was put in place');
      const view = crafted('view.db', 'CREATE VIEW emails AS SELECT email FROM users');
      assert.match(runCli(['restore', '--from', view, '--data', target]).stderr, /view emails/);
      const trigger = crafted('trigger.db', 'CREATE TRIGGER t AFTER INSERT ON users BEGIN SELECT 1; END');
      assert.match(runCli(['restore', '--from', trigger, '--data', target]).stderr, /trigger t\b/);
      assert.ok(!existsSync(path.join(target, 'service.db')));
      assert.deepEqual(readdirSync(target), [], 'no staging left behind');
    });

    test('restore of a WAL-mode copy with its -wal beside it restores the committed data it checked', () => {
      const backupFile = path.join(work, 'backup.db');
      const dir = path.join(work, 'wal-source.d');
      assert.equal(runCli(['restore', '--from', backupFile, '--data', dir]).status, 0);
      const file = path.join(dir, 'service.db');
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.pragma('wal_autocheckpoint = 0');
      db.exec("UPDATE users SET name = 'only in the wal'");
      // Copy while the connection is open: the change lives in the -wal only.
      const copy = path.join(work, 'wal-copy.db');
      writeFileSync(copy, readFileSync(file));
      writeFileSync(`${copy}-wal`, readFileSync(`${file}-wal`));
      db.close();
      const main = new Database(copy, { readonly: true });
      const viaWal = main.prepare('SELECT name FROM users').pluck().all();
      main.close();
      assert.ok(viaWal.includes('only in the wal'), 'the source, read through its -wal');
      const target = path.join(work, 'wal-target');
      const res = runCli(['restore', '--from', copy, '--data', target]);
      assert.equal(res.status, 0, res.stderr);
      assert.ok(!existsSync(path.join(target, 'service.db-wal')));
      const restored = new Database(path.join(target, 'service.db'), { readonly: true });
      try {
        assert.deepEqual(restored.prepare('SELECT DISTINCT name FROM users').pluck().all(), [
          'only in the wal',
        ]);
        assert.equal(restored.pragma('journal_mode', { simple: true }), 'delete');
      } finally {
        restored.close();
      }
    });

    test('a backup holds the points the service acknowledged but has not folded yet', async () => {
      // A fold window that stays open for the whole test: the points are only in the write log.
      const open = await startTestServer({}, { writer: { foldAfterMs: 600_000 } });
      const dir = path.join(work, 'unfolded');
      try {
        const agent = await createProjectWithToken(open);
        const as = { token: agent.sourceToken, sourceId: agent.sourceId };
        const points = Array.from({ length: 30 }, (_, i) => ({
          key: 'unfolded',
          at: '2026-03-01T10:00:00Z',
          values: { n: i },
        }));
        assert.equal((await request(open, 'POST', '/api/v1/metrics/batch', { points }, as)).status, 201);
        assert.ok(
          ![...dump(open.dataDir).keys()].some((name) => name.includes(' unfolded ')),
          'not in the rows yet',
        );
        const file = path.join(work, 'unfolded.db');
        const backup = await cli(['backup', '--to', file, '--data', open.dataDir]);
        assert.equal(backup.code, 0, backup.stderr);
        assert.equal(runCli(['restore', '--from', file, '--data', dir]).status, 0);
        assert.deepEqual(
          readdirSync(dir).filter((n) => n.startsWith('metric-log')),
          [],
          'the backup is one file, its log folded in',
        );
        const restored = dump(dir);
        assert.equal(
          restored.get(`${agent.sourceId} unfolded 1h ${Date.UTC(2026, 2, 1, 10) / 1000}`),
          '{"n":435}',
        );
        assert.equal(
          restored.get(`${agent.sourceId} __system__key__ 1d ${Date.UTC(2026, 2, 1) / 1000}`),
          '{"count":30}',
        );

        // Restoring over a data directory moves its database and its write log aside together.
        await open.close();
        assert.equal(runCli(['restore', '--from', file, '--data', open.dataDir]).status, 0);
        const names = readdirSync(open.dataDir);
        assert.ok(!names.some((n) => n.startsWith('metric-log')), names.join(' '));
        const aside = names.find((n) => n.endsWith('.metric-log'));
        assert.ok(
          aside && readdirSync(path.join(open.dataDir, aside)).length > 0,
          'the old log is kept with the old database',
        );
      } finally {
        await open.close();
        rmSync(open.dataDir, { recursive: true, force: true });
      }
    });
  },
);
