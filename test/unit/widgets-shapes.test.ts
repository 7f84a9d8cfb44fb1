// Number formats, stacking and normalizing, list ranking, histogram buckets and heatmap grids.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  formatCompact,
  formatExact,
  formatPercent,
  formatShare,
  percentChange,
} from '../../web/widgets/data/format';
import { normalizeSeries, stackSeries } from '../../web/widgets/data/stack';
import { rankItems, toSort } from '../../web/widgets/data/list';
import { bucketLabels, compareBucketLabels, designatorLabels } from '../../web/widgets/data/buckets';
import { intensity, isMatrix, matrixGrid, timeGrid } from '../../web/widgets/data/heatmap';
import { foldSmall, largest, sliceAngles } from '../../web/widgets/data/items';
import type { Entry } from '../../web/widgets/data/rows';

describe('number formats', () => {
  test('compact figures for axes and big numbers', () => {
    const cases: Array<[number | null, string]> = [
      [0, '0'],
      [0.25, '0.25'],
      [1.5, '1.5'],
      [12.34, '12.3'],
      [999, '999'],
      [1234, '1.2k'],
      [999_999, '1M'],
      [3_400_000, '3.4M'],
      [-1500, '-1.5k'],
      [123_456, '123k'],
      [2.5e9, '2.5G'],
      [null, '–'],
    ];
    for (const [value, text] of cases) assert.equal(formatCompact(value), text, String(value));
  });

  test('exact figures for tables and read-outs', () => {
    assert.equal(formatExact(1234567.891), '1,234,567.891');
    assert.equal(formatExact(2), '2');
    assert.equal(formatExact(null), '–');
  });

  test('change against the previous period', () => {
    assert.equal(percentChange(150, 100), 50);
    assert.equal(percentChange(50, -100), 150);
    assert.equal(percentChange(5, 0), null);
    assert.equal(percentChange(5, null), null);
    assert.equal(formatPercent(12.345), '+12.3 %');
    assert.equal(formatPercent(-3), '−3 %');
    assert.equal(formatPercent(0), '0 %');
    assert.equal(formatPercent(214267.4), '+214,267 %');
    assert.equal(formatPercent(0.01), '+<0.1 %');
    assert.equal(formatShare(1, 1000), '<1 %');
    assert.equal(formatShare(0, 1000), '0 %');
    assert.equal(formatShare(999.9, 1000), '>99 %');
    assert.equal(formatShare(1000, 1000), '100 %');
    assert.equal(formatShare(250, 1000), '25 %');
  });
});

describe('stacking and normalizing', () => {
  test('stacked series are running totals; nulls stay gaps', () => {
    assert.deepEqual(
      stackSeries([
        [1, 2, null],
        [3, null, 1],
        [1, 1, 1],
      ]),
      [
        [1, 2, null],
        [4, null, 1],
        [5, 3, 2],
      ],
    );
  });

  test('normalized series are shares of each bucket in percent', () => {
    assert.deepEqual(
      normalizeSeries([
        [1, 0, 3],
        [3, 0, 1],
      ]),
      [
        [25, 0, 75],
        [75, 0, 25],
      ],
    );
  });
});

describe('list ranking', () => {
  const items = [
    { name: 'b', value: 2 },
    { name: 'a10', value: 5 },
    { name: 'a9', value: 5 },
    { name: 'c', value: 1 },
  ];
  test('desc (ties by name), asc, alpha (numeric-aware), alpha_desc, limit', () => {
    assert.deepEqual(
      rankItems(items, 'desc').map((i) => i.name),
      ['a9', 'a10', 'b', 'c'],
    );
    assert.deepEqual(
      rankItems(items, 'asc').map((i) => i.name),
      ['c', 'b', 'a9', 'a10'],
    );
    assert.deepEqual(
      rankItems(items, 'alpha').map((i) => i.name),
      ['a9', 'a10', 'b', 'c'],
    );
    assert.deepEqual(
      rankItems(items, 'alpha_desc').map((i) => i.name),
      ['c', 'b', 'a10', 'a9'],
    );
    assert.deepEqual(
      rankItems(items, 'desc', 2).map((i) => i.name),
      ['a9', 'a10'],
    );
    assert.equal(rankItems(items, 'desc', null).length, 4);
    assert.equal(rankItems(items, 'desc', '3').length, 3);
    assert.equal(toSort('sideways'), 'desc');
  });
});

describe('histogram buckets', () => {
  test('labels sort numerically with the overflow bucket last', () => {
    assert.deepEqual(['100+', '20', 'other', '100', '5'].sort(compareBucketLabels), [
      '5',
      '20',
      '100',
      '100+',
      'other',
    ]);
  });

  test('designators list their buckets', () => {
    assert.deepEqual(designatorLabels({ type: 'linear', min: 0, max: 30, step: 10 }), [
      '0',
      '10',
      '20',
      '30',
      '30+',
    ]);
    assert.deepEqual(designatorLabels({ type: 'custom', buckets: [50, 10, '20'] }), [
      '10',
      '20',
      '50',
      '50+',
    ]);
    assert.deepEqual(designatorLabels({ type: 'linear', min: 0, max: 10, step: 0 }), []);
    assert.deepEqual(designatorLabels(null), []);
    assert.deepEqual(bucketLabels(['20', '7'], ['0', '10']), ['0', '7', '10', '20']);
  });
});

describe('heatmap grids', () => {
  const entry = (binding: string, values: number[]): Entry => ({
    binding,
    name: binding,
    source: binding,
    values,
    color: null,
  });

  test('x.y bindings make a matrix summed per cell, larger y on top', () => {
    const entries = [entry('10.1', [2]), entry('10.2', [3]), entry('20.1', [5]), entry('20.1', [1])];
    assert.equal(isMatrix(entries), true);
    const grid = matrixGrid(entries);
    assert.deepEqual(
      [grid.xLabels, grid.yLabels, grid.cells, grid.max],
      [
        ['10', '20'],
        ['2', '1'],
        [
          [3, 0],
          [2, 6],
        ],
        6,
      ],
    );
  });

  test('flat children make a time grid', () => {
    const entries = [entry('api', [1, 0]), entry('web', [4, 2])];
    assert.equal(isMatrix(entries), false);
    const grid = timeGrid(entries, [1000, 2000]);
    assert.deepEqual(
      [grid.yLabels, grid.cells, grid.max, grid.timeAxis],
      [
        ['api', 'web'],
        [
          [1, 0],
          [4, 2],
        ],
        4,
        true,
      ],
    );
  });

  test('a time grid keeps the largest rows past its limit, in their order', () => {
    const entries = [entry('a', [1, 1]), entry('b', [9, 9]), entry('c', [0, 1]), entry('d', [5, 0])];
    const grid = timeGrid(entries, [1000, 2000], 2);
    assert.deepEqual([grid.yLabels, grid.total], [['b', 'd'], 4]);
  });

  test('a time grid of histogram buckets puts them in numeric order, larger on top', () => {
    const entries = [
      entry('100', [1]),
      entry('1000', [1]),
      entry('1000+', [1]),
      entry('150', [1]),
      entry('50', [1]),
    ];
    assert.deepEqual(timeGrid(entries, [1000]).yLabels, ['1000+', '1000', '150', '100', '50']);
  });

  test('intensity is a square-root scale clamped to 0..1', () => {
    assert.equal(intensity(0, 10), 0);
    assert.equal(intensity(10, 10), 1);
    assert.equal(intensity(2.5, 10), 0.5);
    assert.equal(intensity(5, 0), 0);
  });
});

describe('many items', () => {
  const e = (name: string, values: number[]) => ({ name, values });
  test('largest keeps the biggest entries in their order', () => {
    const { kept, total } = largest([e('a', [1]), e('b', [-9]), e('c', [3]), e('d', [2])], 2);
    assert.deepEqual([kept.map((x) => x.name), total], [['b', 'c'], 4]);
    assert.equal(largest([e('a', [1])], 2).kept.length, 1);
  });

  test('pies fold the small slices into Other; slices are fractions of a turn', () => {
    const items = [
      { name: 'a', value: 5 },
      { name: 'b', value: 1 },
      { name: 'c', value: 3 },
      { name: 'd', value: 1 },
    ];
    assert.deepEqual(foldSmall(items, 3), [
      { name: 'a', value: 5 },
      { name: 'c', value: 3 },
      { name: 'Other', value: 2 },
    ]);
    const turn = Math.PI * 2;
    assert.deepEqual(sliceAngles([1, 3, -2, 0]), [
      [0, turn / 4],
      [turn / 4, turn],
      [turn, turn],
      [turn, turn],
    ]);
  });
});
