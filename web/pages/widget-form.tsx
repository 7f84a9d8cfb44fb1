// The form of one widget: its type's fields, with path fields offering the paths seen in the
// dashboard's data (collectPaths), and its place on the grid.
import { useState } from 'preact/hooks';
import type { ComponentChildren } from 'preact';
import type { WidgetConfig } from '../widgets/types';
import { firstFree } from '../lib/grid-layout';

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

type FieldSpec =
  | {
      kind: 'path' | 'paths' | 'text' | 'number' | 'flag';
      name: string;
      label: string;
      /** a flag's value when the field is absent */ fallback?: boolean;
    }
  | { kind: 'choice'; name: string; label: string; options: string[] };

const SPECS: Record<string, FieldSpec[]> = {
  kpi: [
    { kind: 'path', name: 'path', label: 'Path' },
    { kind: 'choice', name: 'function', label: 'Function', options: ['mean', 'sum', 'min', 'max'] },
    { kind: 'choice', name: 'subtype', label: 'Show', options: ['number', 'split', 'goal'] },
    { kind: 'number', name: 'goal_target', label: 'Goal target' },
    { kind: 'flag', name: 'goal_invert', label: 'Goal met at or below the target' },
    { kind: 'flag', name: 'lower_is_better', label: 'Lower is better (a fall shows green)' },
    { kind: 'flag', name: 'timeseries', label: 'Sparkline' },
    { kind: 'flag', name: 'diff', label: 'Show change' },
  ],
  timeseries: [
    { kind: 'paths', name: 'paths', label: 'Paths' },
    { kind: 'choice', name: 'chart_type', label: 'Chart', options: ['line', 'area', 'bar', 'dots'] },
    { kind: 'flag', name: 'stacked', label: 'Stacked' },
    { kind: 'flag', name: 'normalized', label: 'Normalized' },
    { kind: 'flag', name: 'legend', label: 'Legend', fallback: true },
  ],
  category: [
    { kind: 'path', name: 'path', label: 'Path (may end in .*)' },
    { kind: 'choice', name: 'chart_type', label: 'Chart', options: ['bar', 'pie', 'donut'] },
  ],
  table: [{ kind: 'paths', name: 'paths', label: 'Paths' }],
  text: [
    { kind: 'text', name: 'subtitle', label: 'Text' },
    { kind: 'choice', name: 'alignment', label: 'Alignment', options: ['center', 'left', 'right'] },
  ],
  list: [
    { kind: 'path', name: 'path', label: 'Path (ending in .*)' },
    { kind: 'number', name: 'limit', label: 'Limit' },
    { kind: 'choice', name: 'sort', label: 'Sort', options: ['desc', 'asc', 'alpha', 'alpha_desc'] },
  ],
  distribution: [{ kind: 'paths', name: 'paths', label: 'Paths' }],
  heatmap: [{ kind: 'paths', name: 'paths', label: 'Paths' }],
  group: [],
};

/** A new widget of a type, placed below everything else. */
export function newWidget(type: string, grid: WidgetConfig[]): WidgetConfig {
  const taken = new Set(grid.map((w) => w.id));
  let n = grid.length + 1;
  while (taken.has(`${type}-${n}`)) n++;
  const small = type === 'kpi' || type === 'text';
  const [w, h] = small ? [3, 2] : [6, 3];
  // The first free space of the grid (web/lib/grid-layout.ts), top to bottom, left to right.
  const base: WidgetConfig = { id: `${type}-${n}`, type, title: '', ...firstFree(grid, w, h), w, h };
  if (type === 'kpi') return { ...base, path: '', function: 'sum' };
  if (SPECS[type]?.some((f) => f.name === 'paths')) return { ...base, paths: [''] };
  if (type === 'group') return { ...base, children: [] };
  return base;
}

function FieldInput({
  spec,
  widget,
  set,
  listId,
}: {
  spec: FieldSpec;
  widget: WidgetConfig;
  set: (name: string, value: unknown) => void;
  listId: string;
}) {
  const value = widget[spec.name];
  if (spec.kind === 'flag') {
    return (
      <label>
        <input
          type="checkbox"
          name={spec.name}
          checked={
            value === undefined || value === null
              ? spec.fallback === true
              : value === true || value === 'true'
          }
          onChange={(e) => set(spec.name, (e.target as HTMLInputElement).checked)}
        />
        {spec.label}
      </label>
    );
  }
  if (spec.kind === 'paths') {
    const paths = Array.isArray(value) ? (value as string[]) : [''];
    return (
      <fieldset class="wide stack" style={{ border: 0, padding: 0, margin: 0, gap: '4px' }}>
        <legend class="muted">{spec.label}</legend>
        {paths.map((p, i) => (
          <div class="row" key={i}>
            <input
              name={`paths-${i}`}
              aria-label={`Path ${i + 1}`}
              list={listId}
              value={p}
              style={{ flex: 1 }}
              onInput={(e) =>
                set(
                  'paths',
                  paths.map((old, j) => (j === i ? (e.target as HTMLInputElement).value : old)),
                )
              }
            />
            <button
              type="button"
              class="icon"
              aria-label={`Remove path ${i + 1}`}
              disabled={paths.length === 1}
              onClick={() =>
                set(
                  'paths',
                  paths.filter((_, j) => j !== i),
                )
              }
            >
              ✕
            </button>
          </div>
        ))}
        <div>
          <button type="button" onClick={() => set('paths', [...paths, ''])}>
            Add path
          </button>
        </div>
      </fieldset>
    );
  }
  if (spec.kind === 'choice') {
    return (
      <label class="field">
        {spec.label}
        <select
          name={spec.name}
          value={String(value ?? spec.options[0])}
          onChange={(e) => set(spec.name, (e.target as HTMLSelectElement).value)}
        >
          {spec.options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </label>
    );
  }
  const isNumber = spec.kind === 'number';
  return (
    <label class={`field${spec.kind === 'text' ? ' wide' : ''}`}>
      {spec.label}
      <input
        name={spec.name}
        type={isNumber ? 'number' : 'text'}
        list={spec.kind === 'path' ? listId : undefined}
        value={value === undefined || value === null ? '' : String(value)}
        onInput={(e) => {
          const text = (e.target as HTMLInputElement).value;
          set(spec.name, isNumber ? (text === '' ? undefined : Number(text)) : text);
        }}
      />
    </label>
  );
}

type RawRow = Record<string, unknown>;
const rowText = (row: RawRow, name: string) =>
  typeof row[name] === 'string' || typeof row[name] === 'number' ? String(row[name]) : '';
const isExpression = (row: RawRow) => rowText(row, 'kind').toLowerCase() === 'expression';

/** Trifle `series` rows: kind, path or expression, label, visible. Other fields of a row (color,
 * color_selector, ...) are kept as they were. Rows are named a, b, c, ... for expressions. */
function SeriesRows({
  rows,
  set,
  listId,
}: {
  rows: RawRow[];
  set: (rows: RawRow[]) => void;
  listId: string;
}) {
  const change = (i: number, patch: RawRow) =>
    set(rows.map((row, j) => (j === i ? { ...row, ...patch } : row)));
  const letter = (i: number) => String.fromCharCode(97 + i);
  return (
    <fieldset class="wide series-rows" aria-label="Series rows">
      <legend class="muted">
        Series rows <span class="series-rows__hint">(expressions name earlier rows a, b, c…)</span>
      </legend>
      {rows.map((row, i) => {
        const expr = isExpression(row);
        const n = i + 1;
        return (
          <div class="series-row" key={i} data-series-row={i}>
            <span class="series-row__letter" aria-hidden="true">
              {letter(i)}
            </span>
            <select
              aria-label={`Row ${n} kind`}
              name={`series-${i}-kind`}
              value={expr ? 'expression' : 'path'}
              onChange={(e) => {
                const kind = (e.target as HTMLSelectElement).value;
                const { path: _p, expression: _e, ...rest } = row;
                set(
                  rows.map((r, j) =>
                    j === i
                      ? kind === 'expression'
                        ? { ...rest, kind, expression: '' }
                        : { ...rest, kind, path: '' }
                      : r,
                  ),
                );
              }}
            >
              <option value="path">path</option>
              <option value="expression">expression</option>
            </select>
            <input
              class="series-row__source"
              aria-label={expr ? `Row ${n} expression` : `Row ${n} path`}
              name={`series-${i}-${expr ? 'expression' : 'path'}`}
              list={expr ? undefined : listId}
              placeholder={expr ? 'a / b' : 'path.to.value'}
              value={rowText(row, expr ? 'expression' : 'path')}
              onInput={(e) =>
                change(i, { [expr ? 'expression' : 'path']: (e.target as HTMLInputElement).value })
              }
            />
            <input
              class="series-row__label"
              aria-label={`Row ${n} label`}
              name={`series-${i}-label`}
              placeholder="label"
              value={rowText(row, 'label')}
              onInput={(e) => change(i, { label: (e.target as HTMLInputElement).value })}
            />
            <label class="series-row__visible" title="Drawn (hidden rows still feed expressions)">
              <input
                type="checkbox"
                name={`series-${i}-visible`}
                checked={row.visible !== false && row.visible !== 'false'}
                onChange={(e) => change(i, { visible: (e.target as HTMLInputElement).checked })}
              />
              shown
            </label>
            <button
              type="button"
              class="icon"
              aria-label={`Remove row ${n}`}
              disabled={rows.length === 1}
              onClick={() => set(rows.filter((_, j) => j !== i))}
            >
              ✕
            </button>
          </div>
        );
      })}
      <div class="row">
        <button type="button" onClick={() => set([...rows, { kind: 'path', path: '', visible: true }])}>
          Add path row
        </button>
        <button
          type="button"
          onClick={() => set([...rows, { kind: 'expression', expression: '', visible: true }])}
        >
          Add expression row
        </button>
      </div>
    </fieldset>
  );
}

/** Drops rows left empty; trims what was typed. */
function cleanRows(rows: RawRow[]): RawRow[] {
  return rows
    .map((row) => {
      const out: RawRow = { ...row };
      for (const k of ['path', 'expression', 'label'])
        if (typeof out[k] === 'string') out[k] = (out[k] as string).trim();
      if (out.label === '') delete out.label;
      return out;
    })
    .filter((row) => rowText(row, isExpression(row) ? 'expression' : 'path') || rowText(row, 'label'));
}

const hasSeries = (w: WidgetConfig) => Array.isArray(w.series) && w.series.length > 0;
const PATH_FIELDS = new Set(['path', 'paths']);

const GEOMETRY = ['x', 'y', 'w', 'h'] as const;

export function WidgetForm({
  initial,
  paths,
  derived,
  onSave,
  onCancel,
  preview,
}: {
  initial: WidgetConfig;
  paths: string[];
  /** derived paths (transponders' responses), with the transponder that writes each: marked in the list */
  derived?: ReadonlyMap<string, string>;
  onSave: (w: WidgetConfig) => void;
  onCancel: () => void;
  /** draws the widget as it is being edited (the dashboard's data), above the fields */
  preview?: (w: WidgetConfig) => ComponentChildren;
}) {
  const [widget, setWidget] = useState<WidgetConfig>(initial);
  const set = (name: string, value: unknown) => setWidget((w) => ({ ...w, [name]: value }));
  const listId = `paths-${initial.id}`;
  // A widget with `series` rows draws them (they win over path/paths), so the form edits them.
  const seriesForm = hasSeries(widget);
  const metric = (SPECS[widget.type] ?? []).some((spec) => PATH_FIELDS.has(spec.name));
  /** path/paths become series rows (for expressions and labels), in the same order. */
  const toSeries = () =>
    setWidget((w) => {
      const list = Array.isArray(w.paths)
        ? (w.paths as unknown[])
        : typeof w.path === 'string'
          ? [w.path]
          : [];
      const rows = list
        .map((p) => String(p).trim())
        .filter(Boolean)
        .map((path) => ({ kind: 'path', path, visible: true }));
      const { path: _path, paths: _paths, ...rest } = w;
      return {
        ...rest,
        series: rows.length ? rows : [{ kind: 'path', path: '', visible: true }],
      } as WidgetConfig;
    });
  const submit = (e: Event) => {
    e.preventDefault();
    const clean: WidgetConfig = { ...widget };
    if (Array.isArray(clean.paths))
      clean.paths = (clean.paths as string[]).map((p) => p.trim()).filter(Boolean);
    if (seriesForm) clean.series = cleanRows(clean.series as RawRow[]);
    for (const [k, v] of Object.entries(clean)) if (v === undefined) delete clean[k];
    onSave(clean);
  };
  return (
    <form class="stack" onSubmit={submit} aria-label="Widget">
      <h2>{initial.title ? `Edit ${initial.title}` : `Widget ${initial.id}`}</h2>
      {preview && (
        <div class="widget-preview" aria-label="Preview" role="group">
          {preview(widget)}
        </div>
      )}
      <datalist id={listId}>
        {paths.map((p) =>
          derived?.has(p) ? (
            <option key={p} value={p} label={`derived by ${derived.get(p)}`} data-derived="" />
          ) : (
            <option key={p} value={p} />
          ),
        )}
      </datalist>
      <div class="form-grid">
        <label class="field wide">
          Title
          <input
            name="title"
            value={widget.title ?? ''}
            onInput={(e) => set('title', (e.target as HTMLInputElement).value)}
            maxLength={255}
          />
        </label>
        {seriesForm && (
          <SeriesRows rows={widget.series as RawRow[]} set={(rows) => set('series', rows)} listId={listId} />
        )}
        {(SPECS[widget.type] ?? [])
          .filter((spec) => !(seriesForm && PATH_FIELDS.has(spec.name)))
          .map((spec) => (
            <FieldInput key={spec.name} spec={spec} widget={widget} set={set} listId={listId} />
          ))}
        {!seriesForm && metric && (
          <p class="wide muted form-note">
            Need an expression (<code>a / b</code>) or labels?{' '}
            <button type="button" class="link" onClick={toSeries}>
              Use series rows
            </button>
          </p>
        )}
        {GEOMETRY.map((g) => (
          <label class="field" key={g}>
            {{ x: 'Column (0–11)', y: 'Row', w: 'Width (columns)', h: 'Height (rows)' }[g]}
            <input
              name={g}
              type="number"
              min={g === 'w' || g === 'h' ? 1 : 0}
              max={g === 'x' ? 11 : g === 'w' ? 12 : undefined}
              value={widget[g]}
              onInput={(e) => set(g, Number((e.target as HTMLInputElement).value))}
            />
          </label>
        ))}
      </div>
      {paths.length === 0 && <p class="muted">No paths in the current range's data to suggest; type them.</p>}
      <div class="row">
        <button type="submit" class="primary">
          Apply
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
