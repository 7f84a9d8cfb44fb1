// The demo's two dashboards. Together they use every widget type of SPEC 6 and its main options, so
// the demo doubles as a visual check of the interface: kpi number/split/goal with sparklines,
// timeseries line/area/bar/dots (stacked, normalized, legend), category bar/pie/donut over `.*`,
// table, list (sorted, limited), text, distribution, heatmap (2d and 3d), a group with children,
// Trifle `series` rows with expressions, and a segment in the key of the orders dashboard.
// Widgets that compute with expressions use the `series` form alone (as Trifle App writes them);
// the others use `path`/`paths`.
import { BASKET_ITEMS, BASKET_VALUES, COUNTRIES, LATENCY_BUCKETS, WEB_KEY } from './shop';

type Widget = Record<string, unknown>;

export interface DashboardSpec {
  name: string;
  key: string;
  default_timeframe: string;
  default_granularity: string;
  payload: { grid: Widget[] };
  segments: unknown[];
}

const path = (p: string, extra: Record<string, unknown> = {}) => ({ kind: 'path', path: p, ...extra });
const expression = (e: string, label: string, extra: Record<string, unknown> = {}) => ({
  kind: 'expression',
  expression: e,
  label,
  ...extra,
});
const box = (x: number, y: number, w: number, h: number) => ({ x, y, w, h });
const latencyDesignator = {
  type: 'custom',
  buckets: LATENCY_BUCKETS.map((b) => (b.endsWith('+') ? b : Number(b))),
  unit: 'ms',
};

/** `shop::web` over 7 days by the hour: the storefront's requests, errors, latency and gauges. */
export function trafficDashboard(): DashboardSpec {
  const grid: Widget[] = [
    {
      id: 'intro',
      type: 'text',
      title: 'Storefront traffic',
      subtitle:
        'Generated demo data: a database failover 9 days ago, a bad deploy 2 days ago, a newsletter campaign 5 days ago.',
      alignment: 'left',
      ...box(0, 0, 12, 1),
    },
    {
      id: 'requests-total',
      type: 'kpi',
      title: 'Requests',
      path: 'requests.count',
      function: 'sum',
      subtype: 'number',
      timeseries: true,
      ...box(0, 1, 3, 2),
    },
    {
      id: 'errors-split',
      type: 'kpi',
      title: 'Errors vs previous period',
      path: 'errors.count',
      function: 'sum',
      subtype: 'split',
      diff: true,
      timeseries: true,
      ...box(3, 1, 3, 2),
    },
    {
      id: 'latency-mean',
      type: 'kpi',
      title: 'Mean latency (ms)',
      function: 'mean',
      subtype: 'number',
      timeseries: true,
      series: [
        path('latency.sum', { visible: false }),
        path('latency.count', { visible: false }),
        expression('a / b', 'mean ms'),
      ],
      ...box(6, 1, 3, 2),
    },
    {
      id: 'users-peak',
      type: 'kpi',
      title: 'Peak active users',
      path: 'gauges.active_users',
      function: 'max',
      subtype: 'number',
      ...box(9, 1, 3, 2),
    },
    {
      id: 'status-area',
      type: 'timeseries',
      title: 'Requests by status',
      paths: ['requests.status.*'],
      chart_type: 'area',
      stacked: true,
      legend: true,
      ...box(0, 3, 8, 4),
    },
    {
      id: 'status-pie',
      type: 'category',
      title: 'Status codes',
      path: 'requests.status.*',
      chart_type: 'pie',
      ...box(8, 3, 4, 4),
    },
    {
      id: 'endpoint-mix',
      type: 'timeseries',
      title: 'Endpoint mix (share of requests)',
      paths: ['requests.endpoint.*'],
      chart_type: 'bar',
      stacked: true,
      normalized: true,
      legend: true,
      y_label: '%',
      ...box(0, 7, 6, 4),
    },
    {
      id: 'latency-line',
      type: 'timeseries',
      title: 'Mean latency',
      chart_type: 'line',
      legend: false,
      y_label: 'ms',
      series: [
        path('latency.sum', { visible: false }),
        path('latency.count', { visible: false }),
        expression('a / b', 'mean latency (ms)', { color_selector: 'default.0' }),
      ],
      ...box(6, 7, 6, 4),
    },
    {
      id: 'latency-dist',
      type: 'distribution',
      title: 'Latency distribution',
      paths: ['latency.dist'],
      mode: '2d',
      designators: { horizontal: latencyDesignator },
      ...box(0, 11, 6, 4),
    },
    {
      id: 'latency-heat',
      type: 'heatmap',
      title: 'Latency over time',
      paths: ['latency.dist'],
      mode: '2d',
      designators: { vertical: latencyDesignator },
      ...box(6, 11, 6, 4),
    },
    {
      id: 'server-errors',
      type: 'timeseries',
      title: 'Server errors (500, 503)',
      paths: ['requests.status.500', 'requests.status.503'],
      chart_type: 'dots',
      legend: true,
      ...box(0, 15, 6, 3),
    },
    {
      id: 'busiest',
      type: 'list',
      title: 'Busiest endpoints',
      path: 'requests.endpoint.*',
      sort: 'desc',
      limit: 4,
      ...box(6, 15, 3, 3),
    },
    {
      id: 'quietest',
      type: 'list',
      title: 'Quietest endpoints',
      path: 'requests.endpoint.*',
      sort: 'asc',
      limit: 3,
      ...box(9, 15, 3, 3),
    },
    {
      id: 'gauges',
      type: 'group',
      title: 'Infrastructure gauges (set with assert)',
      ...box(0, 18, 12, 4),
      children: [
        {
          id: 'users-now',
          type: 'kpi',
          title: 'Active users (mean)',
          path: 'gauges.active_users',
          function: 'mean',
          timeseries: true,
          ...box(0, 0, 3, 4),
        },
        {
          id: 'queue-depth',
          type: 'timeseries',
          title: 'Order queue depth',
          paths: ['gauges.queue_depth'],
          chart_type: 'line',
          legend: false,
          ...box(3, 0, 5, 4),
        },
        {
          id: 'cache-hit',
          type: 'timeseries',
          title: 'Cache hit ratio (%)',
          paths: ['gauges.cache_hit_ratio'],
          chart_type: 'area',
          legend: false,
          y_label: '%',
          ...box(8, 0, 4, 4),
        },
      ],
    },
    {
      id: 'numbers',
      type: 'table',
      title: 'Requests, errors and not found',
      paths: ['requests.count', 'errors.count', 'requests.status.404'],
      ...box(0, 22, 12, 3),
    },
  ];
  return {
    name: 'Shop traffic',
    key: WEB_KEY,
    default_timeframe: '7d',
    default_granularity: '1h',
    payload: { grid },
    segments: [],
  };
}

/** `shop::<country>::orders` over 30 days by the day, with the country as a segment. */
export function ordersDashboard(monthlyRevenueGoal: number): DashboardSpec {
  const grid: Widget[] = [
    {
      id: 'orders-intro',
      type: 'text',
      title: 'Orders',
      subtitle: 'Pick a country above; "all" sums them.',
      alignment: 'center',
      ...box(0, 0, 12, 1),
    },
    {
      id: 'revenue-goal',
      type: 'kpi',
      title: 'Revenue against the monthly goal (EUR)',
      path: 'orders.revenue',
      function: 'sum',
      subtype: 'goal',
      goal_target: monthlyRevenueGoal,
      goal_progress: true,
      timeseries: true,
      ...box(0, 1, 4, 2),
    },
    {
      id: 'orders-total',
      type: 'kpi',
      title: 'Orders',
      path: 'orders.count',
      function: 'sum',
      subtype: 'number',
      timeseries: true,
      ...box(4, 1, 2, 2),
    },
    {
      id: 'order-value',
      type: 'kpi',
      title: 'Average order value (EUR)',
      function: 'mean',
      series: [
        path('orders.revenue', { visible: false }),
        path('orders.count', { visible: false }),
        expression('a / b', 'EUR per order'),
      ],
      ...box(6, 1, 3, 2),
    },
    {
      id: 'conversion',
      type: 'kpi',
      title: 'Checkout conversion (%)',
      function: 'mean',
      series: [
        path('checkout.started', { visible: false }),
        path('checkout.completed', { visible: false }),
        expression('b / a * 100', 'conversion %'),
      ],
      ...box(9, 1, 3, 2),
    },
    {
      id: 'revenue-bars',
      type: 'timeseries',
      title: 'Revenue per day (EUR)',
      paths: ['orders.revenue'],
      chart_type: 'bar',
      legend: false,
      y_label: 'EUR',
      ...box(0, 3, 8, 4),
    },
    {
      id: 'payments',
      type: 'category',
      title: 'Payment methods',
      path: 'payment.*',
      chart_type: 'donut',
      ...box(8, 3, 4, 4),
    },
    {
      id: 'funnel',
      type: 'timeseries',
      title: 'Checkouts: completed and abandoned',
      chart_type: 'area',
      stacked: true,
      legend: true,
      series: [
        path('checkout.started', { visible: false }),
        path('checkout.completed', { label: 'completed' }),
        expression('a - b', 'abandoned'),
        expression('max(a - b, 0) / sqrt(max(a, 1))', 'abandonment z-score', { visible: false }),
      ],
      ...box(0, 7, 6, 4),
    },
    {
      id: 'channels',
      type: 'timeseries',
      title: 'Channel mix (share of orders)',
      paths: ['channel.*'],
      chart_type: 'line',
      normalized: true,
      legend: true,
      y_label: '%',
      ...box(6, 7, 6, 4),
    },
    {
      id: 'categories',
      type: 'category',
      title: 'Items by category',
      path: 'category.*',
      chart_type: 'bar',
      ...box(0, 11, 4, 4),
    },
    {
      id: 'basket',
      type: 'heatmap',
      title: 'Basket: items by order value (EUR)',
      paths: ['basket'],
      mode: '3d',
      designators: {
        horizontal: { type: 'custom', buckets: BASKET_VALUES, unit: 'EUR' },
        vertical: { type: 'custom', buckets: BASKET_ITEMS, unit: 'items' },
      },
      ...box(4, 11, 5, 4),
    },
    {
      id: 'countries',
      type: 'list',
      title: 'Orders by country (A-Z)',
      path: 'country.*',
      sort: 'alpha',
      ...box(9, 11, 3, 4),
    },
    {
      id: 'daily',
      type: 'table',
      title: 'Orders, revenue and refunds',
      paths: ['orders.count', 'orders.revenue', 'refunds.count'],
      ...box(0, 15, 12, 3),
    },
  ];
  const segments = [
    {
      name: 'country',
      label: 'Country',
      type: 'select',
      default_value: 'all',
      groups: [
        { label: 'Summary', items: [{ label: 'All countries', value: 'all' }] },
        { label: 'Countries', items: COUNTRIES.map((c) => ({ label: c.name, value: c.code })) },
      ],
    },
  ];
  return {
    name: 'Orders by country',
    key: 'shop::(?<country>[^:]+)::orders',
    default_timeframe: '30d',
    default_granularity: '1d',
    payload: { grid },
    segments,
  };
}
