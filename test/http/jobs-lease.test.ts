// Cluster mode's jobs' lease through the real server (src/server.ts, src/ops/jobs.ts,
// docs/cluster.md "Jobs run once"): two servers on one storage.url with a short lease; one runs the
// background jobs and says so in GET /metrics, and a clean stop hands them to the other at its next
// renewal. Against a scratch database of the local PostgreSQL; skipped without one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request, startTestServer, type TestServer } from '../helpers/server';
import { pgSkip, scratchPgStore } from '../helpers/pg-store';
import { createPgLeases, JOBS_LEASE } from '../../src/storage/pg/leases';

const LEASE = 900;
const SLACK = 400;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const held = (s: TestServer) => s.deps.ops.jobs?.held === true;

async function gauge(s: TestServer): Promise<number> {
  const res = await request(s, 'GET', '/metrics');
  assert.equal(res.status, 200);
  const line = res.text.split('\n').find((l) => l.startsWith('service_jobs_lease_held '));
  assert.ok(line, 'service_jobs_lease_held is exposed');
  return Number(line.split(' ')[1]);
}

describe('cluster mode: the background jobs on the node holding the lease', { skip: pgSkip() }, () => {
  test('two servers on one storage.url: one runs the jobs; a clean stop hands them to the other', async () => {
    const scratch = await scratchPgStore();
    const env = { SERVICE_STORAGE_URL: scratch.url, SERVICE_CLUSTER_LEASE_MS: String(LEASE) };
    const servers: TestServer[] = [];
    try {
      servers.push(await startTestServer(env), await startTestServer(env));
      const [a, b] = servers as [TestServer, TestServer];
      const until = performance.now() + LEASE + SLACK;
      while (!held(a) && !held(b)) {
        assert.ok(performance.now() < until, 'a holder within a lease');
        await sleep(10);
      }
      const [holder, other] = held(a) ? [a, b] : [b, a];
      for (let i = 0; i < 20; i++) {
        assert.equal(Number(held(a)) + Number(held(b)), 1, 'one node runs the jobs');
        await sleep(25);
      }
      assert.deepEqual([await gauge(holder), await gauge(other)], [1, 0]);
      const row = await createPgLeases(scratch.store).read(JOBS_LEASE);
      assert.equal(row?.holder, holder.deps.ops.jobs?.holder);

      const stoppedAt = performance.now();
      await holder.stop();
      servers.splice(servers.indexOf(holder), 1);
      while (!held(other)) {
        assert.ok(performance.now() - stoppedAt < LEASE / 3 + SLACK, 'taken over at the next renewal');
        await sleep(10);
      }
      assert.equal(await gauge(other), 1);
      assert.equal(
        (await createPgLeases(scratch.store).read(JOBS_LEASE))?.holder,
        other.deps.ops.jobs?.holder,
      );
    } finally {
      for (const s of servers) await s.stop();
      await scratch.drop();
    }
  });
});
