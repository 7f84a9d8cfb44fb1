// StatsD's text protocol (UDP 8125): `name:value|type[|@rate][|#tag:value,tag]`, one metric a line,
// several lines a packet. Types: `c` counter (scaled up by its sample rate), `g` gauge (a leading
// `+` or `-` adjusts the last value instead of setting it), `ms` and `h` timers, `s` sets. The
// DogStatsD `#tags` section is read into series-key tags.
//
// StatsD samples carry no time: an aggregator (StatsdAggregator) collects them and its flush (every
// `flush_interval`, 10 s by default) turns what it holds into points at the flush time:
// - counter: track `{<field>: {count: Σ value / rate}}`
// - timer:   track `{<field>: {sum: Σ value / rate, count: Σ 1 / rate}}` (a true mean per bucket)
// - gauge:   track `{<field>: {sum: v, count: 1}}` and assert `{<field>: {last: v}}`, v the gauge's
//            value at the flush (gauges updated in the interval only)
// - set:     assert `{<field>: {unique: n}}`, n the distinct values seen in the interval
// The key and field come from the name as for Graphite: `app.api.requests` -> key `app::api`,
// field `requests`.
import { LineError } from './line-error';
import { graphiteKey } from './graphite';
import { acceptedTime, keyProblem, type IntakePoint } from './mapping';

export type StatsdType = 'c' | 'g' | 'ms' | 'h' | 's';

export interface StatsdSample {
  line: number;
  segments: string[];
  tags: Array<[string, string]>;
  type: StatsdType;
  /** the number (counters, gauges, timers) or the member (sets) */
  value: number | string;
  /** gauges only: `+`/`-` written before the value (adjust rather than set) */
  adjust: boolean;
  /** sample rate in (0, 1] */
  rate: number;
}

export class StatsdError extends LineError {}

export const STATSD_MAX_LINE_LENGTH = 8 * 1024;

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const TYPES = new Set<string>(['c', 'g', 'ms', 'h', 's']);

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function parseTags(raw: string): Array<[string, string]> {
  const tags = new Map<string, string>();
  for (const part of raw.split(',')) {
    if (part === '') continue;
    const colon = part.indexOf(':');
    if (colon === -1) tags.set(part, 'true');
    else tags.set(part.slice(0, colon), part.slice(colon + 1) || 'true');
  }
  return [...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function parseLine(content: string, line: number): StatsdSample {
  const colon = content.indexOf(':');
  if (colon <= 0) throw new StatsdError(line, `expected name:value|type, got ${clip(content)}`);
  const name = content.slice(0, colon);
  const segments = name.split('.').filter((s) => s !== '');
  if (segments.length === 0 || /\s/.test(name)) throw new StatsdError(line, `invalid name: ${clip(name)}`);
  const [rawValue = '', rawType = '', ...extras] = content.slice(colon + 1).split('|');
  if (!TYPES.has(rawType)) throw new StatsdError(line, `unknown type "${clip(rawType)}" (c, g, ms, h or s)`);
  const type = rawType as StatsdType;
  let rate = 1;
  let tags: Array<[string, string]> = [];
  for (const extra of extras) {
    if (extra.startsWith('@')) {
      rate = Number(extra.slice(1));
      if (!NUMBER.test(extra.slice(1)) || !(rate > 0 && rate <= 1))
        throw new StatsdError(line, `invalid sample rate: ${clip(extra)}`);
    } else if (extra.startsWith('#')) tags = parseTags(extra.slice(1));
    else if (extra !== '') throw new StatsdError(line, `unexpected section: ${clip(extra)}`);
  }
  if (type === 's') {
    if (rawValue === '') throw new StatsdError(line, 'missing set member');
    return { line, segments, tags, type, value: rawValue, adjust: false, rate };
  }
  if (!NUMBER.test(rawValue)) throw new StatsdError(line, `invalid value: ${clip(rawValue)}`);
  const value = Number(rawValue);
  if (!Number.isFinite(value)) throw new StatsdError(line, `value out of range: ${clip(rawValue)}`);
  const adjust = type === 'g' && (rawValue.startsWith('+') || rawValue.startsWith('-'));
  return { line, segments, tags, type, value, adjust, rate };
}

/** Parses a packet (or a stream's lines); blank lines are skipped. Throws StatsdError naming the line. */
export function parseStatsd(text: string, maxLineLength = STATSD_MAX_LINE_LENGTH): StatsdSample[] {
  const out: StatsdSample[] = [];
  let start = 0;
  let line = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    line++;
    if (end - start > maxLineLength)
      throw new StatsdError(line, `line longer than ${maxLineLength} characters`);
    const content = text.slice(start, end).trim();
    start = end + 1;
    if (content !== '') out.push(parseLine(content, line));
  }
  return out;
}

interface Entry {
  key: string;
  field: string;
}

/**
 * Holds StatsD samples between flushes. Gauges keep their value across flushes (an adjustment
 * applies to it), as StatsD's do; the rest starts again at every flush. In memory only, and per
 * process: a restart forgets the gauges' values and what was not flushed.
 */
export class StatsdAggregator {
  private readonly counters = new Map<string, Entry & { count: number }>();
  private readonly timers = new Map<string, Entry & { sum: number; count: number }>();
  private readonly gauges = new Map<string, Entry & { value: number; dirty: boolean }>();
  private readonly sets = new Map<string, Entry & { members: Set<string> }>();
  /** samples dropped: a key the write path would refuse, a gauge pushed out of the double range */
  dropped = 0;
  private readonly keyPrefix: string;
  /** the most distinct keys held at once, and set members per set (memory stays bounded) */
  private readonly maxEntries: number;

  constructor(options: { keyPrefix?: string; maxEntries?: number } = {}) {
    this.keyPrefix = options.keyPrefix ?? '';
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  private entry(sample: StatsdSample): (Entry & { id: string }) | null {
    const { key: base, field } = graphiteKey(sample.segments, sample.tags);
    const key = this.keyPrefix + base;
    if (keyProblem(key) !== null) return null;
    return { key, field, id: `${key}\u0000${field}` };
  }

  private full(map: Map<string, unknown>, id: string): boolean {
    return !map.has(id) && map.size >= this.maxEntries;
  }

  add(samples: readonly StatsdSample[]): void {
    for (const sample of samples) {
      const e = this.entry(sample);
      if (!e) {
        this.dropped++;
        continue;
      }
      const { id, key, field } = e;
      if (sample.type === 'c') {
        if (this.full(this.counters, id)) this.dropped++;
        else {
          const c = this.counters.get(id) ?? { key, field, count: 0 };
          const next = c.count + (sample.value as number) / sample.rate;
          if (!Number.isFinite(next)) this.dropped++;
          else {
            c.count = next;
            this.counters.set(id, c);
          }
        }
      } else if (sample.type === 'ms' || sample.type === 'h') {
        if (this.full(this.timers, id)) this.dropped++;
        else {
          const t = this.timers.get(id) ?? { key, field, sum: 0, count: 0 };
          const next = t.sum + (sample.value as number) / sample.rate;
          if (!Number.isFinite(next)) this.dropped++;
          else {
            t.sum = next;
            t.count += 1 / sample.rate;
            this.timers.set(id, t);
          }
        }
      } else if (sample.type === 'g') {
        if (this.full(this.gauges, id)) this.dropped++;
        else {
          const g = this.gauges.get(id) ?? { key, field, value: 0, dirty: false };
          const next = sample.adjust ? g.value + (sample.value as number) : (sample.value as number);
          if (!Number.isFinite(next)) this.dropped++;
          else {
            g.value = next;
            g.dirty = true;
            this.gauges.set(id, g);
          }
        }
      } else {
        const s = this.sets.get(id) ?? { key, field, members: new Set<string>() };
        if (
          this.full(this.sets, id) ||
          (s.members.size >= this.maxEntries && !s.members.has(sample.value as string))
        )
          this.dropped++;
        else {
          s.members.add(sample.value as string);
          this.sets.set(id, s);
        }
      }
    }
  }

  /** The points of everything held since the last flush, at `nowMs`; the holdings start again. */
  flush(nowMs: number): IntakePoint[] {
    const at = acceptedTime(nowMs);
    const track = new Map<string, Record<string, unknown>>();
    const assert = new Map<string, Record<string, unknown>>();
    const into = (map: Map<string, Record<string, unknown>>, key: string) => {
      let values = map.get(key);
      if (!values) map.set(key, (values = Object.create(null) as Record<string, unknown>));
      return values;
    };
    for (const c of this.counters.values()) into(track, c.key)[c.field] = { count: c.count };
    for (const t of this.timers.values()) into(track, t.key)[t.field] = { sum: t.sum, count: t.count };
    for (const g of this.gauges.values()) {
      if (!g.dirty) continue;
      g.dirty = false;
      into(track, g.key)[g.field] = { sum: g.value, count: 1 };
      into(assert, g.key)[g.field] = { last: g.value };
    }
    for (const s of this.sets.values()) into(assert, s.key)[s.field] = { unique: s.members.size };
    this.counters.clear();
    this.timers.clear();
    this.sets.clear();
    if (at === null) return [];
    const points: IntakePoint[] = [];
    for (const [key, values] of track) points.push(...split(key, at, 'track', values));
    for (const [key, values] of assert) points.push(...split(key, at, 'assert', values));
    return points;
  }
}

/** One point per at most 1,000 leaves (a timer has two, a counter one; grouping by fields keeps it simple). */
function split(
  key: string,
  at: string,
  operation: 'track' | 'assert',
  values: Record<string, unknown>,
): IntakePoint[] {
  const names = Object.keys(values);
  const perPoint = 500;
  if (names.length <= perPoint) return [{ key, at, operation, values }];
  const out: IntakePoint[] = [];
  for (let from = 0; from < names.length; from += perPoint) {
    const part = Object.create(null) as Record<string, unknown>;
    for (const name of names.slice(from, from + perPoint)) part[name] = values[name];
    out.push({ key, at, operation, values: part });
  }
  return out;
}
