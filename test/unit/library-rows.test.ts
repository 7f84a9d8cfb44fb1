// Folding rows the Trifle::Stats libraries floored with the event's own UTC offset (SPEC 8).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { addLeaves, libraryRowPlan, zoneOffsetMinutes } from '../../src/drivers/library-rows';

const H = 3_600_000;
const Z = 'Europe/Bratislava';
const utc = (s: string) => Date.parse(s);

describe('library rows', () => {
  test('zone offsets around the changes of 2024', () => {
    assert.equal(zoneOffsetMinutes(Z, utc('2024-03-31T00:59:00Z')), 60);
    assert.equal(zoneOffsetMinutes(Z, utc('2024-03-31T01:00:00Z')), 120);
    assert.equal(zoneOffsetMinutes(Z, utc('2024-10-27T00:59:00Z')), 120);
    assert.equal(zoneOffsetMinutes(Z, utc('2024-10-27T01:00:00Z')), 60);
    assert.equal(zoneOffsetMinutes('UTC', 0), 0);
    assert.equal(zoneOffsetMinutes('Asia/Kathmandu', utc('2024-01-01T00:00:00Z')), 345);
  });

  test('a day row at 22:00Z folds into the day starting 23:00Z (spring)', () => {
    const starts = [utc('2024-03-29T23:00:00Z'), utc('2024-03-30T23:00:00Z'), utc('2024-03-31T22:00:00Z')];
    const plan = libraryRowPlan(starts, '1d', Z);
    assert.equal(plan.indexOf(utc('2024-03-30T22:00:00Z')), 1);
    assert.equal(plan.indexOf(utc('2024-03-30T23:00:00Z')), 1);
    assert.equal(plan.indexOf(utc('2024-03-29T22:00:00Z')), undefined);
    assert.deepEqual(plan.lookups, [starts[0], utc('2024-03-30T22:00:00Z'), starts[1], starts[2]]);
  });

  test('autumn: the shifted row is an hour later', () => {
    const day = utc('2024-10-26T22:00:00Z');
    const plan = libraryRowPlan([day], '1d', Z);
    assert.equal(plan.indexOf(day + H), 0);
    assert.equal(plan.lookups.length, 2);
  });

  test('months, quarters and years that hold a change; weeks that do not', () => {
    const march = utc('2024-02-29T23:00:00Z');
    const april = utc('2024-03-31T22:00:00Z');
    const plan = libraryRowPlan([march, april], '1mo', Z);
    assert.equal(plan.indexOf(march - H), 0);
    assert.equal(plan.indexOf(april - H), undefined);
    const year = utc('2023-12-31T23:00:00Z');
    const y = libraryRowPlan([year], '1y', Z);
    assert.equal(y.indexOf(year - H), 0);
    const week = utc('2024-05-05T22:00:00Z');
    assert.deepEqual(libraryRowPlan([week], '1w', Z).lookups, [week]);
  });

  test('hourly buckets: no shifted instant steals a neighbour', () => {
    const starts = Array.from({ length: 6 }, (_, i) => utc('2024-10-26T23:00:00Z') + i * H);
    const plan = libraryRowPlan(starts, '1h', Z);
    assert.deepEqual(plan.lookups, starts);
    starts.forEach((s, i) => assert.equal(plan.indexOf(s), i));
  });

  test('6h segments across the spring change', () => {
    // 00:00+01 (23:00Z) .. 06:00+02 (04:00Z); an event at 04:00+02 floors to 00:00+02 = 22:00Z
    const starts = [utc('2024-03-30T23:00:00Z'), utc('2024-03-31T04:00:00Z')];
    const plan = libraryRowPlan(starts, '6h', Z);
    assert.equal(plan.indexOf(utc('2024-03-30T22:00:00Z')), 0);
  });

  test('UTC and empty ranges need no look-ups beyond the starts', () => {
    assert.deepEqual(libraryRowPlan([0, H], '1h', 'UTC').lookups, [0, H]);
    assert.deepEqual(libraryRowPlan([], '1d', Z).lookups, []);
  });

  test('a year of hourly buckets plans fast', () => {
    const starts = Array.from({ length: 8784 }, (_, i) => utc('2023-12-31T23:00:00Z') + i * H);
    const t0 = performance.now();
    const plan = libraryRowPlan(starts, '1h', Z);
    assert.equal(plan.lookups.length, starts.length);
    assert.ok(performance.now() - t0 < 500);
  });

  test('folded rows add up', () => {
    const into = new Map([['a', 1]]);
    addLeaves(
      into,
      new Map([
        ['a', 2],
        ['b', 3],
      ]),
    );
    assert.deepEqual(
      [...into],
      [
        ['a', 3],
        ['b', 3],
      ],
    );
  });
});
