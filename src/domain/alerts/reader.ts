// Reads what a monitor watches, through the same series reads as the metrics endpoints and the
// dashboards (domain/metrics/query: the store's range read, transponders applied, the query maths'
// column scan): the keys of a key pattern (from the system key's `keys.*` counts over the window)
// and, per key, the watched row's value in every completed bucket. One reader serves one round, so
// monitors on the same key and window share one read; a round reads its keys ahead (`prefetch`) in
// multi-key reads, one request to the metric writer per READ_SLICE_KEYS keys. The system key is read
// one bucket at a time (each bucket holds a count per key: thousands of leaves to parse), with a
// pause between buckets; a pattern's matches are kept between rounds while the window's keys are
// the same (KeyMatches), so a round does not run every pattern against every key again.
import type { Source } from '../types';
import type { SeriesParams, SeriesText } from '../metrics/query/series';
import { scanSeries } from '../metrics/query/columns';
import { SYSTEM_KEY } from '../metrics/merge';
import { bucketRange, createBucketer, type Granularity } from '../../model/time/granularity';
import { forEachLeaf, isMap } from '../../model/paths';
import { evaluateWith } from '../../shared/expression';
import type { MonitorPlan } from './plan';
import { matchKey } from './plan';
import { MAX_INSTANCES } from './limits';

export interface SeriesReader {
  readSeries(source: Source, params: SeriesParams): Promise<SeriesText>;
  /** readSeries of many keys over one range in one round trip (the metrics engine); else key by key */
  readSeriesMany?(
    source: Source,
    keys: readonly string[],
    params: Omit<SeriesParams, 'key'>,
  ): Promise<SeriesText[]>;
}

/**
 * keys read in one multi-key read: the read's rows and their assembly are one synchronous step of
 * the event loop, about 1 ms for 32 keys of 10 buckets while the writer holds unfolded parts; 16
 * keys keep it near the round's 1 ms turns (pace.ts)
 */
export const READ_SLICE_KEYS = 16;

/** A round's pace (pace.ts Pacer): turns with pauses between them, and waits for reads. */
export interface Pace {
  turn(): Promise<void>;
  wait<T>(read: Promise<T>): Promise<T>;
}
const noPace: Pace = { turn: () => Promise.resolve(), wait: (read) => read };

export interface KeyMatch {
  key: string;
  labels: Record<string, string>;
}

/**
 * Kept by the evaluator between rounds: the keys written in each kind of window (source,
 * granularity, bucket count) as the last round saw them, and each pattern's matches among them.
 * When a round finds the same keys again it gets the same array back, and a pattern (the RegExp of a
 * kept plan) matched against that array answers from its last matching instead of running again
 * over thousands of keys. A new or vanished key makes a new array: every pattern matches it afresh.
 */
export class KeyMatches {
  private lists = new Map<string, string[]>();
  private seen = new Map<string, string[]>();
  private readonly matches = new WeakMap<RegExp, { keys: readonly string[]; found: KeyMatch[] }>();

  /** `keys` (sorted), or the last round's array when it holds the same keys. */
  intern(name: string, keys: string[]): string[] {
    const last = this.seen.get(name) ?? this.lists.get(name);
    const kept = last && sameKeys(last, keys) ? last : keys;
    this.seen.set(name, kept);
    return kept;
  }

  /** Forgets the lists no window of the round asked for. */
  endRound(): void {
    this.lists = this.seen;
    this.seen = new Map();
  }

  /** The keys matching `pattern`, in key order, at most MAX_INSTANCES (the answer is shared: read only). */
  match(pattern: RegExp, keys: readonly string[]): KeyMatch[] {
    const known = this.matches.get(pattern);
    if (known && known.keys === keys) return known.found;
    const found: KeyMatch[] = [];
    for (const key of keys) {
      const labels = matchKey(pattern, key);
      if (labels) found.push({ key, labels });
      if (found.length >= MAX_INSTANCES) break;
    }
    this.matches.set(pattern, { keys, found });
    return found;
  }
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface Window {
  granularity: Granularity;
  fromMs: number;
  /** the start of the bucket being filled: buckets before it are complete */
  endMs: number;
  bucketsMs: number[];
}

/** The completed buckets of `timeframeMs` before `now` (or of from..to for a preview). */
export function windowOf(source: Source, g: Granularity, fromMs: number, nowMs: number): Window {
  const cal = { timeZone: source.timeZone, beginningOfWeek: source.beginningOfWeek };
  const endMs = createBucketer(g, cal)(nowMs);
  const bucketsMs = endMs - 1 >= fromMs ? (bucketRange(fromMs, endMs - 1, g, cal, 100_000) ?? []) : [];
  return { granularity: g, fromMs, endMs, bucketsMs };
}

export interface KeySeries {
  key: string;
  labels: Record<string, string>;
  at: number[];
  end: number;
  values: (number | null)[];
}

export class RoundReader {
  private readonly texts = new Map<string, Promise<SeriesText>>();
  /** the keys written in a window, per source and window (parsed once a round, not once a monitor) */
  private readonly written = new Map<string, Promise<string[]>>();
  constructor(
    private readonly metrics: SeriesReader,
    private readonly matches = new KeyMatches(),
    private readonly pace: Pace = noPace,
  ) {}

  private nameOf(source: Source, key: string, w: Window): string {
    return `${source.id}\u0000${key}\u0000${w.granularity.text}\u0000${w.bucketsMs[0]}\u0000${w.endMs}`;
  }

  private paramsOf(key: string, w: Window): SeriesParams {
    return {
      key,
      granularity: w.granularity,
      fromMs: w.bucketsMs[0] ?? w.fromMs,
      toMs: w.endMs - 1,
      range: { bucketsMs: w.bucketsMs },
    };
  }

  private read(source: Source, key: string, w: Window): Promise<SeriesText> {
    const name = this.nameOf(source, key, w);
    let pending = this.texts.get(name);
    if (!pending) {
      pending = this.metrics.readSeries(source, this.paramsOf(key, w));
      this.texts.set(name, pending);
    }
    return pending;
  }

  /**
   * Reads the series of many keys of one source and window ahead of `series`, in multi-key reads of
   * READ_SLICE_KEYS keys (one round trip to the metric writer each) with the round's pace between
   * them, so that requests waiting meanwhile are served. A failed read fails the keys of its slice
   * only (their `series` rejects).
   */
  async prefetch(source: Source, keys: readonly string[], w: Window): Promise<void> {
    const readMany = this.metrics.readSeriesMany?.bind(this.metrics);
    const todo = [...new Set(keys)].filter((key) => !this.texts.has(this.nameOf(source, key, w)));
    if (!readMany || todo.length === 0) return;
    const range = { bucketsMs: w.bucketsMs };
    for (let at = 0; at < todo.length; at += READ_SLICE_KEYS) {
      await this.pace.turn();
      const slice = todo.slice(at, at + READ_SLICE_KEYS);
      const { key: _key, ...params } = this.paramsOf('', w);
      const texts = readMany(source, slice, { ...params, range });
      // every key's promise settles with its slice's read; none is left rejected unobserved
      texts.catch(() => undefined);
      slice.forEach((key, i) => {
        const text = texts.then((all) => all[i]!);
        text.catch(() => undefined); // observed by `series`, which rejects with it
        this.texts.set(this.nameOf(source, key, w), text);
      });
      await this.pace.wait(texts.catch(() => undefined));
    }
  }

  /** The keys a plan watches in the window: its one key, or the keys its pattern matches (sorted, bounded). */
  async keys(source: Source, plan: MonitorPlan, w: Window): Promise<KeyMatch[]> {
    if (!plan.pattern) return [{ key: plan.key, labels: {} }];
    const name = `${source.id}\u0000${w.granularity.text}\u0000${w.bucketsMs[0]}\u0000${w.endMs}`;
    let keys = this.written.get(name);
    if (!keys) {
      keys = this.writtenKeys(source, w).then((written) =>
        this.matches.intern(
          `${source.id}\u0000${w.granularity.text}\u0000${w.bucketsMs.length}`,
          [...written].sort(),
        ),
      );
      this.written.set(name, keys);
    }
    return this.matches.match(plan.pattern, await this.pace.wait(keys));
  }

  /** The keys with a count in the window (the system key's `keys.*`), read a bucket at a time. */
  private async writtenKeys(source: Source, w: Window): Promise<Set<string>> {
    const seen = new Set<string>();
    for (let i = 0; i < w.bucketsMs.length; i++) {
      await this.pace.turn();
      const startMs = w.bucketsMs[i]!;
      const system = await this.pace.wait(
        this.metrics.readSeries(source, {
          key: SYSTEM_KEY,
          granularity: w.granularity,
          fromMs: startMs,
          toMs: (w.bucketsMs[i + 1] ?? w.endMs) - 1,
          range: { bucketsMs: [startMs] },
        }),
      );
      for (const value of system.values) {
        const parsed: unknown = typeof value === 'string' ? JSON.parse(value) : value;
        if (!isMap(parsed)) continue;
        forEachLeaf(parsed.keys, (path, count) => {
          if (count > 0) seen.add(path);
        });
      }
    }
    return seen;
  }

  /** The watched row's value per completed bucket of the window (null where missing). */
  async series(source: Source, plan: MonitorPlan, key: string, w: Window): Promise<(number | null)[]> {
    const text = await this.read(source, key, w);
    return watchedValues(plan, text.values, w.bucketsMs.length);
  }
}

/** The values of the watched row: a path's leaf, or an expression over the rows before it. */
export function watchedValues(
  plan: MonitorPlan,
  values: ReadonlyArray<string | Record<string, unknown>>,
  buckets: number,
): (number | null)[] {
  const paths = new Set(plan.rows.flatMap((row) => (row.kind === 'path' ? [row.path] : [])));
  const scan = scanSeries(values, (path) => paths.has(path));
  const byPath = new Map<string, (number | null)[]>();
  for (const column of scan.columns) {
    const dense = new Array<number | null>(buckets).fill(null);
    for (let k = 0; k < column.size; k++) dense[column.index[k]!] = column.value[k]!;
    byPath.set(column.path, dense);
  }
  const empty = () => new Array<number | null>(buckets).fill(null);
  const rows: (number | null)[][] = [];
  for (const row of plan.rows) {
    if (row.kind === 'path') rows.push(byPath.get(row.path) ?? empty());
    else {
      const computed = empty();
      for (let i = 0; i < buckets; i++)
        computed[i] = evaluateWith(
          row.expr,
          rows.map((r) => r[i]),
        );
      rows.push(computed);
    }
    if (rows.length > plan.watched) break;
  }
  return rows[plan.watched] ?? empty();
}
