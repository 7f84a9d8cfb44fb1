import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorBag } from '../../src/domain/dashboards/issues';
import { isMetricPath, normalizePayload } from '../../src/domain/dashboards/widgets';

function check(payload: unknown) {
  const bag = new ErrorBag();
  const output = normalizePayload(payload, bag);
  return { output, errors: bag.fields };
}

const kpi = (extra: Record<string, unknown> = {}) => ({
  id: 'kpi-1',
  type: 'kpi',
  path: 'count',
  function: 'sum',
  x: 0,
  y: 0,
  w: 3,
  h: 2,
  ...extra,
});

function withoutPath() {
  const { path: _path, ...rest } = kpi();
  return rest;
}

describe('payload and grid', () => {
  test('a payload without grid is kept as sent', () => {
    const { output, errors } = check({ theme: 'dark' });
    assert.deepEqual(errors, {});
    assert.deepEqual(output, { theme: 'dark' });
  });

  test('payload must be an object and grid a list', () => {
    assert.deepEqual(check([]).errors, { payload: ['must be an object'] });
    assert.deepEqual(check(null).errors, { payload: ['must be an object'] });
    assert.deepEqual(check({ grid: {} }).errors, { 'payload.grid': ['must be a list of widgets'] });
  });

  test('defaults are written in and unknown widget fields are kept', () => {
    const { output, errors } = check({
      grid: [{ id: 'k', type: 'kpi', path: 'count', function: 'mean', size: 'l' }],
    });
    assert.deepEqual(errors, {});
    assert.deepEqual(output.grid, [
      {
        id: 'k',
        type: 'kpi',
        title: '',
        x: 0,
        y: 0,
        w: 3,
        h: 2,
        path: 'count',
        function: 'mean',
        subtype: 'number',
        size: 'l',
      },
    ]);
  });

  test('object keys that could reach a prototype are dropped from widgets', () => {
    const payload = JSON.parse(
      '{"grid":[{"id":"a","type":"text","__proto__":{"p":1},"constructor":2,"prototype":3,"ui":4}]}',
    );
    const [widget] = check(payload).output.grid as Record<string, unknown>[];
    assert.deepEqual(Object.keys(widget!), [
      'id',
      'type',
      'title',
      'x',
      'y',
      'w',
      'h',
      'subtitle',
      'alignment',
      'ui',
    ]);
    assert.equal(Object.getPrototypeOf(widget), Object.prototype);
  });

  test('every type accepts its documented fields', () => {
    const grid = [
      kpi({ subtype: 'goal', goal_target: 100 }),
      {
        id: 'ts',
        type: 'timeseries',
        paths: ['a', 'b.*'],
        chart_type: 'area',
        stacked: true,
        legend: false,
        x: 3,
        w: 9,
      },
      { id: 'cat', type: 'category', path: 'country.*', chart_type: 'donut' },
      { id: 'tbl', type: 'table', paths: ['count', 'failed'] },
      { id: 'txt', type: 'text', title: 'Hi', subtitle: 'there', alignment: 'center' },
      { id: 'lst', type: 'list', path: 'channel.*', limit: 6, sort: 'asc' },
      {
        id: 'dst',
        type: 'distribution',
        paths: ['duration'],
        mode: '2d',
        designators: { horizontal: { min: 0 } },
      },
      { id: 'hm', type: 'heatmap', paths: ['duration'] },
      { id: 'grp', type: 'group', title: 'Group', children: [{ id: 'child', type: 'text', x: 6, w: 6 }] },
    ];
    const { output, errors } = check({ grid });
    assert.deepEqual(errors, {});
    const widgets = output.grid as Record<string, unknown>[];
    assert.equal(widgets.length, 9);
    assert.equal(widgets[1]!.chart_type, 'area');
    assert.equal(widgets[2]!.chart_type, 'donut');
    assert.equal(widgets[5]!.sort, 'asc');
    const children = widgets[8]!.children as Record<string, unknown>[];
    assert.deepEqual(children[0], {
      id: 'child',
      type: 'text',
      title: '',
      x: 6,
      y: 0,
      w: 6,
      h: 2,
      subtitle: '',
      alignment: 'center',
    });
  });

  test('SPEC 6: dots charts and alphabetical list sorting', () => {
    const grid = [
      { id: 'ts', type: 'timeseries', paths: ['a'], chart_type: 'dots' },
      { id: 'l1', type: 'list', path: 'a.*', sort: 'alpha' },
      { id: 'l2', type: 'list', path: 'a.*', sort: 'alpha_desc' },
    ];
    const { output, errors } = check({ grid });
    assert.deepEqual(errors, {});
    assert.deepEqual(
      (output.grid as Record<string, unknown>[]).map((w) => w.chart_type ?? w.sort),
      ['dots', 'alpha', 'alpha_desc'],
    );
  });

  test('type defaults: timeseries line/unstacked/legend, category bar, list desc', () => {
    const { output } = check({
      grid: [
        { id: 'a', type: 'timeseries', paths: ['x'] },
        { id: 'b', type: 'category', path: 'x.*' },
        { id: 'c', type: 'list', path: 'x.*' },
      ],
    });
    const [ts, cat, list] = output.grid as Record<string, unknown>[];
    assert.deepEqual([ts!.chart_type, ts!.stacked, ts!.legend], ['line', false, true]);
    assert.equal(cat!.chart_type, 'bar');
    assert.equal(list!.sort, 'desc');
    assert.equal('limit' in list!, false);
  });
});

describe('widget errors name the widget id and field', () => {
  const cases: Array<[string, unknown, Record<string, string[]>]> = [
    [
      'unknown function',
      kpi({ function: 'avg' }),
      { 'payload.grid[kpi-1].function': ['must be one of sum, mean, min, max'] },
    ],
    ['missing path', withoutPath(), { 'payload.grid[kpi-1].path': ['is required (or series rows)'] }],
    [
      'wildcard in a kpi path',
      kpi({ path: 'a.*' }),
      { 'payload.grid[kpi-1].path': ['must be a dot path such as count or country.US, without wildcards'] },
    ],
    [
      'subtype',
      kpi({ subtype: 'gauge' }),
      { 'payload.grid[kpi-1].subtype': ['must be one of number, split, goal'] },
    ],
    [
      'x + w over 12',
      kpi({ x: 10, w: 3 }),
      { 'payload.grid[kpi-1].w': ['x + w must be at most 12 (the grid has 12 columns)'] },
    ],
    ['negative x', kpi({ x: -1 }), { 'payload.grid[kpi-1].x': ['must be 0 or more'] }],
    ['zero height', kpi({ h: 0 }), { 'payload.grid[kpi-1].h': ['must be at least 1'] }],
    ['fractional y', kpi({ y: 1.5 }), { 'payload.grid[kpi-1].y': ['must be an integer'] }],
    ['string w', kpi({ w: '3' }), { 'payload.grid[kpi-1].w': ['must be an integer'] }],
    ['title not a string', kpi({ title: 5 }), { 'payload.grid[kpi-1].title': ['must be a string'] }],
    [
      'unknown type',
      kpi({ type: 'gauge' }),
      {
        'payload.grid[kpi-1].type': [
          'must be one of kpi, timeseries, category, table, text, list, distribution, heatmap, group',
        ],
      },
    ],
  ];
  for (const [name, widget, expected] of cases) {
    test(name, () => assert.deepEqual(check({ grid: [widget] }).errors, expected));
  }

  test('a widget without a usable id is named by its position', () => {
    const { errors } = check({ grid: [kpi(), { type: 'text', id: 7 }, 'text'] });
    assert.deepEqual(errors, {
      'payload.grid[1].id': ['must be a string'],
      'payload.grid[2]': ['must be a widget object'],
    });
  });

  test('ids are unique across the grid, group children included', () => {
    const grid = [kpi(), { id: 'g', type: 'group', children: [kpi()] }];
    assert.deepEqual(check({ grid }).errors, {
      'payload.grid[g].children[kpi-1].id': ['must be unique in the grid'],
    });
  });

  test('groups do not nest', () => {
    const grid = [{ id: 'g', type: 'group', children: [{ id: 'g2', type: 'group' }] }];
    assert.deepEqual(check({ grid }).errors, {
      'payload.grid[g].children[g2].type': ['must not be group inside a group (groups do not nest)'],
    });
  });

  test('per-type fields: chart types, booleans, paths, limit, sort, alignment', () => {
    const grid = [
      { id: 'ts', type: 'timeseries', paths: [], chart_type: 'pie', stacked: 'yes' },
      { id: 'cat', type: 'category', path: 'a.*.b', chart_type: 'line' },
      { id: 'tbl', type: 'table', paths: 'count' },
      { id: 'txt', type: 'text', alignment: 'justify' },
      { id: 'lst', type: 'list', path: 'a', limit: 0, sort: 'up' },
    ];
    assert.deepEqual(check({ grid }).errors, {
      'payload.grid[ts].paths': ['must list at least one path'],
      'payload.grid[ts].chart_type': ['must be one of line, area, bar, dots'],
      'payload.grid[ts].stacked': ['must be true or false'],
      'payload.grid[cat].path': [
        'must be a dot path such as count or country.US; only a final .* wildcard is allowed',
      ],
      'payload.grid[cat].chart_type': ['must be one of bar, pie, donut'],
      'payload.grid[tbl].paths': ['must be a list of paths'],
      'payload.grid[txt].alignment': ['must be one of left, center, right'],
      'payload.grid[lst].limit': ['must be at least 1'],
      'payload.grid[lst].sort': ['must be one of desc, asc, alpha, alpha_desc'],
    });
  });
});

describe('metric paths', () => {
  test('dot paths with an optional final wildcard', () => {
    assert.equal(isMetricPath('count', false), true);
    assert.equal(isMetricPath('country.US', false), true);
    assert.equal(isMetricPath('country.*', true), true);
    assert.equal(isMetricPath('country.*', false), false);
    assert.equal(isMetricPath('*', true), false);
    assert.equal(isMetricPath('a.*.b', true), false);
    assert.equal(isMetricPath('a.b*', true), false);
    assert.equal(isMetricPath('a..b', true), false);
    assert.equal(isMetricPath('.a', true), false);
    assert.equal(isMetricPath('', true), false);
    assert.equal(isMetricPath('a'.repeat(256), true), false);
  });
});
