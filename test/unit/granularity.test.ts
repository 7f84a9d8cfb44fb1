import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  bucketRange,
  countBuckets,
  floorToBucket,
  formatBucket,
  isValidTimeZone,
  parseGranularity,
} from '../../src/model/time/granularity';
import { UTC, cal, floorOf, gran, ms, nextOf, rangeOf } from './granularity.helpers';

describe('parseGranularity', () => {
  test('accepts every unit with its number', () => {
    assert.deepEqual(parseGranularity('1m'), { text: '1m', n: 1, unit: 'm' });
    assert.deepEqual(parseGranularity('7s'), { text: '7s', n: 7, unit: 's' });
    assert.deepEqual(parseGranularity('5h'), { text: '5h', n: 5, unit: 'h' });
    assert.deepEqual(parseGranularity('10d'), { text: '10d', n: 10, unit: 'd' });
    assert.deepEqual(parseGranularity('2w'), { text: '2w', n: 2, unit: 'w' });
    assert.deepEqual(parseGranularity('5mo'), { text: '5mo', n: 5, unit: 'mo' });
    assert.deepEqual(parseGranularity('2q'), { text: '2q', n: 2, unit: 'q' });
    assert.deepEqual(parseGranularity('10y'), { text: '10y', n: 10, unit: 'y' });
    assert.deepEqual(parseGranularity('100000s'), { text: '100000s', n: 100000, unit: 's' });
  });

  test('keeps the text as the series name (60m and 1h differ, leading zeros kept)', () => {
    assert.equal(parseGranularity('60m')?.text, '60m');
    assert.deepEqual(parseGranularity('007d'), { text: '007d', n: 7, unit: 'd' });
  });

  test('rejects malformed text, zero, absurd sizes and non-strings', () => {
    const bad: unknown[] = [
      '0m',
      '00h',
      '1x',
      'm',
      'mo',
      '1.5h',
      '',
      ' 1h',
      '1h ',
      '1H',
      '1MO',
      '-1h',
      '+1h',
      '1min',
      '1mo2',
      '1 h',
      'h1',
      '100001s',
      '9999999d',
      '1e3s',
      '１h',
      1,
      60,
      null,
      undefined,
      {},
      ['1h'],
    ];
    for (const input of bad) assert.equal(parseGranularity(input), null, JSON.stringify(input));
  });
});

describe('isValidTimeZone', () => {
  test('accepts IANA names', () => {
    for (const zone of ['UTC', 'Europe/Bratislava', 'America/New_York', 'Asia/Kathmandu', 'Etc/GMT+5']) {
      assert.equal(isValidTimeZone(zone), true, zone);
    }
  });

  test('rejects unknown names, offsets, padding and non-strings', () => {
    const bad: unknown[] = [
      '',
      'Mars/Olympus',
      '+01:00',
      '-05:00',
      'UTC+1',
      'GMT-5',
      'Z',
      'local',
      'system',
      'default',
      ' UTC',
      'Europe/Bratislava ',
      'Europe//Bratislava',
      `Europe/${'x'.repeat(80)}`,
      0,
      null,
      undefined,
      {},
    ];
    for (const zone of bad) assert.equal(isValidTimeZone(zone), false, JSON.stringify(zone));
  });
});

describe('formatBucket', () => {
  test('writes the zone offset at that instant, Z for zero', () => {
    assert.equal(formatBucket(ms('2025-01-15T12:00:00Z'), 'UTC'), '2025-01-15T12:00:00Z');
    assert.equal(formatBucket(ms('2025-01-15T12:00:00Z'), 'Europe/Bratislava'), '2025-01-15T13:00:00+01:00');
    assert.equal(formatBucket(ms('2025-07-15T12:00:00Z'), 'Europe/Bratislava'), '2025-07-15T14:00:00+02:00');
    assert.equal(formatBucket(ms('2025-01-15T12:00:00Z'), 'America/New_York'), '2025-01-15T07:00:00-05:00');
    assert.equal(formatBucket(ms('2025-01-15T12:00:00Z'), 'Asia/Kolkata'), '2025-01-15T17:30:00+05:30');
    assert.equal(formatBucket(ms('2025-01-15T12:00:00Z'), 'Asia/Kathmandu'), '2025-01-15T17:45:00+05:45');
    assert.equal(formatBucket(ms('2025-01-15T12:00:00Z'), 'Etc/GMT+5'), '2025-01-15T07:00:00-05:00');
  });

  test('truncates to the second', () => {
    assert.equal(formatBucket(ms('2025-01-15T12:00:00.999Z'), 'UTC'), '2025-01-15T12:00:00Z');
  });
});

describe('seconds, minutes and hours restart at their parent unit', () => {
  test('Ns within the minute', () => {
    assert.equal(floorOf('2025-06-12T09:41:27.500Z', '1s'), '2025-06-12T09:41:27Z');
    assert.equal(floorOf('2025-06-12T09:41:27Z', '7s'), '2025-06-12T09:41:21Z');
    assert.equal(floorOf('2025-06-12T09:41:59Z', '7s'), '2025-06-12T09:41:56Z');
    assert.equal(nextOf('2025-06-12T09:41:56Z', '7s'), '2025-06-12T09:42:00Z');
    assert.equal(floorOf('2025-06-12T09:41:59Z', '100000s'), '2025-06-12T09:41:00Z');
    assert.deepEqual(rangeOf('2025-06-12T09:41:50Z', '2025-06-12T09:42:10Z', '7s'), [
      '2025-06-12T09:41:49Z',
      '2025-06-12T09:41:56Z',
      '2025-06-12T09:42:00Z',
      '2025-06-12T09:42:07Z',
    ]);
  });

  test('Nm within the hour', () => {
    assert.equal(floorOf('2025-06-12T09:41:27Z', '1m'), '2025-06-12T09:41:00Z');
    assert.equal(floorOf('2025-06-12T09:41:00Z', '33m'), '2025-06-12T09:33:00Z');
    assert.equal(floorOf('2025-06-12T09:32:59Z', '33m'), '2025-06-12T09:00:00Z');
    assert.equal(nextOf('2025-06-12T09:56:00Z', '7m'), '2025-06-12T10:00:00Z');
    assert.deepEqual(rangeOf('2025-06-12T10:00:00Z', '2025-06-12T12:00:00Z', '33m'), [
      '2025-06-12T10:00:00Z',
      '2025-06-12T10:33:00Z',
      '2025-06-12T11:00:00Z',
      '2025-06-12T11:33:00Z',
      '2025-06-12T12:00:00Z',
    ]);
  });

  test('Nh within the day', () => {
    assert.equal(floorOf('2025-06-12T09:41:27Z', '1h'), '2025-06-12T09:00:00Z');
    assert.equal(floorOf('2025-06-12T09:41:27Z', '5h'), '2025-06-12T05:00:00Z');
    assert.equal(floorOf('2025-06-12T23:59:59Z', '5h'), '2025-06-12T20:00:00Z');
    assert.equal(nextOf('2025-06-12T20:00:00Z', '5h'), '2025-06-13T00:00:00Z');
    assert.deepEqual(rangeOf('2025-06-12T18:00:00Z', '2025-06-13T06:00:00Z', '5h'), [
      '2025-06-12T15:00:00Z',
      '2025-06-12T20:00:00Z',
      '2025-06-13T00:00:00Z',
      '2025-06-13T05:00:00Z',
    ]);
  });
});

describe('days by day of year', () => {
  test('1d and 10d', () => {
    assert.equal(floorOf('2025-06-12T09:41:27Z', '1d'), '2025-06-12T00:00:00Z');
    // 2025-06-12 is day index 162 -> 160 -> 10 June; in leap 2024 it is 163 -> 160 -> 9 June.
    assert.equal(floorOf('2025-06-12T09:41:27Z', '10d'), '2025-06-10T00:00:00Z');
    assert.equal(floorOf('2024-06-12T09:41:27Z', '10d'), '2024-06-09T00:00:00Z');
  });

  test('the last segment of a year is cut at 1 January', () => {
    assert.equal(floorOf('2024-12-31T12:00:00Z', '10d'), '2024-12-26T00:00:00Z'); // index 365 -> 360
    assert.equal(floorOf('2025-12-31T12:00:00Z', '10d'), '2025-12-27T00:00:00Z'); // index 364 -> 360
    assert.equal(nextOf('2024-12-26T00:00:00Z', '10d'), '2025-01-01T00:00:00Z');
    assert.deepEqual(rangeOf('2024-12-20T00:00:00Z', '2025-01-12T00:00:00Z', '10d'), [
      '2024-12-16T00:00:00Z',
      '2024-12-26T00:00:00Z',
      '2025-01-01T00:00:00Z',
      '2025-01-11T00:00:00Z',
    ]);
  });

  test('leap years: 29 February, segments across the leap day, 7d at the end of a leap year', () => {
    assert.equal(floorOf('2024-02-29T13:00:00Z', '1d'), '2024-02-29T00:00:00Z');
    assert.equal(nextOf('2024-02-29T00:00:00Z', '1d'), '2024-03-01T00:00:00Z');
    assert.equal(nextOf('2023-02-28T00:00:00Z', '1d'), '2023-03-01T00:00:00Z');
    // 30d segments start at indexes 0, 30, 60: 1 March in 2024, 2 March in 2025.
    assert.equal(floorOf('2024-02-29T23:59:59Z', '30d'), '2024-01-31T00:00:00Z');
    assert.equal(floorOf('2024-03-01T00:00:00Z', '30d'), '2024-03-01T00:00:00Z');
    assert.equal(floorOf('2025-03-01T12:00:00Z', '30d'), '2025-01-31T00:00:00Z');
    assert.equal(floorOf('2025-03-02T00:00:00Z', '30d'), '2025-03-02T00:00:00Z');
    // 2024 has 366 days: 7d segments end with index 364 (30 December) holding two days.
    assert.deepEqual(rangeOf('2024-12-29T00:00:00Z', '2025-01-02T00:00:00Z', '7d'), [
      '2024-12-23T00:00:00Z',
      '2024-12-30T00:00:00Z',
      '2025-01-01T00:00:00Z',
    ]);
    assert.deepEqual(rangeOf('2025-12-29T00:00:00Z', '2026-01-02T00:00:00Z', '7d'), [
      '2025-12-24T00:00:00Z',
      '2025-12-31T00:00:00Z',
      '2026-01-01T00:00:00Z',
    ]);
  });
});

describe('weeks', () => {
  // First week start of each year for Monday weeks and Sunday weeks; the year starts on the
  // weekday named in the comment.
  const mondayWeeks: Array<[string, string]> = [
    ['2024', '2024-01-01'], // Monday
    ['2019', '2019-01-07'], // Tuesday
    ['2025', '2025-01-06'], // Wednesday
    ['2026', '2026-01-05'], // Thursday
    ['2027', '2027-01-04'], // Friday
    ['2022', '2022-01-03'], // Saturday
    ['2023', '2023-01-02'], // Sunday
  ];
  const sundayWeeks: Array<[string, string]> = [
    ['2024', '2024-01-07'],
    ['2019', '2019-01-06'],
    ['2025', '2025-01-05'],
    ['2026', '2026-01-04'],
    ['2027', '2027-01-03'],
    ['2022', '2022-01-02'],
    ['2023', '2023-01-01'],
  ];

  for (const [name, bow, table] of [
    ['Monday', 1, mondayWeeks],
    ['Sunday', 7, sundayWeeks],
  ] as const) {
    test(`${name} weeks: days before the first week start form a bucket from 1 January`, () => {
      const c = cal('UTC', bow);
      for (const [year, first] of table) {
        assert.equal(floorOf(`${year}-01-01T12:00:00Z`, '1w', c), `${year}-01-01T00:00:00Z`, year);
        if (first !== `${year}-01-01`) {
          assert.equal(nextOf(`${year}-01-01T00:00:00Z`, '1w', c), `${first}T00:00:00Z`, year);
        }
        assert.equal(floorOf(`${first}T00:00:00Z`, '1w', c), `${first}T00:00:00Z`, year);
        assert.equal(floorOf(`${first}T23:59:59Z`, '1w', c), `${first}T00:00:00Z`, year);
      }
    });
  }

  test('a full week is seven days from its start', () => {
    assert.equal(floorOf('2025-01-12T23:59:59Z', '1w'), '2025-01-06T00:00:00Z');
    assert.equal(floorOf('2025-01-13T00:00:00Z', '1w'), '2025-01-13T00:00:00Z');
    assert.equal(floorOf('2025-01-11T23:59:59Z', '1w', cal('UTC', 7)), '2025-01-05T00:00:00Z');
    assert.equal(floorOf('2025-01-08T10:00:00Z', '1w', cal('UTC', 3)), '2025-01-08T00:00:00Z');
  });

  test('weeks across the end of a year (SPEC example)', () => {
    assert.deepEqual(rangeOf('2024-12-30T00:00:00Z', '2025-01-07T00:00:00Z', '1w'), [
      '2024-12-30T00:00:00Z',
      '2025-01-01T00:00:00Z',
      '2025-01-06T00:00:00Z',
    ]);
    assert.equal(floorOf('2024-12-31T12:00:00Z', '1w'), '2024-12-30T00:00:00Z');
  });

  test('2w counts pairs of weeks from the first week start; the partial bucket stays alone', () => {
    assert.equal(floorOf('2025-01-03T00:00:00Z', '2w'), '2025-01-01T00:00:00Z');
    assert.equal(floorOf('2025-01-19T23:59:59Z', '2w'), '2025-01-06T00:00:00Z');
    assert.equal(floorOf('2025-01-20T00:00:00Z', '2w'), '2025-01-20T00:00:00Z');
    assert.deepEqual(rangeOf('2025-01-01T00:00:00Z', '2025-02-03T00:00:00Z', '2w'), [
      '2025-01-01T00:00:00Z',
      '2025-01-06T00:00:00Z',
      '2025-01-20T00:00:00Z',
      '2025-02-03T00:00:00Z',
    ]);
    // 22 December 2025 starts week pair 25 (50 weeks after 6 January); 2026 starts on a Thursday.
    assert.deepEqual(rangeOf('2025-12-20T00:00:00Z', '2026-01-20T00:00:00Z', '2w'), [
      '2025-12-08T00:00:00Z',
      '2025-12-22T00:00:00Z',
      '2026-01-01T00:00:00Z',
      '2026-01-05T00:00:00Z',
      '2026-01-19T00:00:00Z',
    ]);
  });
});

describe('months, quarters and years', () => {
  test('month ends and February', () => {
    assert.equal(floorOf('2025-01-31T23:59:59Z', '1mo'), '2025-01-01T00:00:00Z');
    assert.equal(floorOf('2025-04-30T23:59:59Z', '1mo'), '2025-04-01T00:00:00Z');
    assert.equal(floorOf('2024-02-29T12:00:00Z', '1mo'), '2024-02-01T00:00:00Z');
    assert.equal(nextOf('2024-02-01T00:00:00Z', '1mo'), '2024-03-01T00:00:00Z');
    assert.equal(nextOf('2025-01-31T00:00:00Z', '1mo'), '2025-02-01T00:00:00Z');
    assert.deepEqual(rangeOf('2024-01-31T00:00:00Z', '2024-05-01T00:00:00Z', '1mo'), [
      '2024-01-01T00:00:00Z',
      '2024-02-01T00:00:00Z',
      '2024-03-01T00:00:00Z',
      '2024-04-01T00:00:00Z',
      '2024-05-01T00:00:00Z',
    ]);
  });

  test('5mo segments from January: January, June, November', () => {
    assert.equal(floorOf('2025-05-31T23:59:59Z', '5mo'), '2025-01-01T00:00:00Z');
    assert.equal(floorOf('2025-06-01T00:00:00Z', '5mo'), '2025-06-01T00:00:00Z');
    assert.equal(floorOf('2025-12-31T23:59:59Z', '5mo'), '2025-11-01T00:00:00Z');
    assert.equal(nextOf('2025-11-01T00:00:00Z', '5mo'), '2026-01-01T00:00:00Z');
  });

  test('quarters', () => {
    assert.equal(floorOf('2025-05-15T00:00:00Z', '1q'), '2025-04-01T00:00:00Z');
    assert.equal(floorOf('2025-12-31T23:59:59Z', '1q'), '2025-10-01T00:00:00Z');
    assert.equal(floorOf('2025-06-30T23:59:59Z', '2q'), '2025-01-01T00:00:00Z');
    assert.equal(floorOf('2025-07-01T00:00:00Z', '2q'), '2025-07-01T00:00:00Z');
    assert.equal(nextOf('2025-07-01T00:00:00Z', '2q'), '2026-01-01T00:00:00Z');
    assert.equal(floorOf('2025-09-30T00:00:00Z', '3q'), '2025-01-01T00:00:00Z');
    assert.equal(nextOf('2025-10-01T00:00:00Z', '3q'), '2026-01-01T00:00:00Z');
  });

  test('years: floor(year / N) * N', () => {
    assert.equal(floorOf('2024-12-31T23:59:59Z', '1y'), '2024-01-01T00:00:00Z');
    assert.equal(floorOf('2025-06-01T00:00:00Z', '10y'), '2020-01-01T00:00:00Z');
    assert.equal(floorOf('2029-12-31T23:59:59Z', '10y'), '2020-01-01T00:00:00Z');
    assert.equal(nextOf('2020-01-01T00:00:00Z', '10y'), '2030-01-01T00:00:00Z');
    assert.deepEqual(rangeOf('2019-05-01T00:00:00Z', '2031-01-01T00:00:00Z', '10y'), [
      '2010-01-01T00:00:00Z',
      '2020-01-01T00:00:00Z',
      '2030-01-01T00:00:00Z',
    ]);
  });
});

describe('bucketRange and countBuckets', () => {
  const day = (hour: string) => ms(`2025-06-12T${hour}Z`);

  test('both ends included; a range inside one bucket has one bucket', () => {
    assert.deepEqual(rangeOf('2025-06-12T10:15:00Z', '2025-06-12T10:45:00Z', '1h'), ['2025-06-12T10:00:00Z']);
    assert.deepEqual(rangeOf('2025-06-12T10:00:00Z', '2025-06-12T12:00:00Z', '1h'), [
      '2025-06-12T10:00:00Z',
      '2025-06-12T11:00:00Z',
      '2025-06-12T12:00:00Z',
    ]);
  });

  test('stops at maxBuckets: null from bucketRange, maxBuckets + 1 from countBuckets', () => {
    const h = gran('1h');
    assert.equal(bucketRange(day('00:00:00'), day('23:00:00'), h, UTC, 24)?.length, 24);
    assert.equal(bucketRange(day('00:00:00'), day('23:00:00'), h, UTC, 23), null);
    assert.equal(countBuckets(day('00:00:00'), day('23:00:00'), h, UTC, 24), 24);
    assert.equal(countBuckets(day('00:00:00'), day('23:00:00'), h, UTC, 23), 24);
  });

  test('huge ranges are refused without walking them', () => {
    const from = ms('2000-01-01T00:00:00Z');
    const to = ms('2030-01-01T00:00:00Z');
    assert.equal(bucketRange(from, to, gran('1s'), UTC, 100_000), null);
    assert.equal(countBuckets(from, to, gran('1s'), UTC, 100_000), 100_001);
    assert.equal(countBuckets(from, to, gran('1mo'), UTC, 100_000), 361);
  });

  test('countBuckets is exact next to the limit', () => {
    const from = ms('2025-01-01T00:00:00Z');
    const lastOfLimit = from + 99_999 * 60_000; // the 100,000th minute
    assert.equal(countBuckets(from, lastOfLimit, gran('1m'), UTC, 100_000), 100_000);
    assert.equal(countBuckets(from, lastOfLimit + 60_000, gran('1m'), UTC, 100_000), 100_001);
  });

  test('from after to gives no buckets', () => {
    assert.deepEqual(bucketRange(day('12:00:00'), day('10:00:00'), gran('1h'), UTC, 10), []);
    assert.deepEqual(bucketRange(day('10:45:00'), day('10:15:00'), gran('1h'), UTC, 10), []);
    assert.equal(countBuckets(day('12:00:00'), day('10:00:00'), gran('1h'), UTC, 10), 0);
  });
});

describe('bad calendars and instants', () => {
  test('an unknown zone or week start is a programming error', () => {
    assert.throws(() => floorToBucket(0, gran('1h'), cal('Mars/Olympus')), RangeError);
    assert.throws(() => floorToBucket(0, gran('1w'), cal('UTC', 0)), RangeError);
    assert.throws(() => floorToBucket(0, gran('1w'), cal('UTC', 8)), RangeError);
    assert.throws(() => formatBucket(0, 'Mars/Olympus'), RangeError);
  });

  test('a non-finite instant floors to NaN', () => {
    assert.ok(Number.isNaN(floorToBucket(Number.NaN, gran('1h'), UTC)));
    assert.ok(Number.isNaN(floorToBucket(Number.POSITIVE_INFINITY, gran('1d'), UTC)));
  });
});
