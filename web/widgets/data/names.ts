// Short series names: when the unlabelled path entries of one widget share a dotted prefix
// (`requests.status.200`, `requests.status.201`), they are named by the distinct part (`200`, `201`)
// and the prefix is shown once by the widget. Labelled rows and expressions keep their names.
import type { Entry } from './rows';

export interface ShortNames<T extends Entry> {
  /** the shared prefix with its final dot (`requests.status.`), or '' when nothing was shortened */
  prefix: string;
  entries: T[];
}

/** An entry named by its own path (no label, not an expression). */
const namedByPath = (e: Entry): boolean => e.name === e.source;

export function shortNames<T extends Entry>(entries: readonly T[]): ShortNames<T> {
  const byPath = entries.filter(namedByPath);
  if (byPath.length < 2) return { prefix: '', entries: [...entries] };
  let common = byPath[0]!.source.split('.');
  for (const e of byPath.slice(1)) {
    const parts = e.source.split('.');
    let n = 0;
    while (n < common.length && n < parts.length - 1 && common[n] === parts[n]) n++;
    common = common.slice(0, n);
  }
  // Every entry must keep at least one segment of its own.
  common = common.slice(0, Math.min(common.length, ...byPath.map((e) => e.source.split('.').length - 1)));
  if (common.length === 0) return { prefix: '', entries: [...entries] };
  const prefix = common.join('.') + '.';
  return {
    prefix,
    entries: entries.map((e) => (namedByPath(e) ? { ...e, name: e.source.slice(prefix.length) } : e)),
  };
}
