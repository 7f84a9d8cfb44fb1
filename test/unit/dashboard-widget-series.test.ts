// SPEC 6 (updated): Trifle's `series` rows with expressions, the relaxed options (dots, normalized,
// alpha sorting, kpi split/goal fields, text alignment), and payloads as Trifle App saves them,
// which must be accepted unchanged.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorBag } from '../../src/domain/dashboards/issues';
import { normalizePayload } from '../../src/domain/dashboards/widgets';
import { isSeriesPath } from '../../src/domain/dashboards/widget-series';

function check(grid: unknown[]) {
  const bag = new ErrorBag();
  const output = normalizePayload({ grid }, bag);
  return { grid: output.grid as Record<string, unknown>[], errors: bag.fields };
}

const pathRow = (path: string, extra: Record<string, unknown> = {}) => ({
  kind: 'path',
  path,
  expression: '',
  label: '',
  visible: true,
  color_selector: 'default.*',
  ...extra,
});
const exprRow = (expression: string, extra: Record<string, unknown> = {}) => ({
  kind: 'expression',
  path: '',
  expression,
  label: '',
  visible: true,
  color_selector: 'default.*',
  ...extra,
});

// Widgets as Trifle App writes them: legacy path fields pruned, series rows with colour selectors,
// UI fields of its editors (size, y_label, path_inputs, designator, color_config ...).
const TRIFLE_GRID = [
  {
    id: 'a1',
    type: 'kpi',
    title: 'Revenue',
    x: 0,
    y: 0,
    w: 3,
    h: 2,
    function: 'sum',
    subtype: 'split',
    size: 'm',
    diff: true,
    timeseries: true,
    goal_target: '',
    goal_progress: false,
    goal_invert: false,
    series: [pathRow('revenue')],
  },
  {
    id: 'a2',
    type: 'kpi',
    title: 'Goal',
    x: 3,
    y: 0,
    w: 3,
    h: 2,
    function: 'mean',
    subtype: 'goal',
    goal_target: '1200',
    goal_progress: true,
    goal_invert: true,
    series: [pathRow('orders.count')],
  },
  {
    id: 'a3',
    type: 'timeseries',
    title: 'Rate',
    x: 6,
    y: 0,
    w: 6,
    h: 4,
    chart_type: 'dots',
    stacked: false,
    normalized: true,
    legend: true,
    y_label: '%',
    hovered_only: false,
    series: [
      pathRow('errors.*', { visible: false }),
      pathRow('requests.*', { visible: false }),
      exprRow('a / b * 100', { label: 'Error rate', color_selector: 'custom.#14b8a6' }),
    ],
  },
  {
    id: 'a4',
    type: 'category',
    title: 'Countries',
    x: 0,
    y: 2,
    w: 4,
    h: 3,
    chart_type: 'donut',
    series: [pathRow('country')],
  },
  {
    id: 'a5',
    type: 'table',
    title: 'Table',
    x: 4,
    y: 2,
    w: 8,
    h: 3,
    series: [pathRow('count'), exprRow('sqrt(a) + max(a, 2)', { color_selector: 'default.4' })],
  },
  {
    id: 'a6',
    type: 'list',
    title: 'Top',
    x: 0,
    y: 5,
    w: 3,
    h: 3,
    limit: null,
    sort: 'alpha_desc',
    label_strategy: 'short',
    series: [pathRow('channel.*')],
  },
  {
    id: 'a7',
    type: 'text',
    title: 'Header',
    x: 3,
    y: 5,
    w: 9,
    h: 1,
    subtype: 'header',
    title_size: 'large',
    color: 'default',
    alignment: 'right',
    subtitle: 'hi',
  },
  {
    id: 'a8',
    type: 'distribution',
    title: 'Latency',
    x: 0,
    y: 8,
    w: 6,
    h: 3,
    mode: '2d',
    chart_type: 'bar',
    path_aggregation: 'none',
    legend: true,
    path_inputs: ['latency'],
    paths: ['latency'],
    series_color_selectors: {},
    designators: { horizontal: { type: 'linear', min: 0, max: 100, step: 10 } },
    designator: { type: 'linear', min: 0, max: 100, step: 10 },
    series: [pathRow('latency')],
  },
  {
    id: 'a9',
    type: 'heatmap',
    title: 'Heat',
    x: 6,
    y: 8,
    w: 6,
    h: 3,
    mode: '3d',
    chart_type: 'heatmap',
    color_mode: 'auto',
    color_config: {},
    legend: true,
    paths: ['size'],
    series: [pathRow('size')],
  },
  {
    id: 'a10',
    type: 'group',
    title: 'Widget Group',
    x: 0,
    y: 11,
    w: 12,
    h: 4,
    children: [
      {
        id: 'a11',
        type: 'kpi',
        title: 'Inside',
        x: 0,
        y: 0,
        w: 6,
        h: 2,
        function: 'max',
        series: [pathRow('*.count', { label: 'Counts' })],
      },
    ],
  },
];

describe('payloads saved by Trifle App', () => {
  test('are accepted, every field kept as sent', () => {
    const { grid, errors } = check(structuredClone(TRIFLE_GRID));
    assert.deepEqual(errors, {});
    TRIFLE_GRID.forEach((sent, i) => {
      for (const [key, value] of Object.entries(sent)) {
        if (key !== 'children') assert.deepEqual(grid[i]![key], value, `${sent.id}.${key}`);
      }
    });
  });

  test('rows without a path or expression are kept when they carry a label (Trifle keeps them)', () => {
    const { errors } = check([
      { id: 't', type: 'table', series: [pathRow('', { label: 'later' }), exprRow('', { label: 'soon' })] },
    ]);
    assert.deepEqual(errors, {});
  });
});

describe('options of SPEC 6', () => {
  test('defaults: kpi function mean, text centred, timeseries not normalized', () => {
    const { grid } = check([
      { id: 'k', type: 'kpi', path: 'count' },
      { id: 't', type: 'text' },
      { id: 's', type: 'timeseries', series: [pathRow('a')] },
    ]);
    assert.deepEqual([grid[0]!.function, grid[1]!.alignment, grid[2]!.normalized], ['mean', 'center', false]);
  });

  test('every sort, chart type and subtype is accepted', () => {
    const widgets = [
      ...['desc', 'asc', 'alpha', 'alpha_desc'].map((sort, i) => ({
        id: `l${i}`,
        type: 'list',
        path: 'a.*',
        sort,
      })),
      ...['line', 'area', 'bar', 'dots'].map((chart_type, i) => ({
        id: `t${i}`,
        type: 'timeseries',
        paths: ['a'],
        chart_type,
      })),
      ...['number', 'split', 'goal'].map((subtype, i) => ({
        id: `k${i}`,
        type: 'kpi',
        path: 'a',
        subtype,
        goal_target: 5,
      })),
    ];
    assert.deepEqual(check(widgets).errors, {});
  });
});

describe('series rows and options that are refused', () => {
  const cases: Array<[string, Record<string, unknown>, Record<string, string[]>]> = [
    [
      'no path, paths or rows',
      { id: 'w', type: 'timeseries' },
      { 'payload.grid[w].paths': ['is required (or series rows)'] },
    ],
    [
      'an empty series and no path',
      { id: 'w', type: 'kpi', series: [] },
      { 'payload.grid[w].path': ['is required (or series rows)'] },
    ],
    [
      'series not a list',
      { id: 'w', type: 'table', series: {} },
      { 'payload.grid[w].series': ['must be a list of series rows'] },
    ],
    [
      'a row not an object',
      { id: 'w', type: 'table', series: ['count'] },
      { 'payload.grid[w].series[0]': ['must be a series row object'] },
    ],
    [
      'a null row',
      { id: 'w', type: 'table', series: [null] },
      { 'payload.grid[w].series[0]': ['must be a series row object'] },
    ],
    [
      'a bad function and no path, in one answer',
      { id: 'w', type: 'kpi', function: 'median' },
      {
        'payload.grid[w].function': ['must be one of sum, mean, min, max'],
        'payload.grid[w].path': ['is required (or series rows)'],
      },
    ],
    [
      'an unknown kind',
      { id: 'w', type: 'table', series: [{ kind: 'formula', path: 'a' }] },
      { 'payload.grid[w].series[0].kind': ['must be one of path, expression'] },
    ],
    [
      'a path row without a path',
      { id: 'w', type: 'table', series: [{ kind: 'path' }] },
      { 'payload.grid[w].series[0].path': ['is required in a path row'] },
    ],
    [
      'a partial wildcard',
      { id: 'w', type: 'table', series: [pathRow('a.b*')] },
      {
        'payload.grid[w].series[0].path': [
          'must be a dot path such as count or country.*; * only as a whole segment',
        ],
      },
    ],
    [
      'an expression naming a later row',
      { id: 'w', type: 'table', series: [pathRow('a'), exprRow('a + c')] },
      { 'payload.grid[w].series[1].expression': ['Unknown variable c: only earlier rows (a) can be used'] },
    ],
    [
      'an expression that does not parse',
      { id: 'w', type: 'table', series: [pathRow('a'), exprRow('a +* 2')] },
      { 'payload.grid[w].series[1].expression': ['Unexpected "*"'] },
    ],
    [
      'an expression row with nothing in it',
      { id: 'w', type: 'table', series: [exprRow('')] },
      { 'payload.grid[w].series[0].expression': ['is required in an expression row'] },
    ],
    [
      'visible as text',
      { id: 'w', type: 'table', series: [pathRow('a', { visible: 'yes' })] },
      { 'payload.grid[w].series[0].visible': ['must be true or false'] },
    ],
    [
      'label not a string',
      { id: 'w', type: 'table', series: [pathRow('a', { label: 5 })] },
      { 'payload.grid[w].series[0].label': ['must be a string'] },
    ],
    [
      'goal_target a boolean',
      { id: 'w', type: 'kpi', path: 'a', goal_target: true },
      { 'payload.grid[w].goal_target': ['must be a number'] },
    ],
    [
      'diff as text',
      { id: 'w', type: 'kpi', path: 'a', diff: 'yes' },
      { 'payload.grid[w].diff': ['must be true or false'] },
    ],
    [
      'normalized as text',
      { id: 'w', type: 'timeseries', paths: ['a'], normalized: 'on' },
      { 'payload.grid[w].normalized': ['must be true or false'] },
    ],
    [
      'limit zero',
      { id: 'w', type: 'list', path: 'a.*', limit: 0 },
      { 'payload.grid[w].limit': ['must be at least 1'] },
    ],
    [
      'sort unknown',
      { id: 'w', type: 'list', path: 'a.*', sort: 'random' },
      { 'payload.grid[w].sort': ['must be one of desc, asc, alpha, alpha_desc'] },
    ],
  ];
  for (const [name, widget, expected] of cases) {
    test(name, () => assert.deepEqual(check([widget]).errors, expected));
  }

  test('row errors inside a group name the child', () => {
    const grid = [{ id: 'g', type: 'group', children: [{ id: 'c', type: 'table', series: [exprRow('b')] }] }];
    assert.deepEqual(check(grid).errors, {
      'payload.grid[g].children[c].series[0].expression': [
        'Unknown variable b: only earlier rows (none) can be used',
      ],
    });
  });

  test('series paths: * only as a whole segment, never alone', () => {
    assert.deepEqual(['a', 'a.*', '*.count', 'a.*.b'].map(isSeriesPath), [true, true, true, true]);
    assert.deepEqual(['*', 'a*', 'a..b', '', 'a.'].map(isSeriesPath), [false, false, false, false, false]);
  });
});
