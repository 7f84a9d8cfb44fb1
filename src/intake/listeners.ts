// Listeners of the connectionless intake formats (SPEC 12, docs/intake.md "Listeners"): Graphite
// plaintext over TCP or UDP, line protocol over UDP (or TCP), StatsD over UDP (or TCP). They have no
// authentication, so each is bound in the configuration to one source, and none runs unless
// configured. Whatever arrives, nothing throws out of here: a datagram that does not parse is
// dropped and counted, a TCP connection that sends garbage is closed.
import dgram from 'node:dgram';
import net from 'node:net';
import type { Deps } from '../deps';
import { mapGraphite, parseGraphite, GRAPHITE_MAX_LINE_LENGTH } from './graphite';
import { DEFAULT_MAX_LINE_LENGTH, parseLineProtocol } from './line-protocol';
import { parseListenAddress, type ListenerConfig } from '../config-listeners';
import { mapLineSamples, type IntakePoint } from './mapping';
import { StatsdAggregator, parseStatsd, STATSD_MAX_LINE_LENGTH } from './statsd';
import { intakeCountersOf } from './stats';
import { keyLimitOf } from './key-limit';

export { parseListeners, type ListenerConfig } from '../config-listeners';

export interface RunningListener {
  config: ListenerConfig;
  /** the bound address (the real port when 0 was asked) */
  address: { host: string; port: number };
}

export interface Listeners {
  running: RunningListener[];
  /** stops every listener; StatsD holdings are flushed and written first */
  close(): Promise<void>;
}

// The listeners running for a server (by its Ops), for the interface's read of a source's
// listeners (GET /api/v1/bootstrap/sources/:id/listeners): their real ports when 0 was asked.
const runningByOps = new WeakMap<Deps['ops'], Set<RunningListener>>();

/** The listeners this server runs now, in the order they started. */
export function runningListenersOf(deps: Pick<Deps, 'ops'>): RunningListener[] {
  return [...(runningByOps.get(deps.ops) ?? [])];
}

const MAX_TCP_CONNECTIONS = 256;
const TCP_IDLE_MS = 5 * 60_000;
const POINTS_PER_BATCH = 10_000;

/** Turns one piece of text into points: the format's parser and mapping (throws on garbage). */
function pointsOf(
  config: ListenerConfig,
  text: string,
  nowMs: number,
  statsd: StatsdAggregator | null,
  deps: Deps,
): IntakePoint[] {
  const counters = intakeCountersOf(deps);
  if (config.protocol === 'influx') {
    const mapped = mapLineSamples(parseLineProtocol(text, { precision: config.precision }), {
      nowMs,
      keyPrefix: config.keyPrefix,
    });
    counters.add('influx', mapped);
    return mapped.points;
  }
  if (config.protocol === 'graphite') {
    const mapped = mapGraphite(parseGraphite(text), { nowMs, keyPrefix: config.keyPrefix });
    counters.add('graphite', mapped);
    counters.dropped += mapped.dropped;
    return mapped.points;
  }
  const samples = parseStatsd(text);
  counters.add('statsd', { samples: samples.length, points: [], skippedStrings: 0, skippedNonFinite: 0 });
  statsd!.add(samples);
  return [];
}

export async function startListeners(deps: Deps, configs: readonly ListenerConfig[]): Promise<Listeners> {
  const counters = intakeCountersOf(deps);
  const keyLimit = keyLimitOf(deps);
  const closers: Array<() => Promise<void>> = [];
  const running: RunningListener[] = [];

  async function write(config: ListenerConfig, points: IntakePoint[]): Promise<void> {
    if (points.length === 0) return;
    const source = await deps.sources.cachedById(config.source);
    if (!source) {
      counters.dropped += points.length;
      deps.log.warn('intake listener: its source does not exist', {
        listen: config.listen,
        source: config.source,
      });
      return;
    }
    try {
      // the points of new keys past intake.max_keys_per_source are dropped and counted, the rest written
      const admitted = await keyLimit.admitSome(source, points);
      if (admitted.dropped > 0) {
        counters.overKeyLimit += admitted.dropped;
        counters.dropped += admitted.dropped;
        points = admitted.points;
      }
      for (let from = 0; from < points.length; from += POINTS_PER_BATCH) {
        await deps.metrics.ingestBatch(source, { points: points.slice(from, from + POINTS_PER_BATCH) });
      }
    } catch (err) {
      counters.dropped += points.length;
      deps.log.warn('intake listener: a write was refused', {
        listen: config.listen,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  const flushed = (statsd: StatsdAggregator): IntakePoint[] => {
    const points = statsd.flush(deps.now());
    counters.points += points.length;
    return points;
  };

  const maxLine = (config: ListenerConfig) =>
    config.protocol === 'influx'
      ? DEFAULT_MAX_LINE_LENGTH
      : config.protocol === 'graphite'
        ? GRAPHITE_MAX_LINE_LENGTH
        : STATSD_MAX_LINE_LENGTH;

  try {
    for (const config of configs) {
      const { host, port } = parseListenAddress(config.listen)!;
      const statsd =
        config.protocol === 'statsd' ? new StatsdAggregator({ keyPrefix: config.keyPrefix }) : null;
      const take = (text: string): IntakePoint[] | null => {
        try {
          return pointsOf(config, text, deps.now(), statsd, deps);
        } catch {
          counters.dropped++;
          return null;
        }
      };
      let timer: NodeJS.Timeout | null = null;
      if (statsd) {
        timer = setInterval(() => void write(config, flushed(statsd)), config.flushIntervalMs);
        timer.unref();
      }
      const stopStatsd = async () => {
        if (timer) clearInterval(timer);
        if (statsd) await write(config, flushed(statsd));
      };

      if (config.transport === 'udp') {
        const socket = dgram.createSocket(net.isIPv6(host) ? 'udp6' : 'udp4');
        socket.on('message', (msg) => {
          const points = take(msg.toString('utf8'));
          if (points) void write(config, points);
        });
        socket.on('error', (err) =>
          deps.log.warn('intake listener error', { listen: config.listen, error: err.message }),
        );
        await new Promise<void>((resolve, reject) => {
          socket.once('error', reject);
          socket.bind(port, host, () => {
            socket.off('error', reject);
            resolve();
          });
        });
        const address = socket.address();
        running.push({ config, address: { host, port: address.port } });
        closers.push(async () => {
          await new Promise<void>((resolve) => socket.close(() => resolve()));
          await stopStatsd();
        });
      } else {
        const sockets = new Set<net.Socket>();
        const server = net.createServer((conn) => {
          sockets.add(conn);
          conn.on('close', () => sockets.delete(conn));
          conn.on('error', () => conn.destroy());
          conn.setTimeout(TCP_IDLE_MS, () => conn.destroy());
          let pending = '';
          const limit = maxLine(config);
          conn.setEncoding('utf8');
          conn.on('data', (chunk: string) => {
            pending += chunk;
            const cut = pending.lastIndexOf('\n');
            if (cut === -1) {
              if (pending.length > limit) {
                counters.dropped++;
                conn.destroy();
              }
              return;
            }
            const text = pending.slice(0, cut + 1);
            pending = pending.slice(cut + 1);
            const points = take(text);
            if (!points) {
              conn.destroy(); // garbage closes the connection
              return;
            }
            if (points.length === 0) return;
            conn.pause(); // one write at a time per connection: the sender waits, memory does not grow
            void write(config, points).finally(() => {
              if (!conn.destroyed) conn.resume();
            });
          });
          conn.on('end', () => {
            if (pending.trim() === '') return;
            const points = take(pending);
            pending = '';
            if (points) void write(config, points);
          });
        });
        server.maxConnections = MAX_TCP_CONNECTIONS;
        await new Promise<void>((resolve, reject) => {
          server.once('error', reject);
          server.listen(port, host, () => {
            server.off('error', reject);
            resolve();
          });
        });
        const address = server.address() as net.AddressInfo;
        running.push({ config, address: { host, port: address.port } });
        closers.push(async () => {
          const closed = new Promise<void>((resolve) => server.close(() => resolve()));
          for (const conn of sockets) conn.destroy();
          await closed;
          await stopStatsd();
        });
      }
    }
  } catch (err) {
    for (const close of closers) await close();
    // without the errno code: start-up reports a port in use as server.port's otherwise
    const at = configs[running.length];
    const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new Error(
      `intake.listeners: cannot listen on ${at?.listen} (${at?.protocol} over ${at?.transport}): ${why}`,
    );
  }

  let registry = runningByOps.get(deps.ops);
  if (!registry) runningByOps.set(deps.ops, (registry = new Set()));
  for (const listener of running) registry.add(listener);
  return {
    running,
    async close() {
      for (const listener of running) registry.delete(listener);
      for (const close of closers) await close();
    },
  };
}
