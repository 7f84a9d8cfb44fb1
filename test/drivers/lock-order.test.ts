// The service and the Trifle::Stats libraries writing one PostgreSQL or MySQL/MariaDB store at the
// same time never deadlock each other. Two "library" writers issue, in Node, the statements the
// Ruby library (trifle-stats 2.6, postgres and mysql drivers) sends for one track: one transaction,
// and in it, for each configured granularity in its order, the upsert of the key's row and then
// the upsert of the system key's row. Meanwhile the real server takes tracks of the same keys and
// buckets through POST /api/v1/metrics. Neither side may fail (the library does not retry: a
// deadlock it is chosen for is a lost track; the service must not answer 503), and every bucket of
// every granularity, the system key's included, holds the exact sum of both sides.
//
// LOCK_ORDER_ROUNDS (default 60) sets the tracks per library writer and twice it the service's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import mysql from 'mysql2/promise';
import {
  request,
  signupWithOrganization,
  startTestServer,
  type Agent,
  type TestServer,
} from '../helpers/server';
import { bucketWrites } from '../../src/drivers/network/store';
import { emptyWriteSet, type BucketOps } from '../../src/drivers/types';
import { SERVERS, skipReason } from './network';
import { type SourceAccess, databaseSource, driverFields, scratchLocation, series } from './http-sources';

type Mode = 'full' | 'partial' | 'separated';
type Driver = 'postgres' | 'mysql';

/** The libraries' default granularities, in their order (the source lists them alike). */
const GRANULARITIES = ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'];
/** One key on each side of `__system__key__` in byte order, so no string order of keys can be the libraries'. */
const KEYS = ['Beta', 'alpha'];
/** Three minutes of one hour: the 1m rows differ, every coarser row is shared. */
const MINUTES = ['2026-03-04T10:15:00Z', '2026-03-04T10:16:00Z', '2026-03-04T10:17:00Z'];
const SYSTEM_KEY = '__system__key__';
const ROUNDS = Number(process.env.LOCK_ORDER_ROUNDS ?? 60);
const LIBRARY_WRITERS = 2;
const SERVICE_IN_FLIGHT = 6;

/** Bucket start of `at` (UTC, weeks from Monday) as the libraries floor it. */
function floorUtc(atIso: string, granularity: string): Date {
  const d = new Date(atIso);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  switch (granularity) {
    case '1m':
      return new Date(Date.UTC(y, m, d.getUTCDate(), d.getUTCHours(), d.getUTCMinutes()));
    case '1h':
      return new Date(Date.UTC(y, m, d.getUTCDate(), d.getUTCHours()));
    case '1d':
      return new Date(Date.UTC(y, m, d.getUTCDate()));
    case '1w':
      return new Date(Date.UTC(y, m, d.getUTCDate() - ((d.getUTCDay() + 6) % 7)));
    case '1mo':
      return new Date(Date.UTC(y, m, 1));
    case '1q':
      return new Date(Date.UTC(y, m - (m % 3), 1));
    case '1y':
      return new Date(Date.UTC(y, 0, 1));
  }
  throw new Error(`no floor for ${granularity}`);
}

/** The row identity columns and values of (key, granularity, bucket) in an identifier mode. */
function identity(
  mode: Mode,
  key: string,
  granularity: string,
  at: Date,
): { columns: string[]; values: Array<string | Date> } {
  if (mode === 'full')
    return { columns: ['key'], values: [`${key}::${granularity}::${Math.floor(at.getTime() / 1000)}`] };
  if (mode === 'partial') return { columns: ['key', 'at'], values: [`${key}::${granularity}`, at] };
  return { columns: ['key', 'granularity', 'at'], values: [key, granularity, at] };
}

/** The rows one library track writes, in the library's order, each with its flat leaves. */
type Row = { id: ReturnType<typeof identity>; data: Record<string, number> };
function libraryRows(mode: Mode, key: string, atIso: string): Row[] {
  return GRANULARITIES.flatMap((g): Row[] => {
    const at = floorUtc(atIso, g);
    return [
      { id: identity(mode, key, g, at), data: { n: 1 } },
      { id: identity(mode, SYSTEM_KEY, g, at), data: { count: 1, [`keys.${key}`]: 1 } },
    ];
  });
}

interface LibraryWriter {
  /** one track: one transaction; rejects with the server's error (no retry, as the library) */
  track(key: string, atIso: string): Promise<void>;
  close(): Promise<void>;
}

/** A library writer on PostgreSQL: INSERT ... ON CONFLICT DO UPDATE adding each leaf (numeric). */
async function pgLibrary(database: string, mode: Mode): Promise<LibraryWriter> {
  const client = new pg.Client({ ...SERVERS.postgres, database });
  await client.connect();
  client.on('error', () => undefined);
  const text = (columns: string[], paths: string[]) => {
    const n = columns.length;
    let expr = 'to_jsonb(trifle_stats.data)';
    paths.forEach((_, i) => {
      const p = `$${n + 2 + i * 2}`;
      const v = `$${n + 3 + i * 2}`;
      expr = `jsonb_set(${expr}, ARRAY[${p}::text], to_jsonb(COALESCE((trifle_stats.data ->> ${p}::text)::numeric, 0) + ${v}::numeric))`;
    });
    return (
      `INSERT INTO trifle_stats (${columns.join(', ')}, data) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}, $${n + 1}::jsonb) ` +
      `ON CONFLICT (${columns.join(', ')}) DO UPDATE SET data = ${expr}`
    );
  };
  return {
    async track(key, atIso) {
      await client.query('BEGIN');
      try {
        for (const row of libraryRows(mode, key, atIso)) {
          const paths = Object.keys(row.data);
          const values = row.id.values.map((v) => (v instanceof Date ? v.toISOString() : v));
          await client.query(text(row.id.columns, paths), [
            ...values,
            JSON.stringify(row.data),
            ...paths.flatMap((p) => [p, row.data[p]]),
          ]);
        }
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
    close: () => client.end(),
  };
}

/** A library writer on MySQL/MariaDB: prepared INSERT ... ON DUPLICATE KEY UPDATE with JSON_SET sums. */
async function mysqlLibrary(database: string, mode: Mode): Promise<LibraryWriter> {
  const conn = await mysql.createConnection({ ...SERVERS.mysql, database, timezone: 'Z' });
  conn.on('error', () => undefined);
  const text = (columns: string[], paths: string[]) => {
    const sums = paths.map(
      () =>
        '?, COALESCE(CAST(JSON_UNQUOTE(JSON_EXTRACT(COALESCE(`data`, JSON_OBJECT()), ?)) AS DECIMAL(65,10)), 0) + CAST(? AS DECIMAL(65,10))',
    );
    return (
      `INSERT INTO \`trifle_stats\` (${columns.map((c) => `\`${c}\``).join(', ')}, \`data\`) VALUES (${columns.map(() => '?').join(', ')}, ?) ` +
      `ON DUPLICATE KEY UPDATE \`data\` = JSON_SET(COALESCE(\`data\`, JSON_OBJECT()), ${sums.join(', ')})`
    );
  };
  const datetime = (d: Date) => d.toISOString().replace('T', ' ').replace('Z', '000');
  return {
    async track(key, atIso) {
      await conn.query('START TRANSACTION');
      try {
        for (const row of libraryRows(mode, key, atIso)) {
          const paths = Object.keys(row.data);
          const values = row.id.values.map((v) => (v instanceof Date ? datetime(v) : v));
          const sums = paths.flatMap((p) => [`$."${p}"`, `$."${p}"`, row.data[p]!]);
          await conn.execute(text(row.id.columns, paths), [...values, JSON.stringify(row.data), ...sums]);
        }
        await conn.query('COMMIT');
      } catch (err) {
        await conn.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
    close: () => conn.end(),
  };
}

/** How often each (key, minute) was tracked, by whichever side. */
type Tally = Map<string, number>;
const tallyKey = (key: string, minute: number) => `${key}|${minute}`;
const bump = (tally: Tally, key: string, minute: number) =>
  tally.set(tallyKey(key, minute), (tally.get(tallyKey(key, minute)) ?? 0) + 1);

const errorName = (err: unknown) => {
  const e = err as { code?: string; errno?: number; message?: string };
  return String(e.code ?? e.errno ?? e.message ?? err);
};

test('bucketWrites orders rows as the libraries lock them: granularity in the source order, start, keys, system key last', () => {
  const writes = emptyWriteSet();
  const keys = new Map<string, Map<string, Map<number, BucketOps>>>();
  const ops = (): BucketOps => ({ add: new Map([['n', 1]]), set: null });
  // as the merge fills a write set: the system key first, every key's granularities in the source's order
  for (const key of [SYSTEM_KEY, 'zeta', 'Beta', 'alpha']) {
    keys.set(
      key,
      new Map(
        ['1m', '1h', '1d'].map((g) => [
          g,
          new Map([
            [2000, ops()],
            [1000, ops()],
          ]),
        ]),
      ),
    );
  }
  writes.sources.set('s1', keys);
  const order = bucketWrites(writes).map((b) => `${b.granularity} ${b.startMs} ${b.key}`);
  const expected = ['1m', '1h', '1d'].flatMap((g) =>
    [1000, 2000].flatMap((start) =>
      ['Beta', 'alpha', 'zeta', SYSTEM_KEY].map((key) => `${g} ${start} ${key}`),
    ),
  );
  assert.deepEqual(order, expected);
});

for (const driver of ['postgres', 'mysql'] as Driver[]) {
  describe(
    `${driver}: the service and the Trifle library writing the same keys at once`,
    { skip: skipReason(driver) },
    () => {
      let server: TestServer;
      let agent: Agent;
      const removals: Array<() => Promise<void>> = [];
      before(async () => {
        server = await startTestServer();
        agent = await signupWithOrganization(server);
      });
      after(async () => {
        await server?.stop();
        for (const remove of removals) await remove().catch(() => undefined);
      });

      for (const mode of ['full', 'partial', 'separated'] as Mode[]) {
        test(`${mode} identifiers: no deadlock, no failure, exact sums`, async (t) => {
          const place = await scratchLocation(driver);
          removals.push(place.remove);
          const access = await databaseSource(server, agent, {
            ...driverFields(driver, mode, place.at),
            time_zone: 'UTC',
            granularities: GRANULARITIES.join(','),
          });
          const writers = await Promise.all(
            Array.from({ length: LIBRARY_WRITERS }, () =>
              (driver === 'postgres' ? pgLibrary : mysqlLibrary)(place.at.database!, mode),
            ),
          );
          const tally: Tally = new Map();
          const libraryFailures = new Map<string, number>();
          const serviceStatuses = new Map<string, number>();
          try {
            const library = writers.map(async (writer, w) => {
              for (let i = 0; i < ROUNDS; i++) {
                const key = KEYS[(i + w) % KEYS.length]!;
                const minute = (i + 2 * w) % MINUTES.length;
                try {
                  await writer.track(key, MINUTES[minute]!);
                  bump(tally, key, minute);
                } catch (err) {
                  libraryFailures.set(errorName(err), (libraryFailures.get(errorName(err)) ?? 0) + 1);
                }
              }
            });
            let next = 0;
            const total = ROUNDS * LIBRARY_WRITERS;
            const service = Array.from({ length: SERVICE_IN_FLIGHT }, async () => {
              while (next < total) {
                const i = next++;
                const key = KEYS[i % KEYS.length]!;
                const minute = (i + 1) % MINUTES.length;
                const res = await request(
                  server,
                  'POST',
                  '/api/v1/metrics',
                  { key, at: MINUTES[minute], values: { n: 1 } },
                  {
                    token: access.token,
                    sourceId: access.sourceId,
                  },
                );
                const label = res.status === 201 ? '201' : `${res.status} ${res.text.slice(0, 120)}`;
                serviceStatuses.set(label, (serviceStatuses.get(label) ?? 0) + 1);
                if (res.status === 201) bump(tally, key, minute);
              }
            });
            await Promise.all([...library, ...service]);
          } finally {
            await Promise.all(writers.map((w) => w.close().catch(() => undefined)));
          }
          const counts =
            `library tracks ${ROUNDS * LIBRARY_WRITERS}, failed ${JSON.stringify(Object.fromEntries(libraryFailures))}; ` +
            `service writes ${ROUNDS * LIBRARY_WRITERS}, answers ${JSON.stringify(Object.fromEntries(serviceStatuses))}`;
          t.diagnostic(`${driver} ${mode}: ${counts}`);
          assert.equal(libraryFailures.size, 0, counts);
          assert.deepEqual([...serviceStatuses.keys()], ['201'], counts);

          // Every bucket of every granularity, for each key and for the system key.
          const from = MINUTES[0]!;
          const to = MINUTES[MINUTES.length - 1]!;
          const perMinute = (key: string) => MINUTES.map((_, m) => tally.get(tallyKey(key, m)) ?? 0);
          for (const g of GRANULARITIES) {
            const fold = (counts: number[]) => (g === '1m' ? counts : [counts.reduce((a, b) => a + b, 0)]);
            for (const key of KEYS) {
              const read = await series(server, access, key, from, to, g);
              assert.deepEqual(
                read.values,
                fold(perMinute(key)).map((n) => ({ n })),
                `${key} ${g}`,
              );
            }
            const byKey = KEYS.map((key) => fold(perMinute(key)));
            const expected = byKey[0]!.map((_, b) => ({
              count: KEYS.reduce((sum, _k, k) => sum + byKey[k]![b]!, 0),
              keys: Object.fromEntries(KEYS.map((key, k) => [key, byKey[k]![b]!])),
            }));
            const system = await series(server, access, null, from, to, g);
            assert.deepEqual(system.values, expected, `${SYSTEM_KEY} ${g}`);
          }
          const sum = [...tally.values()].reduce((a, b) => a + b, 0);
          assert.equal(sum, 2 * ROUNDS * LIBRARY_WRITERS, 'both sides wrote every track');
        });
      }
    },
  );
}
