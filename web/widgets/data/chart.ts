// What a time chart plots: the shown entries (the legend can hide some) as columns, normalized to
// 100 % per bucket and/or stacked as running totals when the widget asks for it.
import { normalizeSeries, stackSeries } from './stack';
import type { Entry } from './rows';

export interface ChartColumns {
  shown: Entry[];
  /** what is plotted, one column per shown entry */
  plotted: Array<Array<number | null>>;
  /** the values before stacking (normalized when asked), for read-outs */
  raw: Array<Array<number | null>>;
}

export function chartColumns(entries: readonly Entry[], hidden: ReadonlySet<string>, opts: { stacked: boolean; normalized: boolean }): ChartColumns {
  const shown = entries.filter((e) => !hidden.has(entryKey(e)));
  const values = shown.map((e) => e.values);
  const raw = opts.normalized ? normalizeSeries(values) : values.map((v) => [...v]);
  return { shown, raw, plotted: opts.stacked ? stackSeries(raw) : raw };
}

/** A stable key of an entry for the legend's hidden set. */
export const entryKey = (e: Entry): string => `${e.name}\u0000${e.source}`;
