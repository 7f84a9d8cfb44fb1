// Wall-clock times in the source's zone (web/lib/zone.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatInZone, fromZoneInput, toZoneInput } from '../../web/lib/zone';

test('an instant shown and read back in a zone', () => {
  const ms = Date.parse('2026-01-24T10:00:00Z');
  assert.equal(toZoneInput(ms, 'Europe/Bratislava'), '2026-01-24T11:00');
  assert.equal(formatInZone(ms, 'America/New_York'), '2026-01-24 05:00');
  assert.equal(fromZoneInput('2026-01-24T11:00', 'Europe/Bratislava'), ms);
  assert.equal(fromZoneInput('2026-07-24T12:00', 'Europe/Bratislava'), Date.parse('2026-07-24T10:00:00Z'));
  assert.equal(fromZoneInput('2026-01-24T10:00', 'UTC'), ms);
});

test('DST: a skipped time moves forward, a repeated one is its first; junk is null', () => {
  // Europe/Bratislava: 2026-03-29 02:00 -> 03:00, 2026-10-25 03:00 -> 02:00.
  assert.equal(fromZoneInput('2026-03-29T02:30', 'Europe/Bratislava'), Date.parse('2026-03-29T01:30:00Z'));
  assert.equal(fromZoneInput('2026-10-25T02:30', 'Europe/Bratislava'), Date.parse('2026-10-25T00:30:00Z'));
  assert.equal(fromZoneInput('2026-01-24 10:00', 'UTC'), null);
  assert.equal(fromZoneInput('yesterday', 'UTC'), null);
});
