// What reading a cluster project's keys costs (src/intake/key-limit.ts seeds and refreshes a
// project's key set from its schema, docs/cluster.md "The intake's key limit"): a scratch database
// holding one project's schema in the `separated` layout with BENCH_KEYS keys (100,000 by default),
// each with BENCH_MINUTES 1m buckets (5 by default), 2 of 1h and 1 of 1d, and the system key's rows
// (one per bucket, each listing every key as `keys.<key>`). Four ways of listing the keys, each
// timed over BENCH_RUNS runs (3):
//   distinct        SELECT DISTINCT key ... WHERE key > $1 ORDER BY key LIMIT 2000, page after page
//   skip            the same pages by a recursive CTE probing the primary key once per key
//   system          the distinct `keys.*` leaves of every system key row (jsonb_object_keys)
//   systemCoarsest  the same from the rows of the coarsest granularity only (what the service does)
// Run: node --import tsx bench/cluster-keys.ts   (PostgreSQL on 127.0.0.1:5432, user postgres)
import pg from 'pg';
import { scratchDatabase, SERVERS } from '../test/drivers/network';
import { SYSTEM_KEY } from '../src/model/write-set';

const KEYS = Number(process.env.BENCH_KEYS ?? 100_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const PAGE = 2000;
const BUCKETS: Array<[string, number]> = [
  ['1m', Number(process.env.BENCH_MINUTES ?? 5)],
  ['1h', 2],
  ['1d', 1],
];
const T0 = Date.UTC(2026, 10, 27, 10);
const T = 'bench.trifle_stats';

async function main() {
  const db = await scratchDatabase('postgres');
  const client = new pg.Client({ ...SERVERS.postgres, database: db.name });
  await client.connect();
  try {
    const started = performance.now();
    await client.query('CREATE SCHEMA bench');
    await client.query(
      `CREATE TABLE ${T} (key VARCHAR(255) NOT NULL, granularity VARCHAR(255) NOT NULL, at TIMESTAMPTZ NOT NULL, data JSONB NOT NULL DEFAULT '{}'::jsonb, PRIMARY KEY (key, granularity, at))`,
    );
    for (const [granularity, n] of BUCKETS) {
      const step = granularity === '1m' ? 60 : granularity === '1h' ? 3600 : 86400;
      await client.query(
        `INSERT INTO ${T} (key, granularity, at, data)
         SELECT 'cpu,host=h' || lpad(k::text, 7, '0'), $1, to_timestamp($2::float8 / 1000 + b * $3),
                '{"v.sum": 1, "v.count": 1, "v.last": 1}'::jsonb
         FROM generate_series(1, $4) k, generate_series(0, $5 - 1) b`,
        [granularity, T0, step, KEYS, n],
      );
      await client.query(
        `INSERT INTO ${T} (key, granularity, at, data)
         SELECT $1, $2, to_timestamp($3::float8 / 1000 + b * $4),
                (SELECT jsonb_object_agg('keys.cpu,host=h' || lpad(k::text, 7, '0'), 1) FROM generate_series(1, $5) k)
         FROM generate_series(0, $6 - 1) b`,
        [SYSTEM_KEY, granularity, T0, step, KEYS, n],
      );
    }
    await client.query(`VACUUM ANALYZE ${T}`);
    const size = await client.query(
      `SELECT pg_size_pretty(pg_total_relation_size('${T}')) AS total, pg_size_pretty(pg_relation_size('bench.trifle_stats_pkey')) AS pkey, (SELECT count(*) FROM ${T}) AS rows`,
    );
    console.log(
      `${KEYS} keys, ${size.rows[0].rows} rows (table with toast and index ${size.rows[0].total}, primary key ${size.rows[0].pkey}); loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    const ways: Record<string, () => Promise<number>> = {
      async distinct() {
        let after = '';
        let count = 0;
        for (;;) {
          const { rows } = await client.query<{ key: string }>(
            `SELECT DISTINCT key FROM ${T} WHERE key > $1 AND key <> $2 ORDER BY key LIMIT $3`,
            [after, SYSTEM_KEY, PAGE],
          );
          count += rows.length;
          if (rows.length < PAGE) return count;
          after = rows[rows.length - 1]!.key;
        }
      },
      async skip() {
        let after = '';
        let count = 0;
        for (;;) {
          const { rows } = await client.query<{ key: string }>(
            `WITH RECURSIVE k(key) AS (
               (SELECT key FROM ${T} WHERE key > $1 ORDER BY key LIMIT 1)
               UNION ALL
               SELECT (SELECT t.key FROM ${T} t WHERE t.key > k.key ORDER BY t.key LIMIT 1) FROM k WHERE k.key IS NOT NULL
             ) SELECT key FROM k WHERE key IS NOT NULL AND key <> $2 LIMIT $3`,
            [after, SYSTEM_KEY, PAGE],
          );
          count += rows.length;
          if (rows.length < PAGE) return count;
          after = rows[rows.length - 1]!.key;
        }
      },
      async system() {
        const { rows } = await client.query<{ n: string }>(
          `SELECT count(DISTINCT substr(k, 6)) AS n FROM ${T} t, jsonb_object_keys(t.data) k
           WHERE t.key = $1 AND k LIKE 'keys.%'`,
          [SYSTEM_KEY],
        );
        return Number(rows[0]!.n);
      },
      async systemCoarsest() {
        const { rows } = await client.query<{ n: string }>(
          `SELECT count(DISTINCT substr(k, 6)) AS n FROM ${T} t, jsonb_object_keys(t.data) k
           WHERE t.key = $1 AND t.granularity = '1d' AND k LIKE 'keys.%'`,
          [SYSTEM_KEY],
        );
        return Number(rows[0]!.n);
      },
    };
    for (const [name, way] of Object.entries(ways)) {
      const times: number[] = [];
      let found = 0;
      for (let i = 0; i < RUNS; i++) {
        const t = performance.now();
        found = await way();
        times.push(performance.now() - t);
      }
      times.sort((a, b) => a - b);
      console.log(
        `${name.padEnd(15)} ${found} keys: median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms (${times.map((x) => x.toFixed(0)).join(', ')})`,
      );
    }
    // buffers touched by one page of each, from PostgreSQL's own accounting
    for (const [name, sql] of [
      [
        'distinct',
        `SELECT DISTINCT key FROM ${T} WHERE key > '' AND key <> '${SYSTEM_KEY}' ORDER BY key LIMIT ${PAGE}`,
      ],
      [
        'system',
        `SELECT count(DISTINCT substr(k, 6)) FROM ${T} t, jsonb_object_keys(t.data) k WHERE t.key = '${SYSTEM_KEY}' AND k LIKE 'keys.%'`,
      ],
    ] as const) {
      const { rows } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`);
      const plan = rows[0]['QUERY PLAN'][0].Plan;
      console.log(
        `${name.padEnd(15)} one query: shared buffers hit ${plan['Shared Hit Blocks']}, read ${plan['Shared Read Blocks']}`,
      );
    }
  } finally {
    await client.end();
    await db.drop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
