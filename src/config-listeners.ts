// `[[intake.listeners]]` (config.example.toml, docs/intake.md "Listeners"): what a listener is, checked
// entry by entry when the configuration loads. No I/O here: src/config.ts imports it, and the
// intake's listeners (src/intake/listeners.ts) take what it returns.
import { normalizeId } from './lib/ids';

/** Line protocol timestamp precision (1.x names included: m and h). */
export type Precision = 'ns' | 'us' | 'ms' | 's' | 'm' | 'h';

export type ListenerProtocol = 'graphite' | 'influx' | 'statsd';

export interface ListenerConfig {
  readonly protocol: ListenerProtocol;
  readonly transport: 'udp' | 'tcp';
  /** `host:port` (`[::1]:port` for IPv6); port 0 picks a free one */
  readonly listen: string;
  /** the id of the source every sample is written to */
  readonly source: string;
  /** line protocol: the timestamps' precision (default ns) */
  readonly precision: Precision;
  /** statsd: ms between flushes (default 10,000) */
  readonly flushIntervalMs: number;
  /** put before every key (default none) */
  readonly keyPrefix: string;
}

const PROTOCOLS = ['graphite', 'influx', 'statsd'];
const PRECISIONS = ['ns', 'us', 'ms', 's', 'm', 'h'];
const LISTENER_KEYS = new Set([
  'protocol',
  'transport',
  'listen',
  'source',
  'precision',
  'flush_interval',
  'key_prefix',
]);

/** `10s`, `500ms`, `1m` or a number of ms. */
function parseInterval(raw: unknown): number | null {
  if (typeof raw === 'number' && Number.isInteger(raw) && raw >= 100) return raw;
  if (typeof raw !== 'string') return null;
  const m = /^(\d+)(ms|s|m)$/.exec(raw.trim());
  if (!m) return null;
  const ms = Number(m[1]) * (m[2] === 'ms' ? 1 : m[2] === 's' ? 1000 : 60_000);
  return ms >= 100 ? ms : null;
}

export function parseListenAddress(listen: string): { host: string; port: number } | null {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+)):(\d{1,5})$/.exec(listen.trim());
  if (!m) return null;
  const port = Number(m[3]);
  if (port > 65535) return null;
  return { host: m[1] ?? m[2]!, port };
}

/**
 * `[[intake.listeners]]` tables (or the same as a JSON array in SERVICE_INTAKE_LISTENERS), checked.
 * Returns the listeners, or a message naming the entry and the field.
 */
export function parseListeners(raw: unknown): ListenerConfig[] | string {
  let list = raw;
  if (typeof raw === 'string') {
    try {
      list = JSON.parse(raw);
    } catch {
      return 'expected a JSON array of listener tables';
    }
  }
  if (!Array.isArray(list)) return 'expected an array of [[intake.listeners]] tables';
  const out: ListenerConfig[] = [];
  for (let i = 0; i < list.length; i++) {
    const entry = list[i] as Record<string, unknown>;
    const at = `listener ${i + 1}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `${at}: expected a table`;
    for (const name of Object.keys(entry)) if (!LISTENER_KEYS.has(name)) return `${at}: unknown key ${name}`;
    const { protocol, transport, listen, source, precision, flush_interval, key_prefix } = entry;
    if (typeof protocol !== 'string' || !PROTOCOLS.includes(protocol))
      return `${at}: protocol must be graphite, influx or statsd`;
    if (transport !== 'udp' && transport !== 'tcp') return `${at}: transport must be udp or tcp`;
    if (typeof listen !== 'string' || !parseListenAddress(listen))
      return `${at}: listen must be host:port (e.g. 127.0.0.1:2003)`;
    const sourceId = typeof source === 'string' ? normalizeId(source.trim()) : null;
    if (!sourceId) return `${at}: source must be the id of a source`;
    if (precision !== undefined && (typeof precision !== 'string' || !PRECISIONS.includes(precision))) {
      return `${at}: precision must be one of ${PRECISIONS.join(', ')}`;
    }
    const flushIntervalMs = flush_interval === undefined ? 10_000 : parseInterval(flush_interval);
    if (flushIntervalMs === null) return `${at}: flush_interval must be like "10s" (at least 100ms)`;
    if (key_prefix !== undefined && typeof key_prefix !== 'string')
      return `${at}: key_prefix must be a string`;
    out.push({
      protocol: protocol as ListenerProtocol,
      transport,
      listen,
      source: sourceId,
      precision: (precision as Precision | undefined) ?? 'ns',
      flushIntervalMs,
      keyPrefix: (key_prefix as string | undefined) ?? '',
    });
  }
  return out;
}
