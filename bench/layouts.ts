// Compares candidate table layouts for the embedded metric store on one fixed workload.
// Run: node --import tsx bench/layouts.ts
//
// Writes: 120 merged write sets (one group commit each) of 1,000 points x 3 leaves over one hour,
// UTC, granularities 1m 1h 1d 1w 1mo 1q 1y, plus the system key's bookkeeping; once with 10 metric
// keys ("few keys") and once with 20,000 ("many keys", so the system key's long buckets hold up to
// 20,000 `keys.*` leaves). Reads: one key with 10 leaves in every 1h bucket of a year (8,760 buckets),
// turned into the served JSON of each bucket and one response body. Prints leaf upserts/s, read p50
// and bytes per stored leaf, with ratios to the first layout.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';

type Db = Database.Database;
interface Write {
  series: string;
  bucket: number;
  ops: Map<string, number>;
} // path -> amount to add

interface Layout {
  name: string;
  schema: string;
  apply(db: Db, writes: Write[]): void;
  /** the served JSON text of every bucket ('{}' when empty) */
  read(db: Db, series: string, buckets: number[]): string[];
  leafCount(db: Db): number;
}

const HOUR = 3_600_000;
const YEAR_START = Date.UTC(2025, 0, 1);
const DICTIONARIES = `
CREATE TABLE series (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE paths (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE);`;

/** Interns strings into integer ids through a dictionary table (ids cached per connection). */
const interners = new WeakMap<Db, Map<string, Map<string, number>>>();
function intern(db: Db, table: 'series' | 'paths', text: string): number {
  let perDb = interners.get(db);
  if (!perDb) interners.set(db, (perDb = new Map()));
  let cache = perDb.get(table);
  if (!cache) perDb.set(table, (cache = new Map()));
  let id = cache.get(text);
  if (id === undefined) {
    const column = table === 'series' ? 'name' : 'path';
    id =
      (db.prepare(`SELECT id FROM ${table} WHERE ${column} = ?`).pluck().get(text) as number | undefined) ??
      Number(db.prepare(`INSERT INTO ${table} (${column}) VALUES (?)`).run(text).lastInsertRowid);
    cache.set(text, id);
  }
  return id;
}

/** Rebuilds nesting from dot paths. */
function nest(entries: Iterable<[string, number]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [p, v] of entries) {
    const parts = p.split('.');
    let node = out;
    for (let i = 0; i < parts.length - 1; i++) {
      const child = node[parts[i]!];
      node = (typeof child === 'object' ? child : (node[parts[i]!] = {})) as Record<string, unknown>;
    }
    node[parts[parts.length - 1]!] = v;
  }
  return out;
}

function leafLayout(name: string, table: string, pathAsText: boolean): Layout {
  return {
    name,
    schema: `${DICTIONARIES}\n${table}`,
    apply(db, writes) {
      const upsert = db.prepare(
        'INSERT INTO leaf_values (series_id, bucket, path, value) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (series_id, bucket, path) DO UPDATE SET value = value + excluded.value',
      );
      db.transaction(() => {
        for (const w of writes) {
          const sid = intern(db, 'series', w.series);
          for (const [p, v] of w.ops)
            upsert.run(sid, w.bucket / 1000, pathAsText ? p : intern(db, 'paths', p), v);
        }
      }).immediate();
    },
    // The fastest read found for leaf rows: SQLite groups each bucket into one JSON object
    // (row-per-leaf iteration from JS is about 4x slower still).
    read(db, series, buckets) {
      const rows = db
        .prepare(
          'SELECT bucket, json_group_object(path, value) FROM leaf_values ' +
            'WHERE series_id = ? AND bucket BETWEEN ? AND ? GROUP BY bucket',
        )
        .raw(true)
        .all(intern(db, 'series', series), buckets[0]! / 1000, buckets[buckets.length - 1]! / 1000) as Array<
        [number, string]
      >;
      const names = new Map<string, string>();
      const pathName = db.prepare('SELECT path FROM paths WHERE id = ?').pluck();
      const out = new Array<string>(buckets.length).fill('{}');
      let i = 0;
      for (const [bucket, data] of rows) {
        while (i < buckets.length && buckets[i]! < bucket * 1000) i++;
        if (buckets[i] !== bucket * 1000) continue;
        const flat = Object.entries(JSON.parse(data) as Record<string, number>).map(
          ([p, v]): [string, number] => {
            if (pathAsText) return [p, v];
            let n = names.get(p);
            if (n === undefined) names.set(p, (n = pathName.get(Number(p)) as string));
            return [n, v];
          },
        );
        out[i] = JSON.stringify(nest(flat));
      }
      return out;
    },
    leafCount: (db) => db.prepare('SELECT count(*) FROM leaf_values').pluck().get() as number,
  };
}

function addAt(node: Record<string, unknown>, p: string, v: number): void {
  const parts = p.split('.');
  for (let i = 0; i < parts.length - 1; i++) {
    const child = node[parts[i]!];
    node = (typeof child === 'object' && child !== null ? child : (node[parts[i]!] = {})) as Record<
      string,
      unknown
    >;
  }
  const last = parts[parts.length - 1]!;
  const old = node[last];
  node[last] = (typeof old === 'number' ? old : 0) + v;
}

const jsonBucketLayout: Layout = {
  name: 'nested JSON row per bucket, read-modify-write in JS',
  schema: `${DICTIONARIES}
CREATE TABLE buckets (series_id INTEGER NOT NULL, bucket INTEGER NOT NULL, data TEXT NOT NULL,
  PRIMARY KEY (series_id, bucket)) WITHOUT ROWID;`,
  apply(db, writes) {
    const get = db.prepare('SELECT data FROM buckets WHERE series_id = ? AND bucket = ?').pluck();
    const put = db.prepare('INSERT OR REPLACE INTO buckets (series_id, bucket, data) VALUES (?, ?, ?)');
    db.transaction(() => {
      for (const w of writes) {
        const sid = intern(db, 'series', w.series);
        const text = get.get(sid, w.bucket / 1000) as string | undefined;
        const data = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
        for (const [p, v] of w.ops) addAt(data, p, v);
        put.run(sid, w.bucket / 1000, JSON.stringify(data));
      }
    }).immediate();
  },
  // Rows already hold the served JSON: no parse, no nesting.
  read(db, series, buckets) {
    const rows = db
      .prepare('SELECT bucket, data FROM buckets WHERE series_id = ? AND bucket BETWEEN ? AND ?')
      .raw(true)
      .all(intern(db, 'series', series), buckets[0]! / 1000, buckets[buckets.length - 1]! / 1000) as Array<
      [number, string]
    >;
    const out = new Array<string>(buckets.length).fill('{}');
    let i = 0;
    for (const [bucket, data] of rows) {
      while (i < buckets.length && buckets[i]! < bucket * 1000) i++;
      if (buckets[i] === bucket * 1000) out[i] = data;
    }
    return out;
  },
  leafCount(db) {
    let n = 0;
    const count = (node: unknown): void => {
      if (typeof node === 'number') n++;
      else for (const child of Object.values(node as object)) count(child);
    };
    for (const data of db.prepare('SELECT data FROM buckets').pluck().iterate() as Iterable<string>)
      count(JSON.parse(data));
    return n;
  },
};

const LEAF_TABLE = (pathType: string, key: string, suffix: string) =>
  `CREATE TABLE leaf_values (series_id INTEGER NOT NULL, bucket INTEGER NOT NULL, path ${pathType} NOT NULL,
  value NUMERIC NOT NULL, ${key} (series_id, bucket, path))${suffix};`;

const LAYOUTS: Layout[] = [
  leafLayout(
    'leaf row, interned path, WITHOUT ROWID',
    LEAF_TABLE('INTEGER', 'PRIMARY KEY', ' WITHOUT ROWID'),
    false,
  ),
  leafLayout('leaf row, text path, WITHOUT ROWID', LEAF_TABLE('TEXT', 'PRIMARY KEY', ' WITHOUT ROWID'), true),
  leafLayout('leaf row, interned path, rowid + unique index', LEAF_TABLE('INTEGER', 'UNIQUE', ''), false),
  jsonBucketLayout,
];

// ---- workload -------------------------------------------------------------------------------

const GRANULARITIES = ['1m', '1h', '1d', '1w', '1mo', '1q', '1y'];
function floors(ms: number): number[] {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = Date.UTC(y, m, d.getUTCDate());
  const dow = (d.getUTCDay() + 6) % 7; // a plain Monday week is enough for a benchmark
  const week = Math.max(day - dow * 86_400_000, Date.UTC(y, 0, 1));
  return [
    ms - (ms % 60_000),
    ms - (ms % HOUR),
    day,
    week,
    Date.UTC(y, m, 1),
    Date.UTC(y, m - (m % 3), 1),
    Date.UTC(y, 0, 1),
  ];
}

/** The merged write set of one 1,000-point batch over hour `h` (deterministic pseudo-random times). */
function batch(h: number, keys: number): Write[] {
  const merged = new Map<string, Write>();
  const add = (series: string, bucket: number, p: string, v: number) => {
    const id = `${series}@${bucket}`;
    let w = merged.get(id);
    if (!w) merged.set(id, (w = { series, bucket, ops: new Map() }));
    w.ops.set(p, (w.ops.get(p) ?? 0) + v);
  };
  let seed = h * 7919 + 1;
  for (let i = 0; i < 1000; i++) {
    seed = (seed * 48271) % 2147483647;
    const at = YEAR_START + h * HOUR + (seed % HOUR);
    const key = `shop.orders.k${(h * 1000 + i) % keys}`;
    floors(at).forEach((bucket, g) => {
      const series = `${key}|${GRANULARITIES[g]}`;
      add(series, bucket, 'count', 1);
      add(series, bucket, 'amount.total', (i % 17) + 0.5);
      add(series, bucket, 'amount.tax', i % 3);
      add(`__system__key__|${GRANULARITIES[g]}`, bucket, 'count', 1);
      add(`__system__key__|${GRANULARITIES[g]}`, bucket, `keys.${key}`, 1);
    });
  }
  return [...merged.values()];
}

function readDataset(): Write[] {
  return Array.from({ length: 8760 }, (_, h) => ({
    series: 'read.key|1h',
    bucket: YEAR_START + h * HOUR,
    ops: new Map(
      Array.from({ length: 10 }, (_, l): [string, number] => [`metrics.leaf${l}`, h + l + (l % 2) / 2]),
    ),
  }));
}

function p50(samples: number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)]!;
}

function writeRate(layout: Layout, db: Db, keys: number): number {
  const batches = Array.from({ length: 120 }, (_, h) => batch(h, keys));
  let leaves = 0;
  const t0 = process.hrtime.bigint();
  for (const writes of batches) {
    layout.apply(db, writes);
    for (const w of writes) leaves += w.ops.size;
  }
  return leaves / (Number(process.hrtime.bigint() - t0) / 1e9);
}

function readP50(layout: Layout, db: Db): number {
  layout.apply(db, readDataset());
  const buckets = Array.from({ length: 8760 }, (_, h) => YEAR_START + h * HOUR);
  const samples: number[] = [];
  for (let r = 0; r < 31; r++) {
    const t = process.hrtime.bigint();
    const body = `{"data":{"values":[${layout.read(db, 'read.key|1h', buckets).join(',')}]}}`;
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
    const last = (JSON.parse(body) as { data: { values: Array<{ metrics: Record<string, number> }> } }).data
      .values[8759];
    if (last?.metrics.leaf9 !== 8759 + 9.5) throw new Error(`${layout.name}: wrong read`);
  }
  return p50(samples);
}

function measure(layout: Layout, dir: string, index: number) {
  const open = (name: string) => {
    const db = new Database(path.join(dir, `${name}.db`));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(layout.schema);
    return db;
  };
  const few = open(`few${index}`);
  const fewRate = writeRate(layout, few, 10);
  few.pragma('wal_checkpoint(TRUNCATE)');
  const bytesPerLeaf = statSync(path.join(dir, `few${index}.db`)).size / layout.leafCount(few);
  const read = readP50(layout, few);
  few.close();
  const many = open(`many${index}`);
  const manyRate = writeRate(layout, many, 20_000);
  many.close();
  return { fewRate, manyRate, read, bytesPerLeaf };
}

function main(): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-layouts-'));
  try {
    console.log(
      'layout | upserts/s few keys | upserts/s many keys | GET body 8,760 x 10 p50 ms | bytes/leaf',
    );
    const results = LAYOUTS.map((layout, i) => ({ layout, ...measure(layout, dir, i) }));
    const base = results[0]!;
    const fmt = (v: number, b: number, digits = 0) =>
      `${v.toLocaleString('en-US', { maximumFractionDigits: digits })} (x${(v / b).toFixed(2)})`;
    for (const r of results) {
      console.log(
        [
          r.layout.name,
          fmt(r.fewRate, base.fewRate),
          fmt(r.manyRate, base.manyRate),
          fmt(r.read, base.read, 1),
          fmt(r.bytesPerLeaf, base.bytesPerLeaf, 1),
        ].join(' | '),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
