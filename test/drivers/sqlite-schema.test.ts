// The exact-schema check accepts the layouts the Trifle::Stats libraries create (Ruby, Elixir, Go,
// and this service's setup) and refuses what could run code or change what the upserts do.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { schemaProblem } from '../../src/drivers/sqlite/schema';
import { SETUP_DDL, type IdentifierMode } from '../../src/drivers/sqlite/setup';

function problem(sql: string, mode: IdentifierMode): string | null {
  const db = new Database(':memory:');
  try {
    db.exec(sql);
    return schemaProblem(db, mode);
  } finally {
    db.close();
  }
}

const ACCEPTED: [string, IdentifierMode, string][] = [
  ['this service', 'full', SETUP_DDL.full.join(';')],
  ['this service', 'partial', SETUP_DDL.partial.join(';')],
  ['this service', 'separated', SETUP_DDL.separated.join(';')],
  [
    'Ruby',
    'full',
    'CREATE TABLE trifle_stats (key varchar(255), data json); CREATE UNIQUE INDEX idx_trifle_stats_key ON trifle_stats (key);',
  ],
  [
    'Elixir',
    'full',
    "CREATE TABLE IF NOT EXISTS trifle_stats (\n key TEXT PRIMARY KEY,\n data TEXT NOT NULL DEFAULT '{}'\n)",
  ],
  [
    'Elixir',
    'partial',
    "CREATE TABLE trifle_stats (key TEXT NOT NULL, at TEXT NOT NULL, data TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (key, at))",
  ],
  [
    'Elixir',
    'separated',
    "CREATE TABLE trifle_stats (key TEXT NOT NULL, granularity TEXT NOT NULL, at TEXT NOT NULL, data TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (key, granularity, at))",
  ],
  ['Go', 'full', "CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT NOT NULL DEFAULT '{}')"],
  [
    'quoted names, comments',
    'full',
    'CREATE TABLE "trifle_stats" ("key" TEXT /* id */ UNIQUE, [data] json) -- mine',
  ],
];

const REFUSED: [string, string, RegExp][] = [
  ['no table', 'CREATE TABLE other (x)', /^missing$/],
  ['COLLATE', 'CREATE TABLE trifle_stats (key TEXT COLLATE NOCASE PRIMARY KEY, data TEXT)', /COLLATE/],
  [
    'REFERENCES',
    'CREATE TABLE p (k TEXT PRIMARY KEY); CREATE TABLE trifle_stats (key TEXT PRIMARY KEY REFERENCES p(k), data TEXT)',
    /REFERENCES/,
  ],
  ['ON CONFLICT', 'CREATE TABLE trifle_stats (key TEXT PRIMARY KEY ON CONFLICT REPLACE, data TEXT)', /ON/],
  [
    'DEFAULT expression',
    "CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT DEFAULT (json('{}')))",
    /DEFAULT expression/,
  ],
  [
    'INTEGER key',
    'CREATE TABLE trifle_stats (key INTEGER PRIMARY KEY, data TEXT)',
    /column key .* type INTEGER/,
  ],
  [
    'extra column',
    'CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT, extra TEXT)',
    /has columns \(key, data, extra\)/,
  ],
  [
    'a second unique index',
    'CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT UNIQUE)',
    /unique on \(data\)/,
  ],
  [
    'partial index',
    'CREATE TABLE trifle_stats (key TEXT, data TEXT); CREATE UNIQUE INDEX i ON trifle_stats (key) WHERE key > 0',
    /partial index/,
  ],
  [
    'expression index',
    'CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT); CREATE INDEX e ON trifle_stats (length(data))',
    /expression/,
  ],
  [
    'a trigger on trifle_stats',
    'CREATE TABLE trifle_stats (key TEXT PRIMARY KEY, data TEXT); CREATE TRIGGER t AFTER DELETE ON trifle_stats BEGIN SELECT 1; END',
    /trigger \(t\)/,
  ],
  [
    'upper-case view name',
    'CREATE TABLE t (key, data); CREATE VIEW TRIFLE_STATS AS SELECT * FROM t',
    /is a view/,
  ],
];

describe('the exact schema of trifle_stats', () => {
  for (const [who, mode, sql] of ACCEPTED) {
    test(`accepts ${who}'s ${mode} layout`, () => assert.equal(problem(sql, mode), null));
  }
  for (const [label, sql, expected] of REFUSED) {
    test(`refuses ${label}`, () => assert.match(problem(sql, 'full') ?? 'accepted', expected));
  }
});
