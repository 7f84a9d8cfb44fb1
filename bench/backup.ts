// Backup and restore of a large database (default ~1 GB, BENCH_BACKUP_MB) through the real CLI,
// the backup taken while the service runs on that data directory and takes single-point writes.
// Builds the database itself (bucket rows written straight into a migrated service.db), reports
// the times, then deletes every file it made.
// Run: node --import tsx bench/backup.ts
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/storage/db';
import { migrate } from '../src/storage/migrations';
import { MAIN } from '../test/helpers/process';
import { createProjectWithToken, request } from '../test/helpers/server';
import { fmt, serviceLabel, spawnServer } from './helpers';

console.log(serviceLabel());
const TARGET_MB = Number(process.env.BENCH_BACKUP_MB ?? 1024);
const work = mkdtempSync(path.join(os.tmpdir(), 'bench-backup-'));
const mb = (file: string) => statSync(file).size / 1024 / 1024;

/** Bucket rows of ~300 bytes over many series until service.db reaches the target size. */
function build(dataDir: string): void {
  mkdirSync(dataDir, { mode: 0o700 });
  const file = path.join(dataDir, 'service.db');
  const db = openDatabase(file);
  migrate(db);
  const started = performance.now();
  const addSeries = db.prepare(
    "INSERT INTO metric_series (source_id, key, granularity) VALUES ('bench', ?, '1m')",
  );
  const addBucket = db.prepare('INSERT INTO metric_buckets (series_id, bucket, data) VALUES (?, ?, ?)');
  const data = JSON.stringify({
    count: 17,
    amount: { net: 1234.5, tax: 99.25 },
    by: { a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8 },
    pad: 'x'.repeat(150),
  });
  const first = Date.UTC(2025, 0, 1) / 1000;
  let series = 0;
  const chunk = db.transaction(() => {
    const id = Number(addSeries.run(`bench.key.${series++}`).lastInsertRowid);
    for (let i = 0; i < 100_000; i++) addBucket.run(id, first + i * 60, data);
  });
  while (mb(file) + mb(`${file}-wal`) < TARGET_MB) {
    chunk();
    db.pragma('wal_checkpoint(TRUNCATE)');
  }
  db.close();
  console.log(
    `setup: service.db ${fmt(mb(file))} MB (${fmt(series * 100_000)} bucket rows) built in ${fmt((performance.now() - started) / 1000, 1)} s`,
  );
}

function cli(args: string[]): Promise<{ code: number | null; ms: number; out: string }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...MAIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.once('exit', (code) => resolve({ code, ms: performance.now() - started, out: out.trim() }));
  });
}

try {
  const dataDir = path.join(work, 'data');
  build(dataDir);
  const service = await spawnServer('src/main.ts', ['serve', '--port', '0', '--data', dataDir]);
  const p = await createProjectWithToken(service);
  let writes = 0;
  let stop = false;
  const load = (async () => {
    while (!stop) {
      const point = { key: 'during.backup', at: new Date().toISOString(), values: { n: 1 } };
      const res = await request(service, 'POST', '/api/v1/metrics', point, {
        token: p.sourceToken,
        sourceId: p.sourceId,
      });
      if (res.status === 201) writes++;
    }
  })();
  const backupFile = path.join(work, 'backup.db');
  const backup = await cli(['backup', '--to', backupFile, '--data', dataDir]);
  stop = true;
  await load;
  await service.stop();
  service.remove(); // the (empty) directory spawnServer made; the data lives in `work`
  if (backup.code !== 0) throw new Error(`backup failed: ${backup.out}`);
  console.log(
    `backup: ${fmt(mb(backupFile))} MB in ${fmt(backup.ms / 1000, 1)} s (CLI start included), ${fmt(writes)} writes committed meanwhile`,
  );
  const restore = await cli(['restore', '--from', backupFile, '--data', path.join(work, 'restored')]);
  if (restore.code !== 0) throw new Error(`restore failed: ${restore.out}`);
  console.log(`restore: ${fmt(restore.ms / 1000, 1)} s (quick_check and copy, CLI start included)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
