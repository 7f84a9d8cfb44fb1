// The boundary between the interface's shell (pages, data loading, time controls, editing) and the
// widget renderers: the shell reads the dashboard key's series once per refresh and hands every
// widget the same data; a widget computes what it shows from it and never fetches.

/** A series as `GET /api/v1/metrics` returns it, with the bucket starts also parsed. */
export interface SeriesData {
  /** bucket starts, epoch ms, ascending */
  at: number[];
  /** the same starts as the server wrote them (RFC 3339 in the source's zone) */
  atText: string[];
  /** one nested map of numbers per bucket; `{}` when empty */
  values: Record<string, unknown>[];
}

/** A widget object of `payload.grid` (SPEC 6), as stored. Type-specific fields stay loose. */
export interface WidgetConfig {
  id: string;
  type: string;
  title?: string;
  x: number;
  y: number;
  w: number;
  h: number;
  [field: string]: unknown;
}

export interface TimeRange {
  /** epoch ms, inclusive */
  from: number;
  /** epoch ms, inclusive */
  to: number;
  /** granularity text, e.g. `1h` */
  granularity: string;
}

export interface WidgetContext {
  /** the dashboard key's series over the view range */
  series: SeriesData;
  /** the same span just before the view range (kpi `split` compares against it); null while loading */
  previous: SeriesData | null;
  range: TimeRange;
  /** the source's IANA zone: axes and labels are drawn in it */
  timeZone: string;
  /** epoch ms of this refresh: the bucket holding it is still filling and is shaded */
  now: number;
  theme: 'light' | 'dark';
  /** drag across a time chart: the shell zooms the whole dashboard to [from, to] */
  onZoom?: (from: number, to: number) => void;
  /** charts with the same key move their cursors together */
  cursorSyncKey: string;
  /** monitors watching the dashboard's key (its threshold drawn on the widgets showing its path) */
  monitors?: WidgetMonitor[];
}

/** A monitor as a dashboard marks it: on the widgets that show its path. */
export interface WidgetMonitor {
  id: string;
  name: string;
  path: string;
  firing: boolean;
  /** constant lines of its rule (a threshold, a range's ends) */
  lines: { value: number; label: string }[];
}

/** What the shell passes to the widget renderer for one grid cell. */
export interface WidgetViewProps {
  widget: WidgetConfig;
  ctx: WidgetContext;
  /** the series failed to load: the widget shows this message in its error state */
  error?: string | null;
  /** the series is loading (first load): the widget shows a skeleton */
  loading?: boolean;
}
