import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatTimestamp, parseTimestamp } from '../../src/lib/time';

test('parseTimestamp accepts RFC 3339 with an offset, fractions allowed', () => {
  assert.equal(parseTimestamp('2026-01-24T10:00:00Z'), Date.UTC(2026, 0, 24, 10));
  assert.equal(parseTimestamp('2026-01-24T10:00:00.250Z'), Date.UTC(2026, 0, 24, 10, 0, 0, 250));
  assert.equal(parseTimestamp('2026-01-24T11:30:00+01:30'), Date.UTC(2026, 0, 24, 10));
  assert.equal(parseTimestamp('2026-01-24T05:00:00-05:00'), Date.UTC(2026, 0, 24, 10));
  assert.equal(parseTimestamp('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
  assert.equal(parseTimestamp('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29));
});

test('parseTimestamp refuses everything else', () => {
  for (const bad of [
    '2026-01-24T10:00:00', // no offset
    '2026-02-30T00:00:00Z',
    '2025-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-24T24:00:00Z',
    '2026-01-24T10:60:00Z',
    '2026-01-24T10:00:60Z',
    '2026-01-24T10:00:00+24:00',
    '2026-01-24',
    '',
    ' 2026-01-24T10:00:00Z',
    1769248800000,
    null,
    {},
  ]) {
    assert.equal(parseTimestamp(bad), null, String(bad));
  }
});

test('years before 100 are not shifted into the 1900s', () => {
  const ms = parseTimestamp('0050-02-28T10:00:00+01:00');
  assert.equal(formatTimestamp(ms!), '0050-02-28T09:00:00Z');
  assert.equal(parseTimestamp('0000-02-29T00:00:00Z') !== null, true); // 0 is a leap year (divisible by 400)
});

test('formatTimestamp writes Z for zero offset and ±HH:MM otherwise, to the second', () => {
  const ms = Date.UTC(2026, 0, 24, 10, 0, 0, 999);
  assert.equal(formatTimestamp(ms), '2026-01-24T10:00:00Z');
  assert.equal(formatTimestamp(ms, 60), '2026-01-24T11:00:00+01:00');
  assert.equal(formatTimestamp(ms, -330), '2026-01-24T04:30:00-05:30');
  assert.equal(formatTimestamp(Date.UTC(2026, 0, 1, 0, 0, 0), 345), '2026-01-01T05:45:00+05:45');
});
