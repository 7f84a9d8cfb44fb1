// The service's own tables between service.db and PostgreSQL, for `service migrate` (migrate.ts).
// Generic over the tables: the set, the columns and their order are read from both schemas and
// must be equal (storage/pg/migrations.ts mirrors storage/migrations.ts), so a table added on both
// sides is copied without a change here. Tables are written parents first (by their foreign
// keys). Each side of a table is summarised as its row count and an order-free digest of its rows
// (the sum of a hash per row, with integers compared as integers, reals as reals and text as
// text), so the copy is checked value for value, not only counted.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { Db } from '../storage/db';
import { CLUSTER_ONLY_TABLES, EMBEDDED_STORE_TABLES } from '../storage/pg/migrations';
import { OpsError } from './backup';

export type Value = string | number | bigint | null;
export type Row = Value[];

export interface TableSummary {
  rows: number;
  digest: string;
}

/** Rows per INSERT: bounded by PostgreSQL's 65,535 parameters and by a reasonable statement. */
const BATCH_VALUES = 20_000;
const MAX_BATCH_ROWS = 1_000;
/** rows per keyset page read from PostgreSQL */
const PAGE_ROWS = 2_000;
const DIGEST_MOD = 1n << 128n;

/** Accumulates the order-free digest of a table's rows. */
export class RowDigest {
  private sum = 0n;
  rows = 0;
  add(row: Row): void {
    const h = createHash('sha256');
    for (const v of row) {
      if (v === null) h.update('N;');
      else if (typeof v === 'bigint') h.update(`I${v};`);
      else if (typeof v === 'number') h.update(Number.isInteger(v) ? `R${v}.0;` : `R${v};`);
      else h.update(`T${Buffer.byteLength(v)}:${v};`);
    }
    this.sum = (this.sum + BigInt(`0x${h.digest('hex').slice(0, 32)}`)) % DIGEST_MOD;
    this.rows += 1;
  }
  summary(): TableSummary {
    return { rows: this.rows, digest: this.sum.toString(16).padStart(32, '0') };
  }
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The service's tables of service.db (not the embedded metric store's), in copy order. */
export function sqliteServiceTables(db: Db): string[] {
  const names = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    .pluck()
    .all() as string[];
  const tables = names.filter((n) => !EMBEDDED_STORE_TABLES.includes(n)).sort();
  const parents = new Map(
    tables.map((t) => [
      t,
      (db.pragma(`foreign_key_list(${quote(t)})`) as Array<{ table: string }>)
        .map((f) => f.table)
        .filter((p) => p !== t),
    ]),
  );
  const ordered: string[] = [];
  const visit = (t: string, path: Set<string>) => {
    if (ordered.includes(t) || path.has(t)) return;
    path.add(t);
    for (const p of parents.get(t) ?? []) if (parents.has(p)) visit(p, path);
    path.delete(t);
    ordered.push(t);
  };
  for (const t of tables) visit(t, new Set());
  return ordered;
}

export function sqliteColumns(db: Db, table: string): { columns: string[]; key: string[] } {
  const info = db.pragma(`table_info(${quote(table)})`) as Array<{ name: string; pk: number }>;
  const key = info
    .filter((c) => c.pk > 0)
    .sort((a, b) => a.pk - b.pk)
    .map((c) => c.name);
  return { columns: info.map((c) => c.name), key: key.length > 0 ? key : ['rowid'] };
}

/** The service's tables in the connection's schema (schema_migrations aside), with their columns. */
export async function pgTables(client: pg.ClientBase): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    `SELECT c.table_name, c.column_name FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name <> 'schema_migrations'
     ORDER BY c.table_name, c.ordinal_position`,
  );
  const out = new Map<string, string[]>();
  for (const r of rows) {
    const list = out.get(r.table_name) ?? [];
    list.push(r.column_name);
    out.set(r.table_name, list);
  }
  return out;
}

/** Fails unless both sides hold the same tables with the same columns in the same order. */
export function assertSameTables(sqlite: Db, tables: string[], pgSide: Map<string, string[]>): void {
  const missing = tables.filter((t) => !pgSide.has(t));
  const extra = [...pgSide.keys()].filter((t) => !tables.includes(t) && !CLUSTER_ONLY_TABLES.includes(t));
  if (missing.length > 0 || extra.length > 0) {
    throw new OpsError(
      `the PostgreSQL schema and service.db hold different tables (only in service.db: ${missing.join(', ') || 'none'}; only in PostgreSQL: ${extra.join(', ') || 'none'})`,
    );
  }
  for (const t of tables) {
    const a = sqliteColumns(sqlite, t).columns.join(', ');
    const b = pgSide.get(t)!.join(', ');
    if (a !== b) throw new OpsError(`table ${t} has columns (${a}) in service.db but (${b}) in PostgreSQL`);
  }
}

/** Reads a table of service.db with its integers exact (bigint), feeding `digest` on the way. */
export function* sqliteRows(db: Db, table: string, digest?: RowDigest): Generator<Row> {
  const { columns, key } = sqliteColumns(db, table);
  const statement = db
    .prepare(
      `SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)} ORDER BY ${key.map(quote).join(', ')}`,
    )
    .raw(true)
    .safeIntegers(true);
  for (const row of statement.iterate() as Iterable<Row>) {
    digest?.add(row);
    yield row;
  }
}

/** The primary key of a PostgreSQL table, in its order. */
async function pgKey(client: pg.ClientBase, table: string): Promise<string[]> {
  const { rows } = await client.query<{ attname: string }>(
    `SELECT a.attname FROM pg_index i
     JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n) ON true
     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
     WHERE i.indrelid = to_regclass($1) AND i.indisprimary ORDER BY k.n`,
    [quote(table)],
  );
  if (rows.length === 0) throw new OpsError(`table ${table} has no primary key in PostgreSQL`);
  return rows.map((r) => r.attname);
}

/** Reads a PostgreSQL table page by page along its primary key, feeding `digest` on the way. */
export async function* pgRows(
  client: pg.ClientBase,
  table: string,
  columns: string[],
  digest?: RowDigest,
): AsyncGenerator<Row> {
  const key = await pgKey(client, table);
  const keyAt = key.map((k) => columns.indexOf(k));
  const list = columns.map(quote).join(', ');
  const order = key.map(quote).join(', ');
  let last: Row | null = null;
  for (;;) {
    const after: string = last ? `WHERE (${order}) > (${key.map((_, i) => `$${i + 1}`).join(', ')})` : '';
    const values: Value[] = last ? keyAt.map((i) => last![i]!) : [];
    const result: pg.QueryResult<Row> = await client.query<Row>({
      text: `SELECT ${list} FROM ${quote(table)} ${after} ORDER BY ${order} LIMIT ${PAGE_ROWS}`,
      values,
      rowMode: 'array',
    });
    const rows = result.rows;
    for (const row of rows) {
      digest?.add(row);
      yield row;
    }
    if (rows.length < PAGE_ROWS) return;
    last = rows[rows.length - 1]!;
  }
}

/** INSERTs of many rows each into a PostgreSQL table. */
export function pgInserter(client: pg.ClientBase, table: string, columns: string[]) {
  const perBatch = Math.max(1, Math.min(MAX_BATCH_ROWS, Math.floor(BATCH_VALUES / columns.length)));
  let batch: Row[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    const values: Value[] = [];
    const tuples = batch.map((row) => {
      const start = values.length;
      values.push(...row);
      return `(${row.map((_, i) => `$${start + i + 1}`).join(', ')})`;
    });
    batch = [];
    try {
      await client.query(
        `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES ${tuples.join(', ')}`,
        values,
      );
    } catch (err) {
      throw new OpsError(`writing table ${table} failed: ${(err as Error).message}`);
    }
  };
  return {
    async add(row: Row) {
      batch.push(row);
      if (batch.length >= perBatch) await flush();
    },
    flush,
  };
}

/** Moves each identity column's next value past the largest copied id. */
export async function resetIdentities(client: pg.ClientBase): Promise<void> {
  const { rows } = await client.query<{ table_name: string; column_name: string }>(
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES'",
  );
  for (const { table_name: t, column_name: c } of rows) {
    await client.query(
      `SELECT setval(pg_get_serial_sequence($1, $2), m) FROM (SELECT max(${quote(c)}) AS m FROM ${quote(t)}) s WHERE m IS NOT NULL`,
      [quote(t), c],
    );
  }
}

/** Writes rows into a table of service.db in one transaction per table. */
export function sqliteInserter(db: Db, table: string, columns: string[]) {
  const insert = db.prepare(
    `INSERT INTO ${quote(table)} (${columns.map(quote).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
  );
  return (rows: Row[]) => db.transaction(() => rows.forEach((r) => insert.run(r)))();
}
