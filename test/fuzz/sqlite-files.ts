// SQLite-ish files for the fuzz test's uploads: real Trifle-layout databases, then the same bytes
// cut, flipped, padded with garbage, or replaced by random bytes behind a valid header.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';

function build(sql: string): Buffer {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fuzz-sqlite-'));
  const file = path.join(dir, 'f.sqlite');
  const db = new Database(file);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
  const bytes = readFileSync(file);
  rmSync(dir, { recursive: true, force: true });
  return bytes;
}

export interface SeedFile {
  label: string;
  /** a schema the service must refuse or survive (issue 9's hostile files) */
  hostile: boolean;
  bytes: Buffer;
}

const SEEDS: Array<[string, boolean, string]> = [
  [
    'full layout with a row',
    false,
    "CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT); INSERT INTO trifle_stats VALUES ('fuzz::1h::1769248800', '{\"n\":1}');",
  ],
  ['partial layout', false, 'CREATE TABLE trifle_stats (key TEXT, at TEXT, data TEXT, UNIQUE (key, at));'],
  [
    'separated layout',
    false,
    'CREATE TABLE trifle_stats (key TEXT, granularity TEXT, at TEXT, data TEXT, UNIQUE (key, granularity, at));',
  ],
  [
    'data not JSON',
    true,
    "CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT); INSERT INTO trifle_stats VALUES ('fuzz::1h::1769248800', 'not json');",
  ],
  [
    'a VIEW named trifle_stats',
    true,
    'CREATE TABLE t (x); CREATE VIEW trifle_stats AS SELECT 1 AS key, 2 AS data;',
  ],
  ['BLOB data with CHECK(0)', true, 'CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data BLOB CHECK (0));'],
  [
    'a RAISE trigger',
    true,
    "CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT); CREATE TRIGGER t BEFORE INSERT ON trifle_stats BEGIN SELECT RAISE(ABORT, 'no'); END;",
  ],
  ['no trifle_stats table', false, 'CREATE TABLE other (x INTEGER);'],
];

/** A handful of real files, built once: the Trifle layouts and some hostile schemas. */
export function seedFiles(): SeedFile[] {
  return SEEDS.map(([label, hostile, sql]) => ({ label, hostile, bytes: build(sql) }));
}

const HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/** A file made from a seed: as is, cut, with flipped bytes, with garbage after the header, or random. */
export function sqliteFile(seeds: SeedFile[]): fc.Arbitrary<Buffer> {
  const seed = fc.nat({ max: seeds.length - 1 }).map((i) => seeds[i]!.bytes);
  return fc.oneof(
    seed,
    fc.tuple(seed, fc.nat()).map(([bytes, cut]) => bytes.subarray(0, cut % (bytes.length + 1))),
    fc
      .tuple(seed, fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { minLength: 1, maxLength: 20 }))
      .map(([bytes, flips]) => {
        const copy = Buffer.from(bytes);
        for (const [at, value] of flips) copy[at % copy.length] = value;
        return copy;
      }),
    fc.uint8Array({ maxLength: 8192 }).map((junk) => Buffer.concat([HEADER, Buffer.from(junk)])),
    fc.uint8Array({ maxLength: 2048 }).map((junk) => Buffer.from(junk)),
  );
}
