// The reference dashboard of bench/ui.ts and bench/ui-profile.ts (SPEC 10).
/** Twelve widgets on the shop's traffic key, 7 days by the hour: the SPEC's reference dashboard. */
export function benchGridFor() {
  const at = (i: number, w: number, h: number) => ({ x: (i % 4) * 3, y: Math.floor(i / 4) * 4, w, h });
  const widgets = [
    { type: 'kpi', path: 'requests.count', function: 'sum', timeseries: true },
    { type: 'kpi', path: 'errors.count', function: 'sum', subtype: 'split', timeseries: true },
    { type: 'kpi', path: 'gauges.active_users', function: 'max' },
    { type: 'kpi', path: 'latency.count', function: 'sum', subtype: 'goal', goal_target: 1_000_000 },
    { type: 'timeseries', paths: ['requests.status.*'], chart_type: 'area', stacked: true },
    {
      type: 'timeseries',
      paths: ['requests.endpoint.*'],
      chart_type: 'bar',
      stacked: true,
      normalized: true,
    },
    { type: 'timeseries', paths: ['gauges.queue_depth'], chart_type: 'line' },
    { type: 'timeseries', paths: ['requests.status.500', 'requests.status.503'], chart_type: 'dots' },
    { type: 'category', path: 'requests.status.*', chart_type: 'donut' },
    { type: 'list', path: 'requests.endpoint.*', sort: 'desc', limit: 5 },
    { type: 'table', paths: ['requests.count', 'errors.count'] },
    { type: 'heatmap', paths: ['latency.dist'], mode: '2d' },
  ];
  return widgets.map((w, i) => ({ id: `w${i + 1}`, title: `${w.type} ${i + 1}`, ...at(i, 3, 4), ...w }));
}
