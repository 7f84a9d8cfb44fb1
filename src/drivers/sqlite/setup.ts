// The Trifle::Stats 2.x sqlite layouts a setup creates, per identifier mode (as the Trifle::Stats
// Ruby library's setup! creates them; `IF NOT EXISTS` makes setup idempotent):
//   full       trifle_stats(key, data) with a unique index on key ("<key>::<granularity>::<at>" keys)
//   partial    trifle_stats(key, at, data), primary key (key, at)
//   separated  trifle_stats(key, granularity, at, data), primary key (key, granularity, at),
//              plus trifle_stats_ping(key, at, data) for the latest value per key
// Setup itself runs in sqlite/file.ts, after the file and schema checks.

export type IdentifierMode = 'full' | 'partial' | 'separated';
export const IDENTIFIER_MODES: readonly IdentifierMode[] = ['full', 'partial', 'separated'];

export const SETUP_DDL: Record<IdentifierMode, readonly string[]> = {
  full: [
    'CREATE TABLE IF NOT EXISTS trifle_stats (key varchar(255), data json)',
    'CREATE UNIQUE INDEX IF NOT EXISTS idx_trifle_stats_key ON trifle_stats (key)',
  ],
  partial: [
    'CREATE TABLE IF NOT EXISTS trifle_stats (key varchar(255) NOT NULL, at datetime NOT NULL, data json, PRIMARY KEY (key, at))',
  ],
  separated: [
    'CREATE TABLE IF NOT EXISTS trifle_stats (key varchar(255) NOT NULL, granularity varchar(255) NOT NULL, at datetime NOT NULL, data json, PRIMARY KEY (key, granularity, at))',
    'CREATE TABLE IF NOT EXISTS trifle_stats_ping (key varchar(255) PRIMARY KEY, at datetime NOT NULL, data json)',
  ],
};
