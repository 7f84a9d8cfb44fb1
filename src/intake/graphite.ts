// Graphite's plaintext protocol (carbon's line receiver, port 2003): `path value timestamp`, one
// sample a line, the timestamp in Unix seconds. Graphite 1.1 tags follow the path after `;`
// (`disk.used;server=web01;mount=/`). Sent by Proxmox VE (its default metric server), TrueNAS SCALE
// (its only exporter), collectd `write_graphite`, Netdata, Glances and Telegraf.
//
// Mapping (docs/intake.md, "Graphite"): the last path segment is the field, the segments before it
// joined with `::` are the key (`proxmox.nodes.pve1.cpustat.user` -> key
// `proxmox::nodes::pve1::cpustat`, field `user`), tags added in series-key form; the value is a
// gauge like a line protocol field. Samples of one key at one time share a point pair.
import { LineError } from './line-error';
import {
  acceptedTime,
  gaugePoints,
  keyProblem,
  seriesKey,
  type IntakePoint,
  type MappedBody,
} from './mapping';

export interface GraphiteSample {
  /** 1-based line number */
  line: number;
  /** the path's segments (never empty ones) */
  segments: string[];
  /** Graphite 1.1 tags, sorted by name */
  tags: Array<[string, string]>;
  value: number;
  /** epoch ms, or null for "now" (no timestamp, or -1 as carbon takes it) */
  timeMs: number | null;
}

export class GraphiteError extends LineError {}

export const GRAPHITE_MAX_LINE_LENGTH = 16 * 1024;

const FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const NON_FINITE = /^[+-]?(?:nan|inf|infinity)$/i;
const TIMESTAMP = /^-?\d+(?:\.\d+)?$/;

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function parsePath(raw: string, line: number): { segments: string[]; tags: Array<[string, string]> } {
  const [path = '', ...tagParts] = raw.split(';');
  const segments = path.split('.').filter((s) => s !== '');
  if (segments.length === 0) throw new GraphiteError(line, `invalid path: ${clip(raw)}`);
  const tags = new Map<string, string>();
  for (const part of tagParts) {
    const eq = part.indexOf('=');
    if (eq <= 0 || eq === part.length - 1)
      throw new GraphiteError(line, `invalid tag: ${clip(part)} (tags are name=value)`);
    tags.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return { segments, tags: [...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) };
}

/** Parses plaintext lines; blank lines are skipped. Throws GraphiteError naming the line. */
export function parseGraphite(text: string, maxLineLength = GRAPHITE_MAX_LINE_LENGTH): GraphiteSample[] {
  const out: GraphiteSample[] = [];
  let start = 0;
  let line = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    line++;
    if (end - start > maxLineLength)
      throw new GraphiteError(line, `line longer than ${maxLineLength} characters`);
    const content = text.slice(start, end).trim();
    start = end + 1;
    if (content === '') continue;
    const parts = content.split(/[ \t]+/);
    if (parts.length < 2 || parts.length > 3) {
      throw new GraphiteError(
        line,
        `expected "path value timestamp", got ${parts.length} part${parts.length === 1 ? '' : 's'}`,
      );
    }
    const [rawPath, rawValue, rawTime] = parts as [string, string, string | undefined];
    const { segments, tags } = parsePath(rawPath, line);
    let value: number;
    if (FLOAT.test(rawValue)) value = Number(rawValue);
    else if (NON_FINITE.test(rawValue)) value = NaN;
    else throw new GraphiteError(line, `invalid value: ${clip(rawValue)}`);
    let timeMs: number | null = null;
    if (rawTime !== undefined && rawTime !== '-1') {
      if (!TIMESTAMP.test(rawTime) || rawTime.length > 24)
        throw new GraphiteError(line, `invalid timestamp: ${clip(rawTime)}`);
      timeMs = Math.floor(Number(rawTime) * 1000);
    }
    out.push({ line, segments, tags, value, timeMs });
  }
  return out;
}

/** The key and field of a Graphite path (see the head of this file). */
export function graphiteKey(
  segments: readonly string[],
  tags: ReadonlyArray<readonly [string, string]>,
): { key: string; field: string } {
  const field = segments.length > 1 ? segments[segments.length - 1]! : 'value';
  const base = segments.length > 1 ? segments.slice(0, -1).join('::') : segments[0]!;
  return { key: tags.length > 0 ? seriesKey(base, tags) : base, field };
}

/**
 * The points of parsed Graphite samples. A sample that cannot be stored (key too long, time out of
 * range) is dropped and counted in `dropped` rather than refusing the others: Graphite arrives on
 * listeners, where there is nobody to answer.
 */
export function mapGraphite(
  samples: readonly GraphiteSample[],
  options: { nowMs: number; keyPrefix?: string },
): MappedBody & { dropped: number } {
  const result = {
    points: [] as IntakePoint[],
    samples: 0,
    skippedStrings: 0,
    skippedNonFinite: 0,
    dropped: 0,
  };
  const groups = new Map<string, { key: string; at: string; gauges: Map<string, number> }>();
  for (const sample of samples) {
    result.samples++;
    if (!Number.isFinite(sample.value)) {
      result.skippedNonFinite++;
      continue;
    }
    const { key: base, field } = graphiteKey(sample.segments, sample.tags);
    const key = (options.keyPrefix ?? '') + base;
    const at = acceptedTime(sample.timeMs ?? options.nowMs);
    if (at === null || keyProblem(key) !== null) {
      result.dropped++;
      continue;
    }
    const id = `${key}\u0000${at}`;
    let group = groups.get(id);
    if (!group) groups.set(id, (group = { key, at, gauges: new Map() }));
    group.gauges.set(field, sample.value); // the later sample of one field at one time wins
  }
  for (const { key, at, gauges } of groups.values()) gaugePoints(key, at, [...gauges], result.points);
  return result;
}
