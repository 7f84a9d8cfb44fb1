// The retention sweep against ingest: a project holding BENCH_BUCKETS (default 1,000,000) expired
// buckets gets expire_after, and while the service's sweep deletes them, single-point ingest into
// another project runs at full speed. Reports the longest single sweep transaction (the service's
// own measure, from GET /metrics) and the ingest latency before and during the sweep.
// Run: node --import tsx bench/retention.ts
import autocannon, { type Result } from 'autocannon';
import Database from 'better-sqlite3';
import path from 'node:path';
import { createProjectWithToken, request } from '../test/helpers/server';
import { fmt, projectHeaders, serviceLabel, spawnService } from './helpers';

console.log(serviceLabel());
const BUCKETS = Number(process.env.BENCH_BUCKETS ?? 1_000_000);
const SINGLE = JSON.stringify({
  key: 'bench.single',
  at: '2026-01-24T10:00:00Z',
  values: { count: 1, amount: { net: 2.5, tax: 0.5 } },
});

/** Bucket rows of one old series, written straight into the service's database (another connection). */
function insertExpired(dataDir: string, sourceId: string): void {
  const db = new Database(path.join(dataDir, 'service.db'));
  db.pragma('busy_timeout = 5000');
  const started = performance.now();
  db.transaction(() => {
    const seriesId = Number(
      db
        .prepare("INSERT INTO metric_series (source_id, key, granularity) VALUES (?, 'old.key', '1m')")
        .run(sourceId).lastInsertRowid,
    );
    const insert = db.prepare('INSERT INTO metric_buckets (series_id, bucket, data) VALUES (?, ?, ?)');
    const first = Date.UTC(2020, 0, 1) / 1000;
    for (let i = 0; i < BUCKETS; i++)
      insert.run(seriesId, first + i * 60, '{"count":1,"amount":{"net":2.5}}');
  })();
  db.close();
  console.log(
    `setup: ${fmt(BUCKETS)} expired 1m buckets inserted in ${fmt((performance.now() - started) / 1000, 1)} s`,
  );
}

async function scrape(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^(service_retention_\w+(?:\{le="[^"]+"\})?) (\S+)$/gm))
    out[m[1]!] = Number(m[2]);
  return out;
}

const load = (url: string, headers: Record<string, string>, seconds: number) =>
  autocannon({
    url: `${url}/api/v1/metrics`,
    method: 'POST',
    headers,
    body: SINGLE,
    connections: 8,
    duration: seconds,
  });

const summary = (label: string, rs: Result[]) => {
  const ok = rs.reduce((n, r) => n + r['2xx'], 0);
  const seconds = rs.reduce((n, r) => n + r.duration, 0);
  const p99 = Math.max(...rs.map((r) => r.latency.p99));
  const max = Math.max(...rs.map((r) => r.latency.max));
  const bad = rs.reduce((n, r) => n + r.non2xx + r.errors, 0);
  console.log(
    `${label}: ${fmt(ok / seconds)} req/s, latency p99 ${p99} ms (worst slice), max ${max} ms, non-2xx/errors ${bad}`,
  );
};

const service = await spawnService({ SERVICE_RETENTION_SWEEP_INTERVAL_SECONDS: '1' });
try {
  const old = await createProjectWithToken(service, { granularities: ['1m'] });
  insertExpired(service.dataDir, old.sourceId);
  const headers = await projectHeaders(service);
  await load(service.url, headers, 1); // warm-up
  const before: Result[] = [];
  for (let i = 0; i < 3; i++) before.push(await load(service.url, headers, 2));
  summary('ingest, no sweep     ', before);

  const put = await request(
    service,
    'PUT',
    `/api/v1/bootstrap/projects/${old.sourceId}`,
    { expire_after: 86400 },
    { token: old.userToken },
  );
  if (put.status !== 200) throw new Error(`PUT failed: ${put.status} ${put.text}`);
  const during: Result[] = [];
  let stats = await scrape(service.url);
  const startedAt = performance.now();
  while (
    stats.service_retention_deleted_buckets_total! < BUCKETS &&
    performance.now() - startedAt < 300_000
  ) {
    during.push(await load(service.url, headers, 2));
    stats = await scrape(service.url);
  }
  summary('ingest, during sweep ', during);
  console.log(
    `sweep: ${fmt(stats.service_retention_deleted_buckets_total!)} buckets deleted in ${fmt(stats.service_retention_transaction_seconds_count!)} ` +
      `transactions (${fmt(stats['service_retention_transaction_seconds_bucket{le="0.005"}']!)} within 5 ms, ` +
      `${fmt(stats.service_retention_transaction_seconds_count! - stats['service_retention_transaction_seconds_bucket{le="0.01"}']!)} over 10 ms, ` +
      `mean ${fmt((stats.service_retention_transaction_seconds_sum! / stats.service_retention_transaction_seconds_count!) * 1000, 2)} ms); longest transaction ${fmt(stats.service_retention_transaction_max_seconds! * 1000, 2)} ms wall time, ` +
      `${fmt(stats.service_retention_transaction_cpu_max_seconds! * 1000, 2)} ms CPU at most (target ~10 ms); ` +
      `finished within ${fmt((performance.now() - startedAt) / 1000, 1)} s of the PUT (measured in 2 s load slices)`,
  );
  const db = new Database(path.join(service.dataDir, 'service.db'), { readonly: true });
  console.log(
    `rows left in the expired series: ${db.prepare("SELECT count(*) FROM metric_buckets WHERE series_id = (SELECT id FROM metric_series WHERE key = 'old.key')").pluck().get()}`,
  );
  db.close();
} finally {
  await service.stop();
  service.remove();
}
