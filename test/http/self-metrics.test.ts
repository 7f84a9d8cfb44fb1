// GET /metrics (SPEC section 11), read as a scraper would with a parser of the exposition format.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format';
import { createProjectWithToken, request, startTestServer, type TestServer } from '../helpers/server';

async function scrape(server: { url: string }, token?: string): Promise<Map<string, PromFamily>> {
  const res = await request(server, 'GET', '/metrics', undefined, token ? { token } : {});
  assert.equal(res.status, 200, res.text);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return new Map(parsePrometheusTextFormat(res.text).map((f) => [f.name, f]));
}

const value = (
  families: Map<string, PromFamily>,
  name: string,
  labels: Record<string, string> = {},
): number => {
  const family = families.get(name);
  assert.ok(family, `${name} is exposed`);
  const sample = family.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return sample ? Number(sample.value ?? sample.count) : 0;
};

describe('GET /metrics', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('every SPEC 11 series, moving after requests', async () => {
    const p = await createProjectWithToken(server);
    const first = await scrape(server);
    for (const [name, type] of [
      ['service_http_requests_total', 'COUNTER'],
      ['service_ingested_points_total', 'COUNTER'],
      ['service_ingested_leaves_total', 'COUNTER'],
      ['service_write_queue_depth', 'GAUGE'],
      ['service_ingest_commit_seconds', 'HISTOGRAM'],
      ['service_database_size_bytes', 'GAUGE'],
      ['process_resident_memory_bytes', 'GAUGE'],
      ['service_retention_deleted_buckets_total', 'COUNTER'],
      ['service_jobs_lease_held', 'GAUGE'],
    ] as const) {
      assert.equal(first.get(name)?.type, type, name);
    }
    assert.ok(value(first, 'process_resident_memory_bytes') > 10e6);
    assert.ok(value(first, 'service_database_size_bytes') > 0);
    assert.equal(value(first, 'service_write_queue_depth'), 0);
    assert.equal(value(first, 'service_jobs_lease_held'), 1); // one node: always its own
    const created = { method: 'POST', route: '/api/v1/bootstrap/projects', status: '201' };
    assert.equal(value(first, 'service_http_requests_total', created), 1);

    const auth = { token: p.sourceToken, sourceId: p.sourceId };
    const point = { key: 'k', at: '2026-01-24T10:00:00Z', values: { a: 1, b: { c: 2 } } };
    assert.equal((await request(server, 'POST', '/api/v1/metrics', point, auth)).status, 201);
    const batch = { points: [point, point, { ...point, values: { a: 1 } }] };
    assert.equal((await request(server, 'POST', '/api/v1/metrics/batch', batch, auth)).status, 201);
    assert.equal((await request(server, 'POST', '/api/v1/metrics', { key: 'k' }, auth)).status, 400);
    await request(server, 'GET', `/api/v1/bootstrap/projects/${p.sourceId}`);
    await request(server, 'GET', '/api/v1/nope/12345');
    await request(server, 'GET', '/d/12345'); // a page of the web interface

    const second = await scrape(server);
    assert.equal(
      value(second, 'service_ingested_points_total') - value(first, 'service_ingested_points_total'),
      4,
    );
    assert.equal(
      value(second, 'service_ingested_leaves_total') - value(first, 'service_ingested_leaves_total'),
      7,
    );
    const commit = second.get('service_ingest_commit_seconds')!.metrics[0]!;
    assert.equal(Number(commit.count), 2); // one per request
    assert.equal(Number(commit.buckets?.['+Inf'] ?? commit.count), 2);
    assert.ok(Number(commit.sum) > 0);
    const ingest = (status: string, route = '/api/v1/metrics') =>
      value(second, 'service_http_requests_total', { method: 'POST', route, status });
    assert.equal(ingest('201'), 1);
    assert.equal(ingest('400'), 1);
    assert.equal(ingest('201', '/api/v1/metrics/batch'), 1);
    // Route templates and a fixed label for unknown paths: no raw ids in label values.
    const routes = second.get('service_http_requests_total')!.metrics.map((m) => m.labels?.route ?? '');
    assert.ok(routes.includes('unmatched'), routes.join(' '));
    assert.ok(routes.includes('interface'), routes.join(' '));
    assert.ok(!routes.some((r) => r.includes(p.sourceId) || r.includes('12345')), routes.join(' '));
    assert.equal(
      value(second, 'service_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }),
      1,
    );
  });

  test('metrics.enabled = false: 404; metrics.token: 401 without it', async () => {
    const off = await startTestServer({ SERVICE_METRICS_ENABLED: 'false' });
    try {
      const res = await request(off, 'GET', '/metrics');
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { errors: { detail: 'Not found' } });
    } finally {
      await off.stop();
    }
    const guarded = await startTestServer({ SERVICE_METRICS_TOKEN: 'scrape-secret' });
    try {
      assert.equal((await request(guarded, 'GET', '/metrics')).status, 401);
      assert.equal((await request(guarded, 'GET', '/metrics', undefined, { token: 'wrong' })).status, 401);
      assert.ok((await scrape(guarded, 'scrape-secret')).has('service_http_requests_total'));
      assert.equal((await request(guarded, 'POST', '/metrics', {}, { token: 'scrape-secret' })).status, 405);
    } finally {
      await guarded.stop();
    }
  });
});
