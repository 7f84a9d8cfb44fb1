// The PostgreSQL layout cuts a large commit's add-only rows into statements of at most
// ROWS_PER_STATEMENT rows (network.timeout_ms applies per statement), in one transaction: against
// the local PostgreSQL, the statements sent are counted through the pool and every sum is read back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  ROWS_PER_STATEMENT,
  createGuardedPool,
  createPostgresStore,
  type GuardedPool,
} from '../../src/drivers/network/postgres';
import { ANY_OUTBOUND } from '../../src/lib/outbound';
import { SERVERS, scratchDatabase, skipReason } from './network';
import { readParsed, writeSet } from './helpers';

const H = Date.UTC(2025, 0, 1, 10);

describe('postgres: rows per statement', { skip: skipReason('postgres') }, () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  before(async () => {
    db = await scratchDatabase('postgres');
  });
  after(async () => {
    await db?.drop();
  });

  /** A pool that records the statements its clients are given (text or prepared name). */
  function recordingPool(): { pool: GuardedPool; sent: string[] } {
    const inner = createGuardedPool({
      host: SERVERS.postgres.host,
      port: SERVERS.postgres.port,
      username: SERVERS.postgres.user,
      database: db.name,
      policy: ANY_OUTBOUND,
    });
    const sent: string[] = [];
    const wrapped = new WeakSet<object>();
    const pool: GuardedPool = {
      get guard() {
        return inner.guard;
      },
      async get() {
        const real = await inner.get();
        return new Proxy(real, {
          get(target, prop) {
            if (prop !== 'connect') {
              const value = Reflect.get(target, prop, target);
              return typeof value === 'function' ? value.bind(target) : value; // pool.query: the real connect
            }
            return async () => {
              const client = await target.connect();
              if (wrapped.has(client)) return client; // a pooled client checked out again
              wrapped.add(client);
              const query = client.query.bind(client) as (...args: unknown[]) => unknown;
              (client as { query: unknown }).query = (q: unknown, ...rest: unknown[]) => {
                sent.push(typeof q === 'string' ? q : ((q as { name?: string }).name ?? 'unnamed'));
                return query(q, ...rest);
              };
              return client;
            };
          },
        });
      },
      close: () => inner.close(),
    };
    return { pool, sent };
  }

  test('a commit of 2.5 x ROWS_PER_STATEMENT add-only rows is 3 statements in one transaction', async () => {
    const { pool, sent } = recordingPool();
    const store = createPostgresStore({ mode: 'separated', timeZone: 'UTC', schema: 'rows_test', pool });
    try {
      await store.setup();
      const rows = Math.round(ROWS_PER_STATEMENT * 2.5);
      const ops = Array.from({ length: rows }, (_, i) => ({
        key: `k${String(i).padStart(5, '0')}`,
        granularity: '1h',
        at: H,
        add: { n: i + 1 },
      }));
      sent.length = 0;
      await store.apply(writeSet(ops));
      await store.apply(writeSet(ops)); // the second adds to every stored row
      const one = sent.slice(0, sent.indexOf('COMMIT') + 1);
      assert.deepEqual(
        one.map((s) => (s.startsWith('ta_') ? 'add' : s)),
        ['BEGIN', 'add', 'add', 'add', 'COMMIT'],
      );
      for (const i of [0, ROWS_PER_STATEMENT - 1, ROWS_PER_STATEMENT, rows - 1]) {
        assert.deepEqual(await readParsed(store, ops[i]!.key, '1h', [H]), [{ n: 2 * (i + 1) }]);
      }
      const c = new pg.Client({ ...SERVERS.postgres, database: db.name });
      await c.connect();
      const total = await c.query(
        "SELECT count(*)::int AS n, sum((data->>'n')::float8) AS s FROM rows_test.trifle_stats",
      );
      await c.end();
      assert.equal(total.rows[0].n, rows);
      assert.equal(Number(total.rows[0].s), rows * (rows + 1));
    } finally {
      await store.close();
      await pool.close();
    }
  });
});
