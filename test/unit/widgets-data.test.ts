// Widget data: path lookup and wildcard expansion, the two metric forms (path/paths and series
// rows), expression rows over wildcard bindings, and the four aggregation functions.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { bindPath, effectivePattern, leafPaths, valueAt } from '../../web/widgets/data/paths';
import { rowColor, visibleEntries, widgetRows, rowsError } from '../../web/widgets/data/rows';
import { aggregate, toFunction, widgetTimeline, widgetTotals } from '../../web/widgets/data/series';
import type { SeriesData } from '../../web/widgets/types';

const series = (values: Record<string, unknown>[]): SeriesData => ({
  at: values.map((_, i) => Date.UTC(2026, 0, 1, i)),
  atText: values.map((_, i) => new Date(Date.UTC(2026, 0, 1, i)).toISOString()),
  values,
});

const SHOP = series([
  { count: 2, requests: { api: 10, web: 30 }, errors: { api: 1 }, country: { SK: 1, US: 2 } },
  {},
  {
    count: 4,
    requests: { api: 20, web: 10 },
    errors: { api: 4, web: 1 },
    country: { US: 5, UK: { north: 1 } },
  },
]);

describe('paths', () => {
  test('leaves, lookups and maps', () => {
    assert.deepEqual(leafPaths(SHOP), [
      'count',
      'country.SK',
      'country.UK.north',
      'country.US',
      'errors.api',
      'errors.web',
      'requests.api',
      'requests.web',
    ]);
    assert.equal(valueAt(SHOP.values[0], 'requests.api'), 10);
    assert.equal(valueAt(SHOP.values[0], 'requests'), null);
    assert.equal(valueAt(SHOP.values[1], 'count'), null);
  });

  test('wildcards bind what they matched; a final * reaches every leaf below', () => {
    assert.equal(bindPath('count', 'count'), '');
    assert.equal(bindPath('country.*', 'country.US'), 'US');
    assert.equal(bindPath('country.*', 'country.UK.north'), 'UK.north');
    assert.equal(bindPath('*.api', 'errors.api'), 'errors');
    assert.equal(bindPath('*.api', 'errors.web'), null);
    assert.equal(bindPath('country.*', 'country'), null);
    assert.equal(bindPath('count', 'country'), null);
  });

  test('a plain path naming a map expands to its leaves', () => {
    assert.equal(effectivePattern(SHOP, 'country'), 'country.*');
    assert.equal(effectivePattern(SHOP, 'count'), 'count');
  });
});

describe('widget rows', () => {
  test('legacy path and paths become path rows', () => {
    assert.deepEqual(
      widgetRows({ type: 'kpi', path: 'count' }).map((r) => r.path),
      ['count'],
    );
    assert.deepEqual(
      widgetRows({ type: 'timeseries', paths: ['a', ' b ', ''] }).map((r) => r.path),
      ['a', 'b'],
    );
  });

  test('series rows win over paths; empty rows are dropped; visibility and colours are read', () => {
    const rows = widgetRows({
      type: 'timeseries',
      paths: ['ignored'],
      series: [
        { kind: 'path', path: 'count', label: 'Count', visible: true, color_selector: 'default.3' },
        { kind: 'path', path: '', expression: '', label: '' },
        { kind: 'expression', path: '', expression: 'a * 2', visible: false, color: '#112233' },
      ],
    });
    assert.deepEqual(
      rows.map((r) => [r.kind, r.path || r.expression, r.label, r.visible, r.color]),
      [
        ['path', 'count', 'Count', true, 'palette:3'],
        ['expression', 'a * 2', '', false, '#112233'],
      ],
    );
    assert.equal(rowColor({ color_selector: 'custom.#aabbcc' }), '#aabbcc');
    assert.equal(rowColor({ color_selector: 'default.*' }), null);
  });
});

describe('resolving rows', () => {
  test('timeline: one value per bucket, missing buckets are 0, wildcards give one entry per leaf', () => {
    const { resolved } = widgetTimeline({ type: 'timeseries', paths: ['count', 'requests.*'] }, SHOP);
    const entries = visibleEntries(resolved);
    assert.deepEqual(
      entries.map((e) => [e.name, e.values]),
      [
        ['count', [2, 0, 4]],
        ['requests.api', [10, 0, 20]],
        ['requests.web', [30, 0, 10]],
      ],
    );
  });

  test('a key holding a dot is one segment of its path', () => {
    const { resolved } = widgetTimeline(
      { type: 'timeseries', paths: ['version.*'] },
      series([{ version: { 'v1.2': 3 } }, { version: { 'v1.2': 1, v2: 5 } }]),
    );
    assert.deepEqual(
      visibleEntries(resolved).map((e) => [e.binding, e.values]),
      [
        ['v1.2', [3, 1]],
        ['v2', [0, 5]],
      ],
    );
  });

  test('totals: one value per leaf over the range', () => {
    const { resolved } = widgetTotals({ type: 'category', path: 'country.*' }, SHOP);
    assert.deepEqual(
      visibleEntries(resolved).map((e) => [e.binding, e.values[0]]),
      [
        ['SK', 1],
        ['UK.north', 1],
        ['US', 7],
      ],
    );
  });

  test('an expression row divides per bucket; a zero denominator gives null', () => {
    const widget = {
      type: 'timeseries',
      series: [
        { kind: 'path', path: 'requests.api', visible: false },
        { kind: 'path', path: 'count', visible: false },
        { kind: 'expression', expression: 'a / b', label: 'per count' },
      ],
    };
    const entries = visibleEntries(widgetTimeline(widget, SHOP).resolved);
    assert.deepEqual(
      entries.map((e) => [e.name, e.values]),
      [['per count', [5, null, 5]]],
    );
  });

  test('expressions combine wildcard rows binding by binding; a single row joins every binding', () => {
    const widget = {
      type: 'table',
      series: [
        { kind: 'path', path: 'errors.*', visible: false },
        { kind: 'path', path: 'requests.*', visible: false },
        { kind: 'path', path: 'count', visible: false },
        { kind: 'expression', expression: '100 * a / b', label: 'error %' },
        { kind: 'expression', expression: 'b / c' },
      ],
    };
    const entries = visibleEntries(widgetTotals(widget, SHOP).resolved);
    assert.deepEqual(
      entries.map((e) => [e.name, e.values[0]]),
      [
        ['error %: api', (100 * 5) / 30],
        ['error %: web', (100 * 1) / 40],
        ['e: api', 30 / 6],
        ['e: web', 40 / 6],
      ],
    );
  });

  test('a row with no data gives no entry; a broken expression is reported', () => {
    const widget = {
      type: 'kpi',
      series: [
        { kind: 'path', path: 'missing' },
        { kind: 'expression', expression: 'a +' },
      ],
    };
    const { resolved } = widgetTimeline(widget, SHOP);
    assert.deepEqual(visibleEntries(resolved), []);
    assert.match(rowsError(resolved)!, /^Row b \(a \+\): Unexpected end of expression/);
  });
});

describe('aggregation', () => {
  test('sum, mean, min, max over present values; none → null', () => {
    const values = [4, null, 1, 7];
    assert.deepEqual(
      ['sum', 'mean', 'min', 'max'].map((fn) => aggregate(values, toFunction(fn))),
      [12, 4, 1, 7],
    );
    assert.equal(aggregate([null], 'sum'), null);
    assert.equal(aggregate([], 'max'), null);
    assert.equal(toFunction(undefined), 'mean');
    assert.equal(toFunction('avg'), 'mean');
  });
});
