// The service's own tables in PostgreSQL (storage/pg/migrations.ts, docs/cluster.md): the
// migrations run once under the advisory lock when several nodes start at once, refuse a newer
// database, and build SQLite's schema column for column. Against the local PostgreSQL (a scratch
// database, dropped at the end); skipped without one.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { SERVERS, scratchDatabase, skipReason } from './network';
import { migrate } from '../../src/storage/migrations';
import {
  CLUSTER_ONLY_TABLES,
  EMBEDDED_STORE_TABLES,
  migratePostgres,
  PG_SCHEMA_VERSION,
} from '../../src/storage/pg/migrations';

const skip = skipReason('postgres');
const urlOf = (name: string) =>
  `postgres://postgres@${SERVERS.postgres.host}:${SERVERS.postgres.port}/${name}`;

describe('the PostgreSQL schema', { skip }, () => {
  let scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  let url = '';
  before(async () => {
    scratch = await scratchDatabase('postgres');
    url = urlOf(scratch.name);
  });
  after(() => scratch?.drop());

  test('nodes starting together: each version applied once, under the advisory lock', async () => {
    const results = await Promise.all([migratePostgres(url), migratePostgres(url), migratePostgres(url)]);
    assert.deepEqual(
      results.map((r) => r.version),
      [PG_SCHEMA_VERSION, PG_SCHEMA_VERSION, PG_SCHEMA_VERSION],
    );
    const applied = results.flatMap((r) => r.applied).sort();
    assert.deepEqual(
      applied,
      Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1),
    );
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = await client.query('SELECT version FROM schema_migrations');
      assert.equal(rows.rowCount, PG_SCHEMA_VERSION);
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)');
      await assert.rejects(migratePostgres(url), /schema version 999 is newer than this build/);
      await client.query('DELETE FROM schema_migrations WHERE version = 999');
    } finally {
      await client.end();
    }
  });

  test('mirrors SQLite column for column: names, order, types, NOT NULL and primary keys', async () => {
    await migratePostgres(url);
    const sqlite = new Database(':memory:');
    migrate(sqlite);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const tables = (
        sqlite
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
          .pluck()
          .all() as string[]
      ).filter((t) => !EMBEDDED_STORE_TABLES.includes(t));
      const TYPES: Record<string, string> = { INTEGER: 'bigint', TEXT: 'text', REAL: 'double precision' };
      for (const table of tables) {
        const info = sqlite.pragma(`table_info(${table})`) as Array<{
          name: string;
          type: string;
          notnull: number;
          pk: number;
        }>;
        const expected = info.map((c) => [c.name, TYPES[c.type], c.notnull === 1 || c.pk > 0]);
        const { rows } = await client.query(
          `SELECT column_name, data_type, is_nullable = 'NO' AS not_null FROM information_schema.columns
           WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position`,
          [table],
        );
        assert.deepEqual(
          rows.map((r) => [r.column_name, r.data_type, r.not_null]),
          expected,
          table,
        );
        const pk = await client.query(
          `SELECT a.attname FROM pg_index i JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(n, o) ON true
           JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n
           WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY k.o`,
          [table],
        );
        const sqlitePk = info
          .filter((c) => c.pk > 0)
          .sort((x, y) => x.pk - y.pk)
          .map((c) => c.name);
        assert.deepEqual(
          pk.rows.map((r) => r.attname),
          sqlitePk,
          `${table} primary key`,
        );
      }
      const pgTables = await client.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> 'schema_migrations' ORDER BY 1",
      );
      assert.deepEqual(
        pgTables.rows.map((r) => r.table_name).filter((t) => !CLUSTER_ONLY_TABLES.includes(t)),
        tables,
      );
    } finally {
      await client.end();
      sqlite.close();
    }
  });
});
