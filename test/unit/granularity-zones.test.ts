import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DateTime } from 'luxon';
import {
  countBuckets,
  createBucketer,
  floorToBucket,
  formatBucket,
  formatBuckets,
  nextBucket,
} from '../../src/model/time/granularity';
import { cal, floorOf, gran, ms, nextOf, rangeOf, seededRandom } from './granularity.helpers';

const BRATISLAVA = cal('Europe/Bratislava');
const NEW_YORK = cal('America/New_York');

describe('Europe/Bratislava: spring forward 2025-03-30 02:00 -> 03:00', () => {
  test('hourly buckets skip the missing hour', () => {
    assert.deepEqual(rangeOf('2025-03-30T00:00:00+01:00', '2025-03-30T04:00:00+02:00', '1h', BRATISLAVA), [
      '2025-03-30T00:00:00+01:00',
      '2025-03-30T01:00:00+01:00',
      '2025-03-30T03:00:00+02:00',
      '2025-03-30T04:00:00+02:00',
    ]);
    assert.equal(floorOf('2025-03-30T01:59:59+01:00', '1h', BRATISLAVA), '2025-03-30T01:00:00+01:00');
    assert.equal(floorOf('2025-03-30T03:00:00+02:00', '1h', BRATISLAVA), '2025-03-30T03:00:00+02:00');
    assert.equal(nextOf('2025-03-30T01:00:00+01:00', '1h', BRATISLAVA), '2025-03-30T03:00:00+02:00');
  });

  test('the day has 23 hourly buckets and is one daily bucket', () => {
    const from = ms('2025-03-30T00:00:00+01:00');
    const to = ms('2025-03-30T23:59:59+02:00');
    assert.equal(countBuckets(from, to, gran('1h'), BRATISLAVA, 1000), 23);
    assert.deepEqual(rangeOf('2025-03-29T12:00:00+01:00', '2025-03-31T12:00:00+02:00', '1d', BRATISLAVA), [
      '2025-03-29T00:00:00+01:00',
      '2025-03-30T00:00:00+01:00',
      '2025-03-31T00:00:00+02:00',
    ]);
    assert.equal(floorOf('2025-03-30T23:59:59+02:00', '1d', BRATISLAVA), '2025-03-30T00:00:00+01:00');
  });

  test('30m and 5h segments around the gap', () => {
    assert.deepEqual(rangeOf('2025-03-30T01:00:00+01:00', '2025-03-30T03:30:00+02:00', '30m', BRATISLAVA), [
      '2025-03-30T01:00:00+01:00',
      '2025-03-30T01:30:00+01:00',
      '2025-03-30T03:00:00+02:00',
      '2025-03-30T03:30:00+02:00',
    ]);
    assert.equal(floorOf('2025-03-30T04:00:00+02:00', '5h', BRATISLAVA), '2025-03-30T00:00:00+01:00');
    assert.equal(nextOf('2025-03-30T00:00:00+01:00', '5h', BRATISLAVA), '2025-03-30T05:00:00+02:00');
  });

  test('months keep their local first day across the change', () => {
    assert.equal(floorOf('2025-03-31T12:00:00+02:00', '1mo', BRATISLAVA), '2025-03-01T00:00:00+01:00');
    assert.equal(nextOf('2025-03-01T00:00:00+01:00', '1mo', BRATISLAVA), '2025-04-01T00:00:00+02:00');
    assert.equal(floorOf('2025-07-01T00:00:00+02:00', '1y', BRATISLAVA), '2025-01-01T00:00:00+01:00');
  });
});

describe('Europe/Bratislava: fall back 2025-10-26 03:00 -> 02:00', () => {
  test('both 02:00 hours are buckets of their own', () => {
    assert.deepEqual(rangeOf('2025-10-26T00:00:00+02:00', '2025-10-26T04:00:00+01:00', '1h', BRATISLAVA), [
      '2025-10-26T00:00:00+02:00',
      '2025-10-26T01:00:00+02:00',
      '2025-10-26T02:00:00+02:00',
      '2025-10-26T02:00:00+01:00',
      '2025-10-26T03:00:00+01:00',
      '2025-10-26T04:00:00+01:00',
    ]);
    assert.equal(floorOf('2025-10-26T02:30:00+02:00', '1h', BRATISLAVA), '2025-10-26T02:00:00+02:00');
    assert.equal(floorOf('2025-10-26T02:30:00+01:00', '1h', BRATISLAVA), '2025-10-26T02:00:00+01:00');
    assert.equal(nextOf('2025-10-26T02:00:00+02:00', '1h', BRATISLAVA), '2025-10-26T02:00:00+01:00');
  });

  test('the day has 25 hourly buckets and is one daily bucket', () => {
    const from = ms('2025-10-26T00:00:00+02:00');
    const to = ms('2025-10-26T23:59:59+01:00');
    assert.equal(countBuckets(from, to, gran('1h'), BRATISLAVA, 1000), 25);
    assert.equal(floorOf('2025-10-26T23:00:00+01:00', '1d', BRATISLAVA), '2025-10-26T00:00:00+02:00');
    assert.equal(nextOf('2025-10-26T00:00:00+02:00', '1d', BRATISLAVA), '2025-10-27T00:00:00+01:00');
  });

  test('a 5h segment re-entered by the fall back is one 6-hour bucket', () => {
    assert.deepEqual(rangeOf('2025-10-26T00:00:00+02:00', '2025-10-26T23:00:00+01:00', '5h', BRATISLAVA), [
      '2025-10-26T00:00:00+02:00',
      '2025-10-26T05:00:00+01:00',
      '2025-10-26T10:00:00+01:00',
      '2025-10-26T15:00:00+01:00',
      '2025-10-26T20:00:00+01:00',
    ]);
    assert.equal(floorOf('2025-10-26T04:59:59+01:00', '5h', BRATISLAVA), '2025-10-26T00:00:00+02:00');
  });

  test('weeks and months across the change', () => {
    assert.equal(floorOf('2025-10-26T12:00:00+01:00', '1w', BRATISLAVA), '2025-10-20T00:00:00+02:00');
    assert.equal(nextOf('2025-10-20T00:00:00+02:00', '1w', BRATISLAVA), '2025-10-27T00:00:00+01:00');
    assert.equal(floorOf('2025-10-31T12:00:00+01:00', '1mo', BRATISLAVA), '2025-10-01T00:00:00+02:00');
    assert.equal(nextOf('2025-10-01T00:00:00+02:00', '1mo', BRATISLAVA), '2025-11-01T00:00:00+01:00');
  });
});

describe('America/New_York: 2025-03-09 and 2025-11-02', () => {
  test('spring forward: hourly and 2-hourly buckets', () => {
    assert.deepEqual(rangeOf('2025-03-09T00:00:00-05:00', '2025-03-09T04:00:00-04:00', '1h', NEW_YORK), [
      '2025-03-09T00:00:00-05:00',
      '2025-03-09T01:00:00-05:00',
      '2025-03-09T03:00:00-04:00',
      '2025-03-09T04:00:00-04:00',
    ]);
    // The 02:00 segment of 2h starts at the jump, labelled with the time after it.
    assert.deepEqual(rangeOf('2025-03-09T00:00:00-05:00', '2025-03-09T04:00:00-04:00', '2h', NEW_YORK), [
      '2025-03-09T00:00:00-05:00',
      '2025-03-09T03:00:00-04:00',
      '2025-03-09T04:00:00-04:00',
    ]);
    assert.equal(floorOf('2025-03-09T03:30:00-04:00', '2h', NEW_YORK), '2025-03-09T03:00:00-04:00');
    const day = [ms('2025-03-09T00:00:00-05:00'), ms('2025-03-09T23:59:59-04:00')] as const;
    assert.equal(countBuckets(day[0], day[1], gran('1h'), NEW_YORK, 1000), 23);
  });

  test('fall back: hourly, 2-hourly and daily buckets', () => {
    assert.deepEqual(rangeOf('2025-11-02T00:00:00-04:00', '2025-11-02T03:00:00-05:00', '1h', NEW_YORK), [
      '2025-11-02T00:00:00-04:00',
      '2025-11-02T01:00:00-04:00',
      '2025-11-02T01:00:00-05:00',
      '2025-11-02T02:00:00-05:00',
      '2025-11-02T03:00:00-05:00',
    ]);
    assert.equal(floorOf('2025-11-02T01:30:00-05:00', '2h', NEW_YORK), '2025-11-02T00:00:00-04:00');
    assert.equal(nextOf('2025-11-02T00:00:00-04:00', '2h', NEW_YORK), '2025-11-02T02:00:00-05:00');
    assert.equal(nextOf('2025-11-02T00:00:00-04:00', '1d', NEW_YORK), '2025-11-03T00:00:00-05:00');
    const day = [ms('2025-11-02T00:00:00-04:00'), ms('2025-11-02T23:59:59-05:00')] as const;
    assert.equal(countBuckets(day[0], day[1], gran('1h'), NEW_YORK, 1000), 25);
    assert.deepEqual(rangeOf('2025-11-01T12:00:00-04:00', '2025-11-03T12:00:00-05:00', '1d', NEW_YORK), [
      '2025-11-01T00:00:00-04:00',
      '2025-11-02T00:00:00-04:00',
      '2025-11-03T00:00:00-05:00',
    ]);
  });

  test('spring forward: the daily bucket is 23 hours', () => {
    assert.equal(floorOf('2025-03-09T12:00:00-04:00', '1d', NEW_YORK), '2025-03-09T00:00:00-05:00');
    assert.equal(nextOf('2025-03-09T00:00:00-05:00', '1d', NEW_YORK), '2025-03-10T00:00:00-04:00');
  });
});

describe('zones with :30 and :45 offsets floor to local hour starts', () => {
  test('Asia/Kolkata +05:30', () => {
    const kolkata = cal('Asia/Kolkata');
    assert.equal(floorOf('2025-06-12T09:41:00Z', '1h', kolkata), '2025-06-12T15:00:00+05:30');
    assert.equal(floorOf('2025-06-12T09:41:00Z', '1d', kolkata), '2025-06-12T00:00:00+05:30');
    assert.equal(floorOf('2025-06-12T20:00:00Z', '1d', kolkata), '2025-06-13T00:00:00+05:30');
  });

  test('Asia/Kathmandu +05:45', () => {
    const kathmandu = cal('Asia/Kathmandu');
    assert.equal(floorOf('2025-06-12T09:41:00Z', '1h', kathmandu), '2025-06-12T15:00:00+05:45');
    assert.equal(floorOf('2025-06-12T09:41:00Z', '15m', kathmandu), '2025-06-12T15:15:00+05:45');
    assert.equal(floorOf('2025-06-12T09:41:00Z', '33m', kathmandu), '2025-06-12T15:00:00+05:45');
  });
});

describe('unusual offset changes', () => {
  test('America/Santiago: midnight skipped (2024-09-08) and repeated hour before midnight (2025-04-05)', () => {
    const santiago = cal('America/Santiago');
    assert.equal(floorOf('2024-09-08T12:00:00-03:00', '1d', santiago), '2024-09-08T01:00:00-03:00');
    assert.equal(nextOf('2024-09-07T00:00:00-04:00', '1d', santiago), '2024-09-08T01:00:00-03:00');
    assert.deepEqual(rangeOf('2024-09-07T23:00:00-04:00', '2024-09-08T02:00:00-03:00', '1h', santiago), [
      '2024-09-07T23:00:00-04:00',
      '2024-09-08T01:00:00-03:00',
      '2024-09-08T02:00:00-03:00',
    ]);
    assert.equal(floorOf('2025-04-05T23:30:00-04:00', '1d', santiago), '2025-04-05T00:00:00-03:00');
    assert.equal(nextOf('2025-04-05T00:00:00-03:00', '1d', santiago), '2025-04-06T00:00:00-04:00');
    assert.deepEqual(rangeOf('2025-04-05T22:00:00-03:00', '2025-04-06T00:00:00-04:00', '1h', santiago), [
      '2025-04-05T22:00:00-03:00',
      '2025-04-05T23:00:00-03:00',
      '2025-04-05T23:00:00-04:00',
      '2025-04-06T00:00:00-04:00',
    ]);
  });

  test('Australia/Lord_Howe: a half-hour fall back makes one 90-minute hourly bucket', () => {
    const lordHowe = cal('Australia/Lord_Howe');
    assert.deepEqual(rangeOf('2024-04-07T00:00:00+11:00', '2024-04-07T03:00:00+10:30', '1h', lordHowe), [
      '2024-04-07T00:00:00+11:00',
      '2024-04-07T01:00:00+11:00',
      '2024-04-07T02:00:00+10:30',
      '2024-04-07T03:00:00+10:30',
    ]);
    assert.equal(floorOf('2024-04-07T01:45:00+10:30', '1h', lordHowe), '2024-04-07T01:00:00+11:00');
  });

  test('Asia/Beirut: clocks go back at midnight, so 2024-10-26 is a 25-hour day', () => {
    const beirut = cal('Asia/Beirut');
    assert.deepEqual(rangeOf('2024-10-26T12:00:00+03:00', '2024-10-28T01:00:00+02:00', '1d', beirut), [
      '2024-10-26T00:00:00+03:00',
      '2024-10-27T00:00:00+02:00',
      '2024-10-28T00:00:00+02:00',
    ]);
    assert.equal(floorOf('2024-10-26T23:30:00+02:00', '1d', beirut), '2024-10-26T00:00:00+03:00');
    assert.deepEqual(rangeOf('2024-10-26T23:00:00+03:00', '2024-10-27T00:00:00+02:00', '1h', beirut), [
      '2024-10-26T23:00:00+03:00',
      '2024-10-26T23:00:00+02:00',
      '2024-10-27T00:00:00+02:00',
    ]);
  });

  test('America/Sitka 1867: a clock set back a whole day keeps buckets in time order', () => {
    const sitka = cal('America/Sitka'); // local mean time +14:58:47 -> -09:01:13, shown to the minute
    assert.deepEqual(rangeOf('1867-10-16T12:00:00Z', '1867-10-21T12:00:00Z', '1d', sitka), [
      '1867-10-17T00:00:00+14:59',
      '1867-10-18T00:00:00+14:59',
      '1867-10-19T00:00:00+14:59',
      '1867-10-20T00:00:00-09:01',
      '1867-10-21T00:00:00-09:01',
    ]);
    // The repeated 18 October stays in the bucket of the 19th, which had already begun.
    assert.equal(floorOf('1867-10-18T20:59:00-09:01', '1d', sitka), '1867-10-19T00:00:00+14:59');
  });

  test('Pacific/Apia: the skipped 2011-12-30 has no bucket', () => {
    assert.deepEqual(
      rangeOf('2011-12-29T12:00:00-10:00', '2012-01-01T12:00:00+14:00', '1d', cal('Pacific/Apia')),
      ['2011-12-29T00:00:00-10:00', '2011-12-31T00:00:00+14:00', '2012-01-01T00:00:00+14:00'],
    );
  });
});

describe('randomised agreement (seeded)', () => {
  const ZONES = [
    'UTC',
    'Europe/Bratislava',
    'America/New_York',
    'Asia/Kolkata',
    'Asia/Kathmandu',
    'Australia/Lord_Howe',
    'America/Santiago',
    'Pacific/Apia',
  ];
  const GRANULARITIES = [
    '1s',
    '7s',
    '1m',
    '33m',
    '1h',
    '5h',
    '1d',
    '10d',
    '1w',
    '2w',
    '1mo',
    '5mo',
    '1q',
    '2q',
    '1y',
    '10y',
  ];
  // Centres near offset changes (and one ordinary day) around which timestamps cluster.
  const CENTRES = [
    '2025-03-30T01:00:00Z',
    '2025-10-26T01:00:00Z',
    '2025-03-09T07:00:00Z',
    '2025-11-02T06:00:00Z',
    '2024-04-06T15:00:00Z',
    '2024-09-08T04:00:00Z',
    '2011-12-30T10:00:00Z',
    '2024-12-31T23:00:00Z',
    '2025-06-12T09:00:00Z',
    '1969-12-31T23:30:00Z',
  ].map(ms);
  const HOUR = 3_600_000;

  /** Clustered timestamps in time order (as an ingest batch tends to be), some far apart. */
  function timestamps(random: () => number): number[] {
    const centre = CENTRES[Math.floor(random() * CENTRES.length)] ?? 0;
    let at = centre - 40 * HOUR + Math.floor(random() * 20 * HOUR);
    const out: number[] = [];
    for (let i = 0; i < 30; i++) {
      at += Math.floor(random() * (random() < 0.2 ? 6 * HOUR : 20 * 60_000));
      out.push(at);
    }
    return out;
  }

  test('createBucketer agrees with floorToBucket in every zone and granularity', () => {
    const random = seededRandom(20250330);
    let compared = 0;
    for (const timeZone of ZONES) {
      for (const text of GRANULARITIES) {
        const c = cal(timeZone, 1 + Math.floor(random() * 7));
        const g = gran(text);
        const bucketer = createBucketer(g, c);
        for (const at of timestamps(random)) {
          assert.equal(bucketer(at), floorToBucket(at, g, c), `${timeZone} ${text} ${at}`);
          compared++;
        }
      }
    }
    assert.equal(compared, ZONES.length * GRANULARITIES.length * 30);
  });

  // The bucketer's cache of whole seconds and minutes: timestamps in random order (not clustered
  // as above) across offset changes, in zones offset by whole, half and quarter hours.
  test('createBucketer agrees with floorToBucket for timestamps in random order', () => {
    const random = seededRandom(20261125);
    for (const timeZone of ZONES) {
      for (const text of ['1s', '7s', '1m', '5m', '33m', '1h', '5h']) {
        const c = cal(timeZone, 1);
        const g = gran(text);
        const bucketer = createBucketer(g, c);
        for (let i = 0; i < 400; i++) {
          const centre = CENTRES[Math.floor(random() * CENTRES.length)]!;
          const at = centre - 4 * HOUR + Math.floor(random() * 8 * HOUR);
          assert.equal(
            bucketer(at),
            floorToBucket(at, g, c),
            `${timeZone} ${text} ${new Date(at).toISOString()}`,
          );
        }
      }
    }
  });

  test('buckets are contiguous: floor(t) <= t < next, and next is itself a start', () => {
    const random = seededRandom(7);
    for (const timeZone of ZONES) {
      for (const text of GRANULARITIES) {
        const c = cal(timeZone, 1 + Math.floor(random() * 7));
        const g = gran(text);
        for (const at of timestamps(random).slice(0, 6)) {
          const start = floorToBucket(at, g, c);
          const next = nextBucket(start, g, c);
          const where = `${timeZone} ${text} ${formatBucket(at, 'UTC')}`;
          assert.ok(start <= at && at < next, where);
          assert.equal(floorToBucket(start, g, c), start, where);
          assert.equal(floorToBucket(next - 1, g, c), start, where);
          assert.equal(floorToBucket(next, g, c), next, where);
        }
      }
    }
  });

  test("agrees with luxon's startOf where luxon's rule is the same", () => {
    const random = seededRandom(99);
    const units = [
      ['1m', 'minute'],
      ['1h', 'hour'],
      ['1d', 'day'],
      ['1mo', 'month'],
      ['1q', 'quarter'],
      ['1y', 'year'],
    ] as const;
    for (const timeZone of [
      'UTC',
      'Europe/Bratislava',
      'America/New_York',
      'Asia/Kolkata',
      'Asia/Kathmandu',
    ]) {
      const c = cal(timeZone);
      for (const [text, unit] of units) {
        for (const at of timestamps(random)) {
          const expected = DateTime.fromMillis(at, { zone: timeZone }).startOf(unit).toMillis();
          assert.equal(floorToBucket(at, gran(text), c), expected, `${timeZone} ${text} ${at}`);
        }
      }
    }
  });
});

test('formatBuckets labels each instant as formatBucket does, across offset changes', () => {
  const cases: Array<[string, number, number, number]> = [
    ['Europe/Berlin', Date.UTC(2024, 2, 30, 22), 15 * 60_000, 24 * 4 * 3], // spring forward
    ['America/New_York', Date.UTC(2024, 10, 2, 20), 30 * 60_000, 48 * 2], // fall back
    ['Australia/Lord_Howe', Date.UTC(2024, 3, 6, 10), 10 * 60_000, 6 * 12], // 30-minute shift
    ['America/Santiago', Date.UTC(1950, 0, 1), 86_400_000 * 29 + 3_600_000, 400], // decades of rules
    ['UTC', Date.UTC(2025, 0, 1), 3_600_000, 8760],
    ['Asia/Kathmandu', Date.UTC(2025, 0, 1), 7_000, 10_000], // more times of day than a formatter keeps
  ];
  for (const [zone, start, step, count] of cases) {
    const list = Array.from({ length: count }, (_, i) => start + i * step);
    assert.deepEqual(
      formatBuckets(list, zone),
      list.map((ms) => formatBucket(ms, zone)),
      zone,
    );
  }
  assert.deepEqual(
    formatBuckets([Date.UTC(2024, 2, 31, 0, 59, 59), Date.UTC(2024, 2, 31, 1)], 'Europe/Berlin'),
    ['2024-03-31T01:59:59+01:00', '2024-03-31T03:00:00+02:00'],
  );
});
