// A KPI's figures: the first visible entry aggregated over the range (Trifle App's rule: a KPI shows
// the first visible resolved series), the same over the previous period for `split`, and the
// progress to `goal_target` for `goal`.
import type { SeriesData } from '../types';
import { percentChange } from './format';
import { visibleEntries, type Entry } from './rows';
import { aggregate, toFunction, widgetTimeline, type AggregateFunction, type WidgetData } from './series';

export interface KpiFigures {
  fn: AggregateFunction;
  entry: Entry | null;
  value: number | null;
  /** split: the previous period's value; undefined while it loads */
  previous?: number | null;
  change?: number | null;
  diff?: number | null;
  /** goal */
  target?: number | null;
  progress?: number | null;
}

/** goal_target as Trifle stores it: a number, or the text typed in a form ("1,200", "" for none). */
export function toTarget(raw: unknown): number | null {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : null;
  if (typeof raw !== 'string' || raw.trim() === '') return null;
  const n = Number(raw.replace(/[,_\s]/g, ''));
  return Number.isFinite(n) ? n : null;
}

const firstEntry = (data: WidgetData): Entry | null =>
  visibleEntries(data.resolved).find((e) => e.values.some((v) => v !== null)) ?? null;

export function kpiFigures(widget: Record<string, unknown>, series: SeriesData, previous: SeriesData | null): KpiFigures & { data: WidgetData } {
  const fn = toFunction(widget.function);
  const data = widgetTimeline(widget, series);
  const entry = firstEntry(data);
  const value = entry ? aggregate(entry.values, fn) : null;
  const figures: KpiFigures & { data: WidgetData } = { fn, entry, value, data };
  if (widget.subtype === 'split' && previous) {
    const before = visibleEntries(widgetTimeline(widget, previous).resolved).find((e) => e.name === entry?.name) ?? null;
    figures.previous = before ? aggregate(before.values, fn) : null;
    figures.change = percentChange(value, figures.previous);
    figures.diff = value !== null && figures.previous !== null ? value - figures.previous : null;
  }
  if (widget.subtype === 'goal') {
    figures.target = toTarget(widget.goal_target);
    figures.progress = value !== null && figures.target ? value / figures.target : null;
  }
  return figures;
}
