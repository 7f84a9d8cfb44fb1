// `service migrate` of a large data directory to the local PostgreSQL and back, through the real
// CLI. The directory's accounts and project are made through the HTTP API; its buckets are written
// straight into the embedded store's tables (BENCH_MIGRATE_ROWS rows over 100 series of one
// project, plus the system key's rows with a per-key count each), as bench/backup.ts builds its
// database. Prints the time and peak memory of each direction and the rows per second, then drops
// the scratch database and deletes every file it made.
// Run: node --import tsx bench/migrate.ts   (needs PostgreSQL on 127.0.0.1:5432, user postgres)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../src/storage/db';
import { SYSTEM_KEY } from '../src/model/write-set';
import { MAIN } from '../test/helpers/process';
import { createProjectWithToken, startTestServer } from '../test/helpers/server';
import { SERVERS, scratchDatabase } from '../test/drivers/network';

const ROWS = Number(process.env.BENCH_MIGRATE_ROWS ?? 300_000);
const SERIES = 100;
const work = mkdtempSync(path.join(os.tmpdir(), 'bench-migrate-'));

/** Bucket rows of 100 series of the project (1-minute buckets), and the system key's rows. */
function build(dataDir: string, projectId: string): number {
  const db = openDatabase(path.join(dataDir, 'service.db'));
  const addSeries = db.prepare("INSERT INTO metric_series (source_id, key, granularity) VALUES (?, ?, '1m')");
  const addBucket = db.prepare('INSERT INTO metric_buckets (series_id, bucket, data) VALUES (?, ?, ?)');
  const addCount = db.prepare(
    'INSERT INTO metric_key_counts (series_id, bucket, key, count) VALUES (?, ?, ?, ?)',
  );
  const first = Date.UTC(2026, 0, 1) / 1000;
  const perSeries = Math.ceil(ROWS / SERIES);
  let rows = 0;
  db.transaction(() => {
    const system = Number(addSeries.run(projectId, SYSTEM_KEY).lastInsertRowid);
    for (let s = 0; s < SERIES; s++) {
      const id = Number(addSeries.run(projectId, `shop.k${s}`).lastInsertRowid);
      for (let i = 0; i < perSeries; i++) {
        const data = {
          count: i % 17,
          amount: { net: i * 0.37, tax: 0.25 },
          status: { ok: 3, failed: i % 2 },
        };
        addBucket.run(id, first + i * 60, JSON.stringify(data));
        rows++;
        if (s < 10) addCount.run(system, first + i * 60, `shop.k${s}`, i % 17);
      }
    }
    for (let i = 0; i < perSeries; i++) addBucket.run(system, first + i * 60, JSON.stringify({ count: 99 }));
    rows += perSeries;
  })();
  db.close();
  return rows;
}

/** Runs the CLI under /usr/bin/time: seconds and peak resident kB. */
function timed(args: string[]): { s: number; maxKb: number; out: string } {
  const started = performance.now();
  const res = spawnSync('/usr/bin/time', ['-f', 'maxrss %M', process.execPath, ...MAIN, ...args], {
    encoding: 'utf8',
  });
  const s = (performance.now() - started) / 1000;
  if (res.status !== 0) throw new Error(`migrate ${args.join(' ')} failed: ${res.stderr}`);
  return { s, maxKb: Number(/maxrss (\d+)/.exec(res.stderr)?.[1] ?? 0), out: res.stdout };
}

const server = await startTestServer();
const project = await createProjectWithToken(server);
await server.close();
const dataDir = server.dataDir;
const scratch = await scratchDatabase('postgres');
const url = `postgres://postgres@${SERVERS.postgres.host}:${SERVERS.postgres.port}/${scratch.name}`;
try {
  const rows = build(dataDir, project.sourceId);
  console.log(
    `rows: ${rows} bucket rows (${SERIES} series and the system key), load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  const to = timed(['migrate', '--to', url, '--data', dataDir]);
  console.log(
    `migrate --to:   ${to.s.toFixed(1)} s, ${Math.round(rows / to.s)} rows/s, peak RSS ${(to.maxKb / 1024).toFixed(0)} MiB, load ${os.loadavg()[0]!.toFixed(2)}`,
  );
  const back = timed(['migrate', '--from', url, '--to', path.join(work, 'back')]);
  console.log(
    `migrate --from: ${back.s.toFixed(1)} s, ${Math.round(rows / back.s)} rows/s, peak RSS ${(back.maxKb / 1024).toFixed(0)} MiB, load ${os.loadavg()[0]!.toFixed(2)}`,
  );
} finally {
  await scratch.drop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
}
