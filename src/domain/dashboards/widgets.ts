// Widgets of `payload.grid` (SPEC 6): one valibot schema per type on top of the common fields.
// Errors are named `payload.grid[<widget id>].<field>` (the position `[n]` when the widget has no
// usable id); group children are `payload.grid[<group id>].children[<child id>].<field>`.
// Documented optional fields get their defaults written in; fields the service does not know are
// kept as sent, since clients store UI state in widgets.
import * as v from 'valibot';
import { ErrorBag, fieldPath } from './issues';
import { SERIES, checkSeriesRows, hasMetric } from './widget-series';

export const WIDGET_TYPES = [
  'kpi',
  'timeseries',
  'category',
  'table',
  'text',
  'list',
  'distribution',
  'heatmap',
  'group',
] as const;
export type WidgetType = (typeof WIDGET_TYPES)[number];

export const GRID_COLUMNS = 12;
// Trifle's defaults for a widget without a size.
const DEFAULT_W = 3;
const DEFAULT_H = 2;
const MAX_INT = 2_147_483_647;
const MAX_TEXT = 255;

type Widget = Record<string, unknown>;

const oneOf = <const T extends readonly string[]>(options: T) =>
  v.picklist(options, `must be one of ${options.join(', ')}`);
const text = v.string('must be a string');
const flag = v.boolean('must be true or false');
const int = (min: number) =>
  v.pipe(
    v.number('must be an integer'),
    v.integer('must be an integer'),
    v.minValue(min, min === 0 ? 'must be 0 or more' : `must be at least ${min}`),
    v.maxValue(MAX_INT, `must be at most ${MAX_INT}`),
  );

/**
 * A dot path into metric values: segments are non-empty; with `wildcard`, the last segment may be
 * `*` (`country.*`), anywhere else `*` is refused.
 */
export function isMetricPath(path: string, wildcard: boolean): boolean {
  if (path.length === 0 || path.length > MAX_TEXT) return false;
  const segments = path.split('.');
  const last = segments.length - 1;
  return segments.every((segment, i) => {
    if (segment === '') return false;
    if (!segment.includes('*')) return true;
    return wildcard && segment === '*' && i === last && last > 0;
  });
}

const metricPath = (wildcard: boolean) =>
  v.pipe(
    text,
    v.check(
      (s: string) => isMetricPath(s, wildcard),
      wildcard
        ? 'must be a dot path such as count or country.US; only a final .* wildcard is allowed'
        : 'must be a dot path such as count or country.US, without wildcards',
    ),
  );
const metricPaths = v.pipe(
  v.array(metricPath(true), 'must be a list of paths'),
  v.minLength(1, 'must list at least one path'),
);

const COMMON = {
  id: v.pipe(
    text,
    v.minLength(1, 'must not be empty'),
    v.maxLength(MAX_TEXT, `must be at most ${MAX_TEXT} characters`),
  ),
  type: oneOf(WIDGET_TYPES),
  title: v.optional(text, ''),
  x: v.optional(int(0), 0),
  y: v.optional(int(0), 0),
  w: v.optional(int(1), DEFAULT_W),
  h: v.optional(int(1), DEFAULT_H),
};

// Metric widgets name their data by `path`/`paths` or by Trifle's `series` rows (or both); which
// one is present is checked after the schema (checkMetric), so both stay optional here.
const METRIC_TYPES = new Set<WidgetType>([
  'kpi',
  'timeseries',
  'category',
  'table',
  'list',
  'distribution',
  'heatmap',
]);
const optionalPath = (wildcard: boolean) => v.optional(metricPath(wildcard));
const optionalPaths = v.optional(metricPaths);
// Trifle App stores the goal as the text typed in its form ("1200", "" for none).
const goalTarget = v.optional(
  v.nullable(v.union([v.pipe(v.number(), v.finite()), v.string()], 'must be a number')),
);
const bucketed = {
  paths: optionalPaths,
  series: SERIES,
  mode: v.optional(oneOf(['2d', '3d'])),
  designators: v.optional(v.looseObject({}, 'must be an object')),
};

const TYPE_FIELDS: Record<WidgetType, v.ObjectEntries> = {
  kpi: {
    path: optionalPath(false),
    series: SERIES,
    function: v.optional(oneOf(['sum', 'mean', 'min', 'max']), 'mean'),
    subtype: v.optional(oneOf(['number', 'split', 'goal']), 'number'),
    goal_target: goalTarget,
    diff: v.optional(flag),
    timeseries: v.optional(flag),
    goal_progress: v.optional(flag),
    goal_invert: v.optional(flag),
    // split: a fall is the good news (errors, latency): green down, red up
    lower_is_better: v.optional(flag),
  },
  timeseries: {
    paths: optionalPaths,
    series: SERIES,
    chart_type: v.optional(oneOf(['line', 'area', 'bar', 'dots']), 'line'),
    stacked: v.optional(flag, false),
    normalized: v.optional(flag, false),
    legend: v.optional(flag, true),
  },
  category: {
    path: optionalPath(true),
    series: SERIES,
    chart_type: v.optional(oneOf(['bar', 'pie', 'donut']), 'bar'),
  },
  table: { paths: optionalPaths, series: SERIES },
  text: {
    subtitle: v.optional(text, ''),
    alignment: v.optional(oneOf(['left', 'center', 'right']), 'center'),
  },
  list: {
    path: optionalPath(true),
    series: SERIES,
    // null is Trifle App's "no limit"
    limit: v.optional(v.nullable(int(1))),
    sort: v.optional(oneOf(['desc', 'asc', 'alpha', 'alpha_desc']), 'desc'),
  },
  distribution: bucketed,
  heatmap: bucketed,
  group: { children: v.optional(v.array(v.unknown(), 'must be a list of widgets'), () => []) },
};

type WidgetSchema = v.GenericSchema<unknown, Widget>;
const COMMON_SCHEMA: WidgetSchema = v.looseObject(COMMON);
const SCHEMAS = Object.fromEntries(
  WIDGET_TYPES.map((type): [WidgetType, WidgetSchema] => [
    type,
    v.looseObject({ ...COMMON, ...TYPE_FIELDS[type] }),
  ]),
) as Record<WidgetType, WidgetSchema>;

const isWidgetType = (value: unknown): value is WidgetType => WIDGET_TYPES.some((t) => t === value);
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface GridScope {
  bag: ErrorBag;
  /** widget ids met so far in the whole grid, children included */
  seen: Set<string>;
}

/** The name of a widget in error fields: its id when it has a usable one, else its position. */
function widgetField(prefix: string, widget: Record<string, unknown>, index: number): string {
  const id = widget.id;
  return typeof id === 'string' && id !== '' ? `${prefix}[${id}]` : fieldPath(prefix, index);
}

function checkWidget(raw: unknown, index: number, prefix: string, scope: GridScope, nested: boolean): Widget {
  if (!isObject(raw)) {
    scope.bag.add(fieldPath(prefix, index), 'must be a widget object');
    return {};
  }
  const field = widgetField(prefix, raw, index);
  const schema = isWidgetType(raw.type) ? SCHEMAS[raw.type] : COMMON_SCHEMA;
  const result = v.safeParse(schema, raw, { abortEarly: false });
  if (!result.success) scope.bag.addIssues(field, result.issues);
  const widget: Widget = result.success ? result.output : { ...raw };
  if (typeof raw.id === 'string' && raw.id !== '') {
    if (scope.seen.has(raw.id)) scope.bag.add(`${field}.id`, 'must be unique in the grid');
    scope.seen.add(raw.id);
  }
  checkGeometry(raw, field, scope.bag);
  if (isWidgetType(raw.type) && METRIC_TYPES.has(raw.type)) checkMetric(raw, raw.type, field, scope.bag);
  if (raw.type === 'group' && nested)
    scope.bag.add(`${field}.type`, 'must not be group inside a group (groups do not nest)');
  else if (raw.type === 'group' && Array.isArray(widget.children)) {
    widget.children = checkWidgets(widget.children, `${field}.children`, scope, true);
  }
  return widget;
}

// Checked on the raw widget, so a layout error shows up next to the widget's other errors.
function checkGeometry(raw: Widget, field: string, bag: ErrorBag): void {
  const x = raw.x === undefined ? 0 : raw.x;
  const w = raw.w === undefined ? DEFAULT_W : raw.w;
  if (!Number.isSafeInteger(x) || !Number.isSafeInteger(w)) return; // reported by the schema
  if ((x as number) + (w as number) > GRID_COLUMNS)
    bag.add(`${field}.w`, `x + w must be at most ${GRID_COLUMNS} (the grid has ${GRID_COLUMNS} columns)`);
}

// A metric widget needs a path, paths or at least one series row; series rows get their own checks.
// Run on the raw widget, so these errors come in the same answer as the schema's.
function checkMetric(widget: Widget, type: WidgetType, field: string, bag: ErrorBag): void {
  if (Array.isArray(widget.series)) checkSeriesRows(widget.series, `${field}.series`, bag);
  if (hasMetric(widget)) return;
  const name = type === 'kpi' || type === 'category' || type === 'list' ? 'path' : 'paths';
  bag.add(`${field}.${name}`, `is required (or series rows)`);
}

function checkWidgets(list: unknown[], prefix: string, scope: GridScope, nested: boolean): Widget[] {
  return list.map((raw, index) => checkWidget(raw, index, prefix, scope, nested));
}

/**
 * Checks `payload` (an object; `grid`, when present, a list of widgets) and returns it with the
 * widgets normalised. Problems go to `bag`; the returned value is only meaningful when it stays empty.
 */
export function normalizePayload(payload: unknown, bag: ErrorBag): Record<string, unknown> {
  if (!isObject(payload)) {
    bag.add('payload', 'must be an object');
    return {};
  }
  if (!('grid' in payload)) return { ...payload };
  if (!Array.isArray(payload.grid)) {
    bag.add('payload.grid', 'must be a list of widgets');
    return { ...payload };
  }
  const grid = checkWidgets(payload.grid, 'payload.grid', { bag, seen: new Set() }, false);
  return { ...payload, grid };
}
