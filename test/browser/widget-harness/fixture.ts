// The browser test's data and dashboard: a day of hourly points for key `shop` (and a quieter day
// before it, for kpi `split`), and a grid with every widget type and option, both metric forms.
// Expected figures are computed here from the same formulas the points are made with.

export const KEY = 'shop';
export const DAY = '2026-01-24';
export const FROM = `${DAY}T00:00:00Z`;
export const TO = `${DAY}T23:59:59Z`;
export const PREV_FROM = '2026-01-23T00:00:00Z';
export const PREV_TO = '2026-01-23T23:59:59Z';
/** inside the last bucket: it is still filling */
export const NOW = `${DAY}T23:30:00Z`;

const HOURS = Array.from({ length: 24 }, (_, h) => h);
const at = (day: string, h: number) => `${day}T${String(h).padStart(2, '0')}:00:00Z`;

export function points(): Array<Record<string, unknown>> {
  const today = HOURS.map((h) => ({
    key: KEY,
    at: at(DAY, h),
    values: {
      count: h + 1,
      requests: { api: 10 + h, web: 2 * h },
      errors: { api: h % 3 },
      country: { SK: 1, US: 2, ...(h < 5 ? { UK: 1 } : {}) },
      latency: { '10': 3, '50': 2, ...(h % 2 ? { '100+': 1 } : {}) },
      size: { '10': { '1': 1, '2': h % 4 }, '20': { '1': 2, '2': 1 } },
    },
  }));
  const before = HOURS.map((h) => ({ key: KEY, at: at('2026-01-23', h), values: { count: 2 } }));
  return [...today, ...before];
}

export const EXPECTED = {
  countSum: HOURS.reduce((s, h) => s + h + 1, 0), // 300
  previousSum: 48,
  countMean: 12.5,
  countries: { SK: 24, US: 48, UK: 5 },
  /** (10 + h) / (h + 1) for h = 0, 1, 23 */
  ratio: [10, 5.5, 1.375],
};

type W = Record<string, unknown> & { id: string; type: string; x: number; y: number; w: number; h: number };
const at0 = (
  id: string,
  type: string,
  x: number,
  y: number,
  w: number,
  h: number,
  extra: Record<string, unknown>,
): W => ({ id, type, title: '', x, y, w, h, ...extra });

export function widgets(): W[] {
  return [
    at0('kpi-sum', 'kpi', 0, 0, 3, 2, { title: 'Orders', path: 'count', function: 'sum', timeseries: true }),
    at0('kpi-split', 'kpi', 3, 0, 3, 2, {
      title: 'Orders vs yesterday',
      path: 'count',
      function: 'sum',
      subtype: 'split',
      diff: true,
    }),
    at0('kpi-goal', 'kpi', 6, 0, 3, 2, {
      title: 'Orders per hour',
      path: 'count',
      function: 'mean',
      subtype: 'goal',
      goal_target: '20',
      goal_progress: true,
    }),
    at0('kpi-empty', 'kpi', 9, 0, 3, 2, { title: 'Refunds', path: 'nothing.here', function: 'sum' }),
    at0('ts-line', 'timeseries', 0, 2, 6, 3, {
      title: 'Requests',
      paths: ['requests.*'],
      chart_type: 'line',
      legend: true,
    }),
    at0('ts-area', 'timeseries', 6, 2, 6, 3, {
      title: 'Requests, stacked',
      paths: ['requests.api', 'requests.web'],
      chart_type: 'area',
      stacked: true,
    }),
    at0('ts-bar', 'timeseries', 0, 5, 6, 3, {
      title: 'Requests by hour',
      paths: ['requests'],
      chart_type: 'bar',
      y_label: 'requests',
    }),
    at0('ts-dots', 'timeseries', 6, 5, 3, 3, {
      title: 'Errors',
      paths: ['errors.api'],
      chart_type: 'dots',
      legend: false,
    }),
    at0('ts-norm', 'timeseries', 9, 5, 3, 3, {
      title: 'Share of requests',
      paths: ['requests.*'],
      chart_type: 'area',
      stacked: true,
      normalized: true,
    }),
    at0('ts-expr', 'timeseries', 0, 8, 6, 3, {
      title: 'API requests per order',
      series: [
        {
          kind: 'path',
          path: 'requests.api',
          expression: '',
          label: 'API',
          visible: false,
          color_selector: 'default.*',
        },
        {
          kind: 'path',
          path: 'count',
          expression: '',
          label: 'Orders',
          visible: false,
          color_selector: 'default.*',
        },
        {
          kind: 'expression',
          path: '',
          expression: 'a / b',
          label: 'API per order',
          visible: true,
          color_selector: 'default.2',
        },
      ],
      chart_type: 'line',
    }),
    at0('tbl-expr', 'table', 6, 8, 6, 3, {
      title: 'Ratio table',
      series: [
        { kind: 'path', path: 'requests.api', visible: false },
        { kind: 'path', path: 'count', visible: false },
        { kind: 'expression', expression: 'a / b', label: 'ratio' },
      ],
    }),
    at0('cat-bar', 'category', 0, 11, 4, 3, {
      title: 'Orders by country',
      path: 'country.*',
      chart_type: 'bar',
    }),
    at0('cat-pie', 'category', 4, 11, 4, 3, { title: 'Country share', path: 'country.*', chart_type: 'pie' }),
    at0('cat-donut', 'category', 8, 11, 4, 3, { title: 'Countries', path: 'country', chart_type: 'donut' }),
    at0('tbl', 'table', 0, 14, 8, 3, { title: 'Orders and API calls', paths: ['count', 'requests.api'] }),
    at0('list-alpha', 'list', 8, 14, 2, 3, {
      title: 'Countries A–Z',
      path: 'country.*',
      sort: 'alpha',
      limit: 2,
    }),
    at0('list-desc', 'list', 10, 14, 2, 3, { title: 'Top countries', path: 'country.*', sort: 'desc' }),
    at0('text-left', 'text', 0, 17, 4, 1, { title: 'Left', subtitle: 'aligned left', alignment: 'left' }),
    at0('text-center', 'text', 4, 17, 4, 1, {
      title: 'Shop overview',
      subtitle: 'All figures in the shop’s time zone',
    }),
    at0('text-right', 'text', 8, 17, 4, 1, { title: 'Right', subtitle: 'aligned right', alignment: 'right' }),
    at0('dist', 'distribution', 0, 18, 4, 3, {
      title: 'Latency (ms)',
      paths: ['latency'],
      designators: { horizontal: { type: 'custom', buckets: [10, 50, 100] } },
    }),
    at0('heat-matrix', 'heatmap', 4, 18, 4, 3, { title: 'Size × weight', paths: ['size'], mode: '3d' }),
    at0('heat-time', 'heatmap', 8, 18, 4, 3, { title: 'Requests by hour', paths: ['requests.*'] }),
    at0('grp', 'group', 0, 21, 12, 3, {
      title: 'Group',
      children: [
        {
          id: 'grp-kpi',
          type: 'kpi',
          title: 'Max orders in an hour',
          path: 'count',
          function: 'max',
          x: 0,
          y: 0,
          w: 4,
          h: 2,
        },
        {
          id: 'grp-text',
          type: 'text',
          title: 'Inside a group',
          subtitle: 'children share the data',
          x: 4,
          y: 0,
          w: 8,
          h: 2,
        },
      ],
    }),
    // Payloads the server refuses today but a renderer must survive (older or hand-made data).
    at0('bad-expr', 'table', 0, 24, 6, 2, {
      title: 'Half broken',
      series: [
        { kind: 'path', path: 'count' },
        { kind: 'expression', expression: 'a + zz' },
      ],
    }),
    at0('bad-type', 'gauge', 6, 24, 6, 2, { title: 'Unknown type' }),
    // One row high: the smallest cells still read.
    at0('kpi-small', 'kpi', 0, 26, 2, 1, {
      title: 'Small split',
      path: 'count',
      function: 'sum',
      subtype: 'split',
      size: 's',
    }),
    at0('kpi-small-goal', 'kpi', 2, 26, 2, 1, {
      title: 'Small goal',
      path: 'count',
      function: 'max',
      subtype: 'goal',
      goal_target: 30,
    }),
    at0('ts-small', 'timeseries', 4, 26, 4, 1, { title: 'Small chart', paths: ['count'] }),
    at0('list-small', 'list', 8, 26, 4, 1, { title: 'Small list', path: 'country.*' }),
  ];
}
