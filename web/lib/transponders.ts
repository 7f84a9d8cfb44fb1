// A source's transponders for the interface (SPEC 15, docs/transponders.md): the list through the
// session routes (/api/v1/sources/:id/transponders), which of them apply to a key (the server's own
// key-pattern code, src/shared/key-pattern.ts), and a draft's preview over a read, evaluated with
// the server's own expression code (src/shared/expression.ts).
import { keyMatches } from '../../src/shared/key-pattern';
import { evaluateWith, expressionProblem, MAX_TRANSPONDER_PATHS } from '../../src/shared/expression';
import type { SeriesData } from '../widgets/types';
import { get } from './api';
import { leaf } from './series';

export interface Transponder {
  id: string;
  name: string;
  key: string;
  config: { paths: string[]; expression: string; response: string };
  enabled: boolean;
  order: number;
}

export const transpondersPath = (sourceId: string) => `/sources/${sourceId}/transponders`;

export const loadTransponders = (sourceId: string, signal?: AbortSignal) =>
  get<Transponder[]>(transpondersPath(sourceId), { signal });

/** Whether `t`'s key applies to `key` (a refused pattern applies to none, as on the server). */
export function applies(t: Pick<Transponder, 'key'>, key: string): boolean {
  try {
    return keyMatches(t.key, key);
  } catch {
    return false;
  }
}

/** The response paths of the enabled transponders that apply to `key`: the derived paths, by path. */
export function derivedPaths(list: readonly Transponder[] | null, key: string | null): Map<string, string> {
  const out = new Map<string, string>();
  if (!list || !key) return out;
  for (const t of list) if (t.enabled && applies(t, key)) out.set(t.config.response, t.name);
  return out;
}

/** The paths seen in the data and the derived ones, sorted, each once. */
export function withDerived(paths: readonly string[], derived: ReadonlyMap<string, string>): string[] {
  return [...new Set([...paths, ...derived.keys()])].sort();
}

export interface PreviewRow {
  at: string;
  inputs: Array<number | null>;
  value: number | null;
}

/** The expression's problem over `pathCount` paths (the server's message), or null. */
export const draftProblem = (expression: string, pathCount: number): string | null =>
  pathCount === 0
    ? 'Add at least one path'
    : pathCount > MAX_TRANSPONDER_PATHS
      ? `At most ${MAX_TRANSPONDER_PATHS} paths`
      : expressionProblem(expression, pathCount, "the paths' variables");

/**
 * A draft over a read, newest bucket first: the paths' numbers and the expression's value (null:
 * no value, the bucket left as it was). Buckets where no path has a number are left out.
 */
export function previewRows(
  series: SeriesData,
  paths: readonly string[],
  evaluate: (values: Array<number | null>) => number | null,
): PreviewRow[] {
  const rows: PreviewRow[] = [];
  for (let i = series.values.length - 1; i >= 0; i--) {
    const inputs = paths.map((p) => leaf(series.values[i] ?? {}, p));
    if (inputs.every((v) => v === null)) continue;
    rows.push({ at: series.atText[i] ?? '', inputs, value: evaluate(inputs) });
  }
  return rows;
}

export { evaluateWith };
