// Retention rules (pure): which bucket starts expire, and the retention map's validation.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expiryCutoffMs, parseRetention } from '../../src/domain/retention';

const NOW = Date.parse('2026-03-31T12:00:00Z');

describe('retention rules', () => {
  test('expire_after applies to every granularity; a retention entry wins for its own', () => {
    const rules = { timeZone: 'UTC', expireAfter: 3600, retention: { '1m': '2d', '1d': '5y' } };
    assert.equal(expiryCutoffMs(rules, '1h', NOW), NOW - 3_600_000);
    assert.equal(expiryCutoffMs(rules, '1m', NOW), NOW - 2 * 86_400_000);
    assert.equal(expiryCutoffMs(rules, '1d', NOW), Date.parse('2021-03-31T12:00:00Z'));
    assert.equal(expiryCutoffMs({ timeZone: 'UTC', expireAfter: null, retention: null }, '1m', NOW), null);
    assert.equal(
      expiryCutoffMs({ timeZone: 'UTC', expireAfter: null, retention: { '1m': '1h' } }, '1h', NOW),
      null,
    );
  });

  test('calendar units count back by calendar in the zone', () => {
    const rules = {
      timeZone: 'Europe/Bratislava',
      expireAfter: null,
      retention: { '1d': '1mo', '1w': '1q' },
    };
    // 31 March 14:00 local minus one month is the end of February (clamped), same wall time.
    assert.equal(expiryCutoffMs(rules, '1d', NOW), Date.parse('2026-02-28T13:00:00Z'));
    assert.equal(expiryCutoffMs(rules, '1w', NOW), Date.parse('2025-12-31T13:00:00Z'));
  });

  test('parseRetention: an object of the project granularities to timeframes', () => {
    const g = ['1m', '1h'];
    assert.deepEqual(parseRetention(undefined, g), { ok: true, value: null });
    assert.deepEqual(parseRetention({}, g), { ok: true, value: null });
    assert.deepEqual(parseRetention({ '1m': ' 7d ' }, g), { ok: true, value: { '1m': '7d' } });
    for (const bad of [[], 'x', 3, { '1d': '7d' }, { '1m': 'week' }, { '1m': null }]) {
      assert.equal(parseRetention(bad, g).ok, false, JSON.stringify(bad));
    }
  });
});
