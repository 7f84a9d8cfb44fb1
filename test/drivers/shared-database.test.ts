// Database sources under load, through two real servers: concurrent tracks of one bucket from two
// service instances sharing one database sum exactly, and a store that goes away mid-load (a TCP
// proxy in this process, cut and restored) answers 503 with Retry-After, never 500, and takes
// writes again once it is back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
} from '../helpers/server';
import { SERVERS, skipReason, tcpProxy } from './network';
import { type SourceAccess, databaseSource, driverFields, scratchLocation, series } from './http-sources';

const AT = '2026-03-01T10:15:00Z';
const HOUR = ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00Z'] as const;
const DRIVERS = ['postgres', 'mysql', 'redis'] as const;

const write = (server: TestServer, access: SourceAccess, values: Record<string, number>) =>
  request(
    server,
    'POST',
    '/api/v1/metrics',
    { key: 'hot', at: AT, values },
    { token: access.token, sourceId: access.sourceId },
  );

for (const driver of DRIVERS) {
  describe(`${driver}: two service instances, one database`, { skip: skipReason(driver) }, () => {
    let a: TestServer;
    let b: TestServer;
    let remove: () => Promise<void>;
    before(async () => {
      [a, b] = await Promise.all([startTestServer(), startTestServer()]);
    });
    after(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await remove?.();
    });

    test('concurrent tracks of one bucket sum exactly', async () => {
      const place = await scratchLocation(driver);
      remove = place.remove;
      const mode = driver === 'redis' ? 'full' : 'separated';
      const [agentA, agentB] = await Promise.all([signupWithOrganization(a), signupWithOrganization(b)]);
      const accessA = await databaseSource(a, agentA, driverFields(driver, mode, place.at));
      const accessB = await databaseSource(b, agentB, driverFields(driver, mode, place.at));
      const N = 60;
      const replies = await Promise.all(
        Array.from({ length: N }, (_, i) => [
          write(a, accessA, { n: 1, half: 0.5 }),
          write(b, accessB, { n: 1, half: 0.5, [`k${i % 3}`]: 1 }),
        ]).flat(),
      );
      assert.deepEqual(
        [...new Set(replies.map((r) => r.status))],
        [201],
        replies.map((r) => r.text).find((t) => !t.includes('created')),
      );
      for (const [server, access] of [
        [a, accessA],
        [b, accessB],
      ] as const) {
        const read = await series(server, access, 'hot', ...HOUR, '1h');
        assert.deepEqual(read.values, [{ n: 2 * N, half: N, k0: N / 3, k1: N / 3, k2: N / 3 }]);
        const system = await series(server, access, null, ...HOUR, '1h');
        assert.deepEqual(system.values, [{ count: 2 * N, keys: { hot: 2 * N } }]);
      }
    });
  });

  describe(`${driver}: the store goes away mid-load and comes back`, { skip: skipReason(driver) }, () => {
    let server: TestServer;
    let agent: Agent;
    let remove: () => Promise<void>;
    before(async () => {
      server = await startTestServer();
      agent = await signupWithOrganization(server);
    });
    after(async () => {
      await server?.stop();
      await remove?.();
    });

    test('503 with Retry-After while it is gone, never 500; writes and reads work again after', async () => {
      const place = await scratchLocation(driver);
      remove = place.remove;
      const proxy = await tcpProxy(SERVERS[driver]);
      try {
        const access = await databaseSource(
          server,
          agent,
          driverFields(driver, 'full', { ...place.at, host: '127.0.0.1', port: proxy.port }),
        );
        let acked = 0;
        const statuses = new Map<number, number>();
        const load = async (rounds: number) => {
          for (let i = 0; i < rounds; i++) {
            const replies = await Promise.all(
              Array.from({ length: 5 }, () => write(server, access, { n: 1 })),
            );
            for (const r of replies) {
              statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
              if (r.status === 201) acked += 1;
              else {
                assert.equal(r.status, 503, r.text);
                assert.ok(Number(r.headers.get('retry-after')) > 0);
                assert.doesNotMatch(r.text, /ECONN|127\.0\.0\.1|password/);
              }
            }
          }
        };
        await load(4);
        proxy.cut();
        await load(4);
        const read = await request(
          server,
          'GET',
          `/api/v1/metrics?key=hot&from=${HOUR[0]}&to=${HOUR[1]}&granularity=1h`,
          undefined,
          { token: access.token, sourceId: access.sourceId },
        );
        assert.equal(read.status, 503, read.text);
        assert.ok((statuses.get(503) ?? 0) >= 20, JSON.stringify([...statuses]));
        await proxy.restore();
        let back = false;
        for (let i = 0; i < 50 && !back; i++) {
          back = (await write(server, access, { n: 1 })).status === 201;
          if (back) acked += 1;
          else await new Promise((r) => setTimeout(r, 100));
        }
        assert.ok(back, 'writes work again once the store is back');
        await load(2);
        assert.equal(statuses.get(500), undefined);
        const after = await series(server, access, 'hot', ...HOUR, '1h');
        assert.ok(
          (after.values[0] as { n: number }).n >= acked,
          `${JSON.stringify(after.values)} >= ${acked}`,
        );
      } finally {
        await proxy.close();
      }
    });
  });
}
