// KPI figures (split against the previous period, goal progress, Trifle's text goal_target) and the
// time helpers of the charts (still-filling bucket, tick and read-out labels in the source's zone).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { kpiFigures, toTarget } from '../../web/widgets/data/kpi';
import {
  currentBucketIndex,
  formatBucket,
  formatBucketShort,
  formatTick,
  granularityMs,
} from '../../web/widgets/data/time';
import type { SeriesData } from '../../web/widgets/types';

const H = 3_600_000;
const series = (values: Record<string, unknown>[]): SeriesData => ({
  at: values.map((_, i) => i * H),
  atText: values.map((_, i) => String(i)),
  values,
});

describe('kpi figures', () => {
  const now = series([{ count: 4 }, {}, { count: 8 }]);
  const before = series([{ count: 2 }, { count: 2 }]);

  test('number: the function over the range (missing buckets count 0)', () => {
    assert.equal(kpiFigures({ path: 'count', function: 'sum' }, now, null).value, 12);
    assert.equal(kpiFigures({ path: 'count', function: 'mean' }, now, null).value, 4);
    assert.equal(kpiFigures({ path: 'count', function: 'max' }, now, null).value, 8);
    assert.equal(kpiFigures({ path: 'count' }, now, null).fn, 'mean');
    assert.equal(kpiFigures({ path: 'nothing', function: 'sum' }, now, null).entry, null);
  });

  test('split: change and difference against the previous period; unknown while it loads', () => {
    const split = kpiFigures({ path: 'count', function: 'sum', subtype: 'split' }, now, before);
    assert.deepEqual([split.value, split.previous, split.change, split.diff], [12, 4, 200, 8]);
    const loading = kpiFigures({ path: 'count', function: 'sum', subtype: 'split' }, now, null);
    assert.equal(loading.previous, undefined);
    const none = kpiFigures({ path: 'count', function: 'sum', subtype: 'split' }, now, series([{}]));
    assert.deepEqual([none.previous, none.change, none.diff], [null, null, null]);
  });

  test('goal: progress to goal_target, given as a number or as form text', () => {
    assert.equal(
      kpiFigures({ path: 'count', function: 'sum', subtype: 'goal', goal_target: 24 }, now, null).progress,
      0.5,
    );
    assert.equal(
      kpiFigures({ path: 'count', function: 'sum', subtype: 'goal', goal_target: '1,200' }, now, null).target,
      1200,
    );
    assert.equal(
      kpiFigures({ path: 'count', function: 'sum', subtype: 'goal', goal_target: '' }, now, null).progress,
      null,
    );
    assert.deepEqual(
      [toTarget('12.5'), toTarget('x'), toTarget(true), toTarget(Infinity)],
      [12.5, null, null, null],
    );
  });

  test('series rows: the first visible entry with data is the KPI (Trifle App)', () => {
    const widget = {
      function: 'sum',
      series: [
        { kind: 'path', path: 'count', visible: false },
        { kind: 'expression', expression: 'a * 10' },
      ],
    };
    assert.equal(kpiFigures(widget, now, null).value, 120);
  });
});

describe('time helpers', () => {
  test('granularity lengths', () => {
    assert.deepEqual(['90s', '5m', '1h', '1d', '1w', '1mo', '1q', '1y', 'x'].map(granularityMs), [
      90_000,
      300_000,
      H,
      24 * H,
      7 * 24 * H,
      31 * 24 * H,
      92 * 24 * H,
      366 * 24 * H,
      null,
    ]);
  });

  test('the bucket holding now is still filling; none once the range ended', () => {
    const at = [0, H, 2 * H];
    assert.equal(currentBucketIndex(at, 2.5 * H, '1h'), 2);
    assert.equal(currentBucketIndex(at, 1.5 * H, '1h'), 1);
    assert.equal(currentBucketIndex(at, 3.5 * H, '1h'), -1);
    assert.equal(currentBucketIndex(at, -1, '1h'), -1);
  });

  test('ticks and read-outs in the source zone, 24-hour clock, days named at midnight', () => {
    const t = Date.UTC(2026, 0, 24, 13, 0); // 14:00 in Bratislava
    assert.equal(formatTick(t, H, 'Europe/Bratislava'), '14:00');
    assert.equal(formatTick(Date.UTC(2026, 0, 24, 23, 0), H, 'Europe/Bratislava'), '25 Jan');
    assert.equal(formatTick(t, 24 * H, 'UTC'), '24 Jan');
    assert.equal(formatTick(t, 31 * 24 * H, 'UTC'), 'Jan 2026');
    assert.equal(formatTick(t, 400 * 24 * H, 'UTC'), '2026');
    assert.equal(formatBucket(t, 'Europe/Bratislava', '1h'), 'Sat 24 Jan, 14:00');
    assert.equal(formatBucket(t, 'UTC', '1d'), 'Sat, 24 Jan 2026');
    assert.equal(formatBucketShort(t, 'UTC', '1mo'), 'Jan 2026');
    assert.equal(formatTick(t, H, 'Not/AZone'), '13:00'); // an unknown zone falls back to UTC
  });
});
