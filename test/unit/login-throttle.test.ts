// The login throttle: failures counted up front per e-mail and per address, doubling blocks, a
// success that resets the e-mail, and bounded maps that never evict an active block.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ADDRESS_RULE,
  EMAIL_RULE,
  FailureCounters,
  addressGroup,
  createLoginThrottle,
  type LoginThrottle,
} from '../../src/domain/login-throttle';

const T0 = 1_800_000_000_000;
const IP = '203.0.113.7';

/** `times` attempts that all fail; returns how many were let through (not refused). */
async function fail(t: LoginThrottle, email: string, times: number, now = T0, ip = IP): Promise<number> {
  let through = 0;
  for (let i = 0; i < times; i++) if ((await t.begin(email, ip, now)) === 0) through += 1;
  return through;
}

/** Seconds to wait for the next attempt, without counting one when it would pass. */
async function wait(t: LoginThrottle, email: string, now = T0, ip = IP): Promise<number> {
  const seconds = await t.begin(email, ip, now);
  if (seconds === 0) await t.succeeded(`probe-${email}`, ip); // no-op on the e-mail; takes back the address count
  return seconds;
}

describe('login throttle per e-mail', () => {
  test('five attempts pass; the sixth is refused for one second', async () => {
    const t = createLoginThrottle();
    assert.equal(await fail(t, 'a@x.io', 5), 5);
    assert.equal(await t.begin('a@x.io', IP, T0), 1);
    assert.equal(await t.begin('a@x.io', IP, T0 + 999), 1);
    assert.equal(await t.begin('a@x.io', IP, T0 + 1_000), 0);
  });

  test('attempts are counted before the password check: 200 at once let only five through', async () => {
    const t = createLoginThrottle();
    assert.equal(await fail(t, 'parallel@x.io', 200), 5);
  });

  test('each further failure doubles the block, rounded up to whole seconds, capped at 15 minutes', async () => {
    const t = createLoginThrottle();
    await fail(t, 'b@x.io', 5);
    assert.equal(await fail(t, 'b@x.io', 1, T0 + 1_000), 1);
    assert.equal(await wait(t, 'b@x.io', T0 + 1_000), 2);
    await fail(t, 'b@x.io', 1, T0 + 3_000);
    assert.equal(await wait(t, 'b@x.io', T0 + 3_000), 4);
    assert.equal(await wait(t, 'b@x.io', T0 + 6_500), 1);
    // 16 minutes apart: past every block, well inside the hour after which failures are forgotten
    for (let i = 1; i <= 30; i++) assert.equal(await fail(t, 'b@x.io', 1, T0 + 960_000 * i), 1);
    assert.equal(await wait(t, 'b@x.io', T0 + 960_000 * 30), 900);
  });

  test('e-mails are compared without letter case and kept apart from each other', async () => {
    const t = createLoginThrottle();
    await fail(t, 'Mixed@X.io', 5);
    assert.equal(await t.begin('mixed@x.io', IP, T0), 1);
    assert.equal(await t.begin('MIXED@X.IO', IP, T0), 1);
    assert.equal(await wait(t, 'other@x.io'), 0);
  });

  test('a success forgets the failures', async () => {
    const t = createLoginThrottle();
    await fail(t, 'c@x.io', 4);
    assert.equal(await t.begin('c@x.io', IP, T0), 0);
    await t.succeeded('C@x.io', IP);
    assert.equal(await fail(t, 'c@x.io', 5), 5);
  });

  test('10,001 failures on other e-mails do not clear a blocked e-mail (bounded map, harmless entries go first)', async () => {
    const t = createLoginThrottle({ address: { ...ADDRESS_RULE, free: 1e9 } });
    await fail(t, 'victim@x.io', 5);
    for (let i = 0; i < 10_001; i++) await fail(t, `spray-${i}@x.io`, 1, T0, `198.51.${i % 250}.${i % 200}`);
    assert.equal(await t.begin('victim@x.io', IP, T0), 1);
  });

  test('when every entry blocks, the block that ends soonest is evicted, never the longer ones', async () => {
    const counters = new FailureCounters({ ...EMAIL_RULE, maxEntries: 3, free: 1 });
    for (let i = 0; i < 4; i++) counters.fail('long', T0); // blocked 8 s
    counters.fail('short', T0); // 1 s
    counters.fail('mid', T0);
    counters.fail('mid', T0); // 2 s
    counters.fail('new', T0);
    assert.equal(counters.size, 3);
    assert.deepEqual(
      ['long', 'short', 'mid', 'new'].map((k) => counters.blockedFor(k, T0)),
      [8_000, 0, 2_000, 1_000],
    );
  });

  test('a stale entry (an hour without failures) counts from zero again', async () => {
    const counters = new FailureCounters(EMAIL_RULE);
    for (let i = 0; i < 4; i++) counters.fail('k', T0);
    counters.fail('k', T0 + EMAIL_RULE.forgetAfterMs + 1);
    assert.equal(counters.blockedFor('k', T0 + EMAIL_RULE.forgetAfterMs + 1), 0);
  });

  test('memory stays bounded under a spray of random e-mails', async () => {
    const t = createLoginThrottle({ address: { ...ADDRESS_RULE, free: 1e9 } });
    for (let i = 0; i < 30_000; i++) await fail(t, `r-${i}@x.io`, 1);
    // No public size: the bound shows as the oldest sprayed e-mail being forgotten.
    assert.equal(await fail(t, 'r-0@x.io', 5), 5);
  });
});

describe('login throttle per client address', () => {
  test('an address failing on many accounts is slowed too, even for an account it never tried', async () => {
    const t = createLoginThrottle();
    for (let i = 0; i < ADDRESS_RULE.free; i++) assert.equal(await t.begin(`acct-${i}@x.io`, IP, T0), 0);
    assert.equal(await t.begin('fresh@x.io', IP, T0), 1);
    assert.equal(await t.begin('fresh@x.io', '192.0.2.1', T0), 0, 'another address is not slowed');
  });

  test("a success takes back only that attempt's count (own logins cannot wash an address)", async () => {
    const t = createLoginThrottle();
    for (let i = 0; i < ADDRESS_RULE.free - 1; i++) await t.begin(`acct-${i}@x.io`, IP, T0);
    assert.equal(await t.begin('mine@x.io', IP, T0), 0);
    await t.succeeded('mine@x.io', IP);
    assert.equal(await t.begin('guess@x.io', IP, T0), 0, 'the 20th failure still passes');
    assert.equal(await t.begin('guess2@x.io', IP, T0), 1, 'then the address is blocked');
  });

  test('IPv6 addresses share a block per /64; IPv4-mapped addresses are IPv4', async () => {
    assert.equal(addressGroup('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
    assert.equal(addressGroup('2001:db8:1:2:bbbb:cccc:dddd:eeee'), '2001:db8:1:2::/64');
    assert.equal(addressGroup('2001:DB8::1'), '2001:db8:0:0::/64');
    assert.equal(addressGroup('::1'), '0:0:0:0::/64');
    assert.equal(addressGroup('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64');
    const t = createLoginThrottle();
    for (let i = 0; i < ADDRESS_RULE.free; i++)
      await t.begin(`v6-${i}@x.io`, `2001:db8:1:2::${i.toString(16)}`, T0);
    assert.equal(await t.begin('v6-new@x.io', '2001:db8:1:2:ffff::9', T0), 1);
  });
});
