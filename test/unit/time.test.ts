import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatTimestamp, parseTimestamp, parseTimestampBytes } from '../../src/shared/time';

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

test('parseTimestamp reads fractions of 1 to 9 digits, truncated to the millisecond', () => {
  const base = Date.UTC(2026, 0, 24, 10);
  assert.equal(parseTimestamp('2026-01-24T10:00:00.5Z'), base + 500);
  assert.equal(parseTimestamp('2026-01-24T10:00:00.05Z'), base + 50);
  assert.equal(parseTimestamp('2026-01-24T10:00:00.0009Z'), base);
  assert.equal(parseTimestamp('2026-01-24T10:00:00.999999999Z'), base + 999);
  assert.equal(parseTimestamp('2026-01-24T10:00:00.1234567890Z'), null); // 10 digits
  assert.equal(parseTimestamp('2026-01-24T10:00:00.Z'), null);
});

test('parseTimestamp accepts t, z and a space as RFC 3339 allows, and nothing around the timestamp', () => {
  const expected = Date.UTC(2026, 0, 24, 10);
  assert.equal(parseTimestamp('2026-01-24t10:00:00z'), expected);
  assert.equal(parseTimestamp('2026-01-24 10:00:00Z'), expected);
  for (const bad of [
    '2026-01-24T10:00:00Z ',
    '2026-01-24T10:00:00+01:00x',
    '2026-01-24T10:00:00+0100',
    '+2026-01-24T10:00:00Z',
    '2026-01-24T1a:00:00Z',
  ]) {
    assert.equal(parseTimestamp(bad), null, bad);
  }
});

test('parseTimestamp agrees with Date.UTC on the first and last days of months across the calendar', () => {
  for (const year of [100, 1582, 1600, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2100, 2400, 9999]) {
    for (let month = 1; month <= 12; month++) {
      const last = new Date(Date.UTC(year, month, 0)).getUTCDate();
      for (const day of [1, last]) {
        const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T23:59:59-01:30`;
        assert.equal(parseTimestamp(text), Date.UTC(year, month - 1, day, 23, 59, 59) + 90 * 60_000, text);
      }
    }
  }
});

test('formatTimestamp agrees with toISOString across the calendar, and applies offsets across days', () => {
  for (const year of [0, 1, 99, 100, 1582, 1899, 1969, 1970, 2000, 2024, 2100, 9999]) {
    for (const [month, day] of [
      [0, 1],
      [1, 28],
      [1, 29],
      [11, 31],
    ] as const) {
      const ms = new Date(0).setUTCFullYear(year, month, day) + 86_399_999;
      assert.equal(formatTimestamp(ms), `${new Date(ms).toISOString().slice(0, 19)}Z`, String(ms));
    }
  }
  assert.equal(formatTimestamp(Date.UTC(2024, 1, 28, 23, 30), 60), '2024-02-29T00:30:00+01:00');
  assert.equal(formatTimestamp(Date.UTC(2025, 0, 1, 0, 30), -60), '2024-12-31T23:30:00-01:00');
});

test('parseTimestampBytes gives what parseTimestamp gives (NaN for null) on any ASCII text, wherever it sits in the bytes', () => {
  const two = (max: number) => fc.integer({ min: 0, max }).map((n) => String(n).padStart(2, '0'));
  const wildTimestamp = fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      two(13),
      two(32),
      fc.constantFrom('T', 't', ' ', 'x'),
      two(24),
      two(60),
      two(60),
    )
    .chain(([y, mo, d, sep, h, mi, s]) =>
      fc
        .tuple(
          fc.option(fc.string({ unit: fc.constantFrom(...'0123456789'), maxLength: 11 })),
          fc.constantFrom('Z', 'z', '', '+', '-'),
          two(24),
          two(60),
        )
        .map(
          ([frac, sign, oh, om]) =>
            `${String(y).padStart(4, '0')}-${mo}-${d}${sep}${h}:${mi}:${s}${frac === null ? '' : `.${frac}`}${sign}${'+-'.includes(sign) && sign ? `${oh}:${om}` : ''}`,
        ),
    );
  const near = fc
    .tuple(
      wildTimestamp,
      fc.nat(40),
      fc.string({ unit: fc.constantFrom(...'0123456789-:.+TZtz "x'), maxLength: 3 }),
    )
    .map(([text, at, insert]) => text.slice(0, at) + insert + text.slice(at + insert.length));
  const ascii = fc.string({
    unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)),
    maxLength: 45,
  });
  // first, before any valid day is remembered: no digits at all is no day either
  assert.ok(Number.isNaN(parseTimestampBytes(Buffer.from('yyyy-mm-ddT00:00:00Z'), 0, 20)));
  fc.assert(
    fc.property(
      fc.oneof(wildTimestamp, near, ascii),
      fc.string({ maxLength: 3 }),
      fc.string({ maxLength: 3 }),
      (text, before, after) => {
        const bytes = Buffer.from(before + text + after);
        const start = Buffer.byteLength(before);
        assert.ok(
          Object.is(parseTimestampBytes(bytes, start, start + text.length), parseTimestamp(text) ?? NaN),
          text,
        );
      },
    ),
    { numRuns: 20_000 },
  );
});
