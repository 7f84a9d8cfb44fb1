// The login throttle on PostgreSQL (cluster mode, SPEC 14): the `login_throttle` table shared by
// every node, so that N nodes allow the guesses of one. Same rules as domain/login-throttle.ts
// (the pure helpers are shared), keys `email:<lower-cased e-mail>` and `address:<address group>`.
//
// - begin is one transaction: both rows are made to exist (INSERT … ON CONFLICT DO NOTHING), then
//   locked FOR UPDATE in a fixed order (the address's, then the e-mail's, as succeeded takes them:
//   never a deadlock), read, and written back. Parallel guesses on any node queue on the row lock and see each other's counts.
// - The table has no eviction by size: instead, now and then (SWEEP_CHANCE of the calls), a
//   bounded DELETE drops stale rows (no block running, last failure older than forgetAfterMs),
//   which count for nothing anyway. A row made for an attempt that a block refused has
//   last_failure 0, so it is stale at once. Rows therefore stay about those of the last hour.
import type { PgStore, Sql } from './client';
import {
  ADDRESS_RULE,
  EMAIL_RULE,
  addressGroup,
  blockedFor,
  waitSeconds,
  withFailure,
  withoutFailure,
  type LoginThrottle,
  type ThrottleEntry,
  type ThrottleRule,
} from '../../model/login-throttle';

/** The share of begin calls followed by a sweep of stale rows. */
export const SWEEP_CHANCE = 0.01;
/** Stale rows one sweep deletes at most. */
export const SWEEP_BATCH = 500;
const EMAIL_PREFIX = 'email:';
const ADDRESS_PREFIX = 'address:';
/** Rounds of make-and-lock before giving up (a sweep may delete a row between the two). */
const LOCK_ROUNDS = 5;

export interface PgLoginThrottleOptions {
  email?: ThrottleRule;
  address?: ThrottleRule;
  /** share of begin calls followed by a sweep, 0..1 (SWEEP_CHANCE) */
  sweepChance?: number;
  /** random numbers in [0, 1) (Math.random) */
  random?: () => number;
}

export interface PgLoginThrottle extends LoginThrottle {
  /** Deletes up to `limit` stale rows at `now`; returns how many. */
  sweep(now: number, limit?: number): Promise<number>;
}

interface ThrottleDbRow {
  key: string;
  failures: number;
  blocked_until: number;
  last_failure: number;
}

const entryOf = (row: ThrottleDbRow): ThrottleEntry => ({
  failures: row.failures,
  blockedUntil: row.blocked_until,
  lastFailure: row.last_failure,
});

export function createPgLoginThrottle(store: PgStore, options: PgLoginThrottleOptions = {}): PgLoginThrottle {
  const emailRule = options.email ?? EMAIL_RULE;
  const addressRule = options.address ?? ADDRESS_RULE;
  const sweepChance = options.sweepChance ?? SWEEP_CHANCE;
  const random = options.random ?? Math.random;
  const emailKey = (email: string) => EMAIL_PREFIX + email.toLowerCase();
  const addressKey = (address: string) => ADDRESS_PREFIX + addressGroup(address);

  /**
   * Both rows, made when missing and locked FOR UPDATE, the address's first ('address:' sorts
   * before 'email:'; succeeded takes them in the same order).
   */
  async function lockRows(sql: Sql, aKey: string, eKey: string): Promise<Map<string, ThrottleDbRow>> {
    for (let round = 0; round < LOCK_ROUNDS; round++) {
      await sql.run(
        `INSERT INTO login_throttle (key, failures, blocked_until, last_failure)
         VALUES ($1, 0, 0, 0), ($2, 0, 0, 0) ON CONFLICT DO NOTHING`,
        [aKey, eKey],
      );
      const rows = await sql.rows<ThrottleDbRow>(
        `SELECT key, failures, blocked_until, last_failure FROM login_throttle
         WHERE key = $1 OR key = $2 ORDER BY key COLLATE "C" FOR UPDATE`,
        [aKey, eKey],
      );
      if (rows.length === 2) return new Map(rows.map((row) => [row.key, row]));
    }
    throw new Error('login throttle: rows deleted while being locked');
  }

  const write = (sql: Sql, key: string, entry: ThrottleEntry) =>
    sql.run('UPDATE login_throttle SET failures = $2, blocked_until = $3, last_failure = $4 WHERE key = $1', [
      key,
      entry.failures,
      entry.blockedUntil,
      entry.lastFailure,
    ]);

  async function sweep(now: number, limit = SWEEP_BATCH): Promise<number> {
    // A row is stale when no block runs and its last failure is older than its rule's forgetAfterMs.
    const emailCutoff = now - emailRule.forgetAfterMs;
    const addressCutoff = now - addressRule.forgetAfterMs;
    const stale = `blocked_until <= $1 AND last_failure < GREATEST($2::bigint, $3::bigint)
      AND last_failure < CASE WHEN starts_with(key, 'email:') THEN $2::bigint ELSE $3::bigint END`;
    return store.run(
      `DELETE FROM login_throttle WHERE key IN (
         SELECT key FROM login_throttle WHERE ${stale}
         ORDER BY last_failure LIMIT $4 FOR UPDATE SKIP LOCKED)
       AND ${stale}`,
      [now, emailCutoff, addressCutoff, limit],
    );
  }

  return {
    async begin(email, address, now) {
      const eKey = emailKey(email);
      const aKey = addressKey(address);
      const seconds = await store.tx(async (sql) => {
        const rows = await lockRows(sql, aKey, eKey);
        const emailEntry = entryOf(rows.get(eKey)!);
        const addressEntry = entryOf(rows.get(aKey)!);
        const wait = Math.max(blockedFor(emailEntry, now), blockedFor(addressEntry, now));
        if (wait > 0) return waitSeconds(wait);
        await write(sql, eKey, withFailure(emailEntry, emailRule, now));
        await write(sql, aKey, withFailure(addressEntry, addressRule, now));
        return 0;
      });
      if (sweepChance > 0 && random() < sweepChance) await sweep(now).catch(() => undefined);
      return seconds;
    },
    async succeeded(email, address) {
      await store.tx(async (sql) => {
        const row = await sql.one<ThrottleDbRow>(
          'SELECT key, failures, blocked_until, last_failure FROM login_throttle WHERE key = $1 FOR UPDATE',
          [addressKey(address)],
        );
        if (row) await write(sql, row.key, withoutFailure(entryOf(row), addressRule));
        await sql.run('DELETE FROM login_throttle WHERE key = $1', [emailKey(email)]);
      });
    },
    sweep,
  };
}
