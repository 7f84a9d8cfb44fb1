// The login throttle on PostgreSQL (src/storage/pg/login-throttle.ts): the same begin/succeeded
// calls on the in-memory throttle and on the PostgreSQL one give the same answers with a
// controlled clock (sweeping stale rows on every call changes none of them); three stores on one
// database (three nodes) let one e-mail through as often as one node does; stale rows are swept,
// in bounded batches, and never a running block.
// Against the local PostgreSQL (a scratch database, dropped at the end); skipped without one.
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADDRESS_RULE,
  EMAIL_RULE,
  createLoginThrottle,
  type LoginThrottle,
  type ThrottleRule,
} from '../../src/domain/login-throttle';
import { createPgLoginThrottle } from '../../src/storage/pg/login-throttle';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { pgSkip, scratchPgStore, type ScratchStore } from '../helpers/pg-store';

const skip = pgSkip();
const T0 = 1_800_000_000_000;

/** A small deterministic generator (mulberry32), so a failing sequence can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('PostgreSQL login throttle', { skip }, () => {
  let scratch: ScratchStore;
  const stores: PgStore[] = [];
  const rows = async () =>
    scratch.store.rows<{ key: string; failures: number; blocked_until: number; last_failure: number }>(
      'SELECT key, failures, blocked_until, last_failure FROM login_throttle ORDER BY key COLLATE "C"',
    );

  before(async () => {
    scratch = await scratchPgStore();
    stores.push(scratch.store, createPgStore(scratch.url), createPgStore(scratch.url));
  });
  after(async () => {
    for (const store of stores.slice(1)) await store.close().catch(() => undefined);
    await scratch?.drop();
  });
  beforeEach(async () => {
    await scratch.store.run('DELETE FROM login_throttle');
  });

  /**
   * `steps` random calls over a few e-mails (in mixed case) and addresses (IPv4, IPv6 of one /64,
   * IPv4-mapped) with a clock that moves by small and large steps, on the in-memory throttle and
   * on `pg`; every answer must match.
   */
  async function replay(
    seed: number,
    steps: number,
    rules: { email: ThrottleRule; address: ThrottleRule },
    pg: LoginThrottle,
  ): Promise<{ refused: number; passed: number }> {
    const memory = createLoginThrottle(rules);
    const random = prng(seed);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const emails = ['ann@x.io', 'ANN@X.io', 'bob@x.io', 'Cy@x.io', 'dee@x.io', 'eve@x.io'];
    const addresses = [
      '203.0.113.7',
      '::ffff:203.0.113.7',
      '2001:db8:1:2::5',
      '2001:DB8:1:2:ffff::9',
      '198.51.100.1',
    ];
    const forget = Math.max(rules.email.forgetAfterMs, rules.address.forgetAfterMs);
    let now = T0;
    let refused = 0;
    let passed = 0;
    for (let step = 0; step < steps; step++) {
      const r = random();
      if (r < 0.02) now += forget + 1 + Math.floor(random() * 1000);
      else if (r < 0.25) now += Math.floor(random() * rules.email.maxDelayMs);
      else if (r < 0.6) now += Math.floor(random() * 2_000);
      const email = pick(emails);
      const address = pick(addresses);
      if (random() < 0.15) {
        await memory.succeeded(email, address);
        await pg.succeeded(email, address);
        continue;
      }
      const expected = await memory.begin(email, address, now);
      const actual = await pg.begin(email, address, now);
      assert.equal(
        actual,
        expected,
        `seed ${seed}, step ${step}: begin(${email}, ${address}, T0 + ${now - T0})`,
      );
      if (expected > 0) refused += 1;
      else passed += 1;
    }
    return { refused, passed };
  }

  const small = {
    email: { free: 3, baseDelayMs: 1_000, maxDelayMs: 8_000, forgetAfterMs: 60_000, maxEntries: 10_000 },
    address: { free: 6, baseDelayMs: 500, maxDelayMs: 16_000, forgetAfterMs: 30_000, maxEntries: 10_000 },
  };

  test('the same calls give the same answers as the in-memory throttle (small rules)', async () => {
    const pg = createPgLoginThrottle(scratch.store, { ...small, sweepChance: 0 });
    const { refused, passed } = await replay(1, 400, small, pg);
    // the sequence exercised both answers
    assert.ok(refused > 50 && passed > 50, `refused ${refused}, passed ${passed}`);
  });

  test('the same answers with a sweep of stale rows after every call', async () => {
    const pg = createPgLoginThrottle(scratch.store, { ...small, sweepChance: 1 });
    await replay(2, 500, small, pg);
  });

  test('the same answers with the service rules', async () => {
    const rules = { email: EMAIL_RULE, address: ADDRESS_RULE };
    await replay(3, 300, rules, createPgLoginThrottle(scratch.store, { sweepChance: 0.2, random: prng(4) }));
  });

  test('a scripted sequence: free checks, doubling blocks, success, forgetting', async () => {
    const pg = createPgLoginThrottle(scratch.store);
    const ip = '203.0.113.7';
    for (let i = 0; i < EMAIL_RULE.free; i++) assert.equal(await pg.begin('a@x.io', ip, T0), 0);
    assert.equal(await pg.begin('A@X.IO', ip, T0), 1);
    assert.equal(await pg.begin('a@x.io', ip, T0 + 999), 1);
    assert.equal(await pg.begin('a@x.io', ip, T0 + 1_000), 0); // one more failure: 2 s
    assert.equal(await pg.begin('a@x.io', ip, T0 + 1_000), 2);
    await pg.succeeded('A@x.io', ip);
    assert.equal(await pg.begin('a@x.io', ip, T0 + 1_001), 0);
    const byKey = new Map((await rows()).map((row) => [row.key, row]));
    assert.equal(byKey.get('email:a@x.io')?.failures, 1);
    // free + 1 counted, one taken back by the success, one more
    assert.equal(byKey.get(`address:${ip}`)?.failures, EMAIL_RULE.free + 1);
    // failures without a block are forgotten after forgetAfterMs
    const later = T0 + 1_001 + EMAIL_RULE.forgetAfterMs + 1;
    for (let i = 0; i < EMAIL_RULE.free; i++) assert.equal(await pg.begin('a@x.io', ip, later), 0);
    assert.equal(await pg.begin('a@x.io', ip, later), 1);
  });

  test('three nodes, 200 wrong guesses at once for one e-mail: exactly `free` checks in all', async () => {
    const nodes = stores.map((store) => createPgLoginThrottle(store, { sweepChance: 0 }));
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => nodes[i % 3]!.begin('victim@x.io', `198.51.100.${i % 50}`, T0)),
    );
    assert.equal(answers.filter((s) => s === 0).length, EMAIL_RULE.free);
    assert.ok(answers.every((s) => s === 0 || s === 1));
    const victim = (await rows()).find((row) => row.key === 'email:victim@x.io');
    assert.equal(victim?.failures, EMAIL_RULE.free);
  });

  test('three nodes, 200 guesses at once from one address on many e-mails: exactly the address allowance', async () => {
    const nodes = stores.map((store) => createPgLoginThrottle(store, { sweepChance: 0 }));
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, i) => nodes[i % 3]!.begin(`user${i}@x.io`, '2001:db8::1', T0)),
    );
    assert.equal(answers.filter((s) => s === 0).length, ADDRESS_RULE.free);
  });

  test('stale rows are swept in bounded batches; running blocks and recent failures stay', async () => {
    const pg = createPgLoginThrottle(scratch.store, { sweepChance: 0 });
    for (let i = 0; i < 150; i++) assert.equal(await pg.begin(`flood${i}@x.io`, `192.0.2.${i}`, T0), 0);
    const later = T0 + EMAIL_RULE.forgetAfterMs + 1;
    // a block running at `later`, and an attempt it refuses from another address (that row counts nothing)
    for (let i = 0; i < EMAIL_RULE.free; i++)
      assert.equal(await pg.begin('blocked@x.io', '192.0.2.200', later - 100), 0);
    assert.equal(await pg.begin('blocked@x.io', '192.0.2.201', later - 100), 1);
    // a block still running whose last failure is long past (a rule whose block outlives forgetAfterMs)
    await scratch.store.run(
      "INSERT INTO login_throttle (key, failures, blocked_until, last_failure) VALUES ('address:long-block', 40, $1, 0)",
      [later + 60_000],
    );
    assert.equal(await pg.begin('recent@x.io', '192.0.2.250', later), 0);
    assert.equal((await rows()).length, 150 * 2 + 2 + 1 + 1 + 2);

    assert.equal(await pg.sweep(later, 100), 100);
    assert.equal(await pg.sweep(later, 1_000), 201);
    assert.equal(await pg.sweep(later, 1_000), 0);
    assert.deepEqual(
      (await rows()).map((row) => row.key),
      [
        'address:192.0.2.200',
        'address:192.0.2.250',
        'address:long-block',
        'email:blocked@x.io',
        'email:recent@x.io',
      ],
    );
    assert.ok((await pg.begin('blocked@x.io', '192.0.2.9', later)) > 0, 'the block still holds');
  });

  test('begin sweeps now and then, as its random draw says', async () => {
    let draw = 0.5;
    const pg = createPgLoginThrottle(scratch.store, { random: () => draw });
    for (let i = 0; i < 20; i++) await pg.begin(`old${i}@x.io`, '192.0.2.1', T0);
    const later = T0 + EMAIL_RULE.forgetAfterMs + 1;
    await pg.begin('new@x.io', '192.0.2.2', later);
    assert.equal((await rows()).length, 20 + 1 + 2);
    draw = 0.001; // under SWEEP_CHANCE
    await pg.begin('newer@x.io', '192.0.2.2', later);
    assert.deepEqual(
      (await rows()).map((row) => row.key),
      ['address:192.0.2.2', 'email:new@x.io', 'email:newer@x.io'],
    );
  });
});
