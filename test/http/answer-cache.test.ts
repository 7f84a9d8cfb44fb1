// Kept series answers (domain/metrics/answers.ts), through the real server: a read of an unchanged
// series is sent again from the cache (GET /metrics counts it), and every change that can alter an
// answer is seen by the very next read: a track or an assert of the key, any write for the system
// key, a transponder created or disabled, the retention sweep's deletions. Reads racing writes
// see every point acknowledged before they were sent. With storage.answer_cache_bytes = 0 nothing is
// kept and reads answer the same.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-03-10T00:00:00Z');
const RANGE = {
  from: new Date(T0).toISOString(),
  to: new Date(T0 + 47 * HOUR).toISOString(),
  granularity: '1h',
};

function counts(text: string): { hits: number; misses: number } {
  const value = (result: string) =>
    Number(
      new RegExp(`^service_series_answers_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN,
    );
  return { hits: value('hit'), misses: value('miss') };
}

describe('kept series answers', () => {
  let server: TestServer;
  let clock = T0 + 48 * HOUR;
  let p: ProjectAgent;
  const as = () => ({ token: p.sourceToken, sourceId: p.sourceId });

  before(async () => {
    server = await startTestServer({}, { now: () => clock, sweepTimer: false });
    p = await createProjectWithToken(server, {
      granularities: ['1m', '1h', '1d'],
      expire_after: 30 * 86_400,
    });
  });
  after(() => server.stop());

  const write = async (key: string, hour: number, values: Record<string, unknown>, operation = 'track') => {
    const res = await request(
      server,
      'POST',
      '/api/v1/metrics',
      { key, at: new Date(T0 + hour * HOUR).toISOString(), values, operation },
      as(),
    );
    assert.equal(res.status, 201, res.text);
  };
  const read = async (key: string | null, headers: Record<string, string> = {}) => {
    const query = new URLSearchParams({ ...RANGE, ...(key === null ? {} : { key }) });
    const res = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, { ...as(), headers });
    assert.equal(res.status, 200, res.text);
    return res;
  };
  const values = async (key: string | null) =>
    (await read(key)).body.data.values as Array<Record<string, number | Record<string, number>>>;
  const stats = async () => counts((await request(server, 'GET', '/metrics')).text);

  test(
    'an unchanged series is answered from the cache, byte for byte, compressed or not',
    embeddedOnly(
      "kept answers need the embedded store's change marks (a cluster's rows change under other nodes)",
    ),
    async () => {
      await write('k.cached', 3, { n: 2 });
      const before = await stats();
      const first = await read('k.cached');
      const second = await read('k.cached');
      assert.equal(second.text, first.text);
      const after = await stats();
      assert.equal(after.misses - before.misses, 1);
      assert.equal(after.hits - before.hits, 1);
      // The same answer compressed (kept with it) inflates to the same bytes.
      // Two days of minutes: large enough to be compressed.
      const query = new URLSearchParams({ ...RANGE, granularity: '1m', key: 'k.cached' });
      let plain = '';
      for (let i = 0; i < 3; i++) {
        if (i === 0) plain = (await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as())).text;
        const res = await fetch(`${server.url}/api/v1/metrics?${query}`, {
          headers: {
            authorization: `Bearer ${p.sourceToken}`,
            'x-service-source-id': p.sourceId,
            'accept-encoding': 'gzip',
          },
        });
        assert.equal(res.headers.get('content-encoding'), 'gzip');
        assert.equal(await res.text(), plain); // fetch inflates it
      }
    },
  );

  test(
    'a track or an assert of the key is in the next read; writes of other keys keep the answer',
    embeddedOnly(
      "kept answers need the embedded store's change marks (a cluster's rows change under other nodes)",
    ),
    async () => {
      await write('k.live', 5, { n: 1 });
      assert.equal((await values('k.live'))[5]!.n, 1);
      await write('k.live', 5, { n: 4 });
      assert.equal((await values('k.live'))[5]!.n, 5);
      await write('k.live', 5, { n: 100 }, 'assert');
      assert.equal((await values('k.live'))[5]!.n, 100);

      const before = await stats();
      await write('k.other', 5, { n: 7 });
      assert.equal((await values('k.live'))[5]!.n, 100);
      const after = await stats();
      assert.equal(after.hits - before.hits, 1, 'a write of another key keeps the answer');
    },
  );

  test(
    'a source written with more keys than the writer has slots keeps the answers of unchanged keys',
    embeddedOnly(
      "kept answers need the embedded store's change marks (a cluster's rows change under other nodes)",
    ),
    async () => {
      await write('k.quiet', 13, { n: 1 });
      const writeMany = async (round: number) => {
        for (let b = 0; b < 20; b++) {
          const points = Array.from({ length: 1000 }, (_, i) => ({
            key: `many.${round}.${b * 1000 + i}`,
            at: new Date(T0 + 13 * HOUR).toISOString(),
            values: { n: 1 },
          }));
          const res = await request(server, 'POST', '/api/v1/metrics/batch', { points }, as());
          assert.equal(res.status, 201, res.text);
        }
      };
      await writeMany(0);
      assert.equal((await values('k.quiet'))[13]!.n, 1);
      const before = await stats();
      await writeMany(1); // 20,000 other keys: every slot of the source is written (all but 1 in 130)
      assert.equal((await values('k.quiet'))[13]!.n, 1);
      const after = await stats();
      assert.equal(after.hits - before.hits, 1, 'the unchanged key is answered from the cache');
      await write('k.quiet', 13, { n: 2 });
      assert.equal((await values('k.quiet'))[13]!.n, 3);
    },
  );

  test('the system key follows every write of the source', async () => {
    const countAt = async (hour: number) => ((await values(null))[hour]!.count as number | undefined) ?? 0;
    const start = await countAt(7);
    await write('ka', 7, { n: 1 });
    assert.equal(await countAt(7), start + 1);
    await write('kb', 7, { n: 1 });
    assert.equal(await countAt(7), start + 2);
    const keys = (await values(null))[7]!.keys as Record<string, number>;
    assert.equal(keys.kb, 1);
  });

  test('a transponder created, disabled or removed changes the next read', async () => {
    await write('k.t', 9, { sum: 10, count: 4 });
    assert.equal((await values('k.t'))[9]!.mean, undefined);
    const made = await request(
      server,
      'POST',
      '/api/v1/transponders',
      { name: 'mean', key: 'k.t', paths: ['sum', 'count'], expression: 'a / b', response: 'mean' },
      as(),
    );
    assert.equal(made.status, 201, made.text);
    assert.equal((await values('k.t'))[9]!.mean, 2.5);
    const id = made.body.data.id as string;
    const off = await request(server, 'PUT', `/api/v1/transponders/${id}`, { enabled: false }, as());
    assert.equal(off.status, 200, off.text);
    assert.equal((await values('k.t'))[9]!.mean, undefined);
    assert.equal(
      (await request(server, 'PUT', `/api/v1/transponders/${id}`, { enabled: true }, as())).status,
      200,
    );
    assert.equal((await values('k.t'))[9]!.mean, 2.5);
    assert.equal(
      (await request(server, 'DELETE', `/api/v1/transponders/${id}`, undefined, as())).status,
      200,
    );
    assert.equal((await values('k.t'))[9]!.mean, undefined);
  });

  test('buckets the retention sweep deletes are gone from the next read', async () => {
    await write('k.old', 1, { n: 3 });
    assert.equal((await values('k.old'))[1]!.n, 3);
    assert.equal((await values('k.old'))[1]!.n, 3); // kept
    clock = T0 + 40 * 86_400_000;
    const deleted = await server.deps.ops.sweeper.sweep();
    assert.ok(deleted > 0);
    assert.deepEqual((await values('k.old'))[1], {});
    clock = T0 + 48 * HOUR;
  });

  test('reads racing writes see every point acknowledged before they were sent', async () => {
    let acknowledged = 0;
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 60; i++) {
        await write('k.race', 11, { n: 1 });
        acknowledged++;
      }
      writing = false;
    })();
    const readers = [0, 1, 2].map(async () => {
      while (writing) {
        const floor = acknowledged;
        const n = ((await values('k.race'))[11]?.n as number | undefined) ?? 0;
        assert.ok(n >= floor, `read ${n} after ${floor} acknowledged`);
      }
    });
    await Promise.all([writer, ...readers]);
    assert.equal((await values('k.race'))[11]!.n, 60);
  });
});

describe('kept series answers switched off', () => {
  let server: TestServer;
  after(() => server?.stop());

  test('storage.answer_cache_bytes = 0 keeps nothing; reads answer the same', async () => {
    server = await startTestServer({ SERVICE_ANSWER_CACHE_BYTES: '0' });
    const p = await createProjectWithToken(server, { granularities: ['1h'] });
    const as = { token: p.sourceToken, sourceId: p.sourceId };
    const at = new Date(T0 + HOUR).toISOString();
    assert.equal(
      (await request(server, 'POST', '/api/v1/metrics', { key: 'k', at, values: { n: 2 } }, as)).status,
      201,
    );
    const query = new URLSearchParams({ ...RANGE, key: 'k' });
    const first = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as);
    const second = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as);
    assert.equal(first.body.data.values[1].n, 2);
    assert.equal(second.text, first.text);
    assert.doesNotMatch((await request(server, 'GET', '/metrics')).text, /service_series_answers_total/);
  });
});
