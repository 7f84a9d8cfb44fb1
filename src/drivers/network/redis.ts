// A database source in Redis, in the Trifle::Stats layout (the Ruby, Elixir and Go redis drivers):
// one hash per bucket, named `<prefix>::<key>::<granularity>::<unix seconds>` (prefix default
// `trfl`), whose fields are the flat dot paths of the values. The libraries have only this joined
// (full) identifier.
//
// A write set is one MULTI: HSET for asserts, HINCRBYFLOAT for tracks (the Ruby library's HINCRBY
// refuses a float, leaving the other fields of that write in place; those hashes read as they are).
// One connection per source and service instance, opened on use and closed when idle.
import type Redis from 'ioredis';
import { PathSplitter } from '../../model/leaves';
import { libraryRowPlan } from '../library-rows';
import {
  IDLE_CLOSE_MS,
  OPERATION_TIMEOUT_MS,
  SEPARATOR,
  bucketWrites,
  foldRows,
  fullKey,
  idleCloser,
  numericFields,
  setupMessage,
  storeUnavailable,
  withTimeout,
  type NetworkSettings,
  lazyModule,
  connectionTarget,
} from './store';
import { serverName } from '../../lib/outbound';
import { guardFor, type WireGuard } from './wire-guard';
import type { SeriesRef, SetupResult, WriteSet, WriteSetStore } from '../types';

const loadRedis = lazyModule(async () => (await import('ioredis')).default);

export const DEFAULT_REDIS_PREFIX = 'trfl';

export interface RedisStoreOptions extends NetworkSettings {
  timeZone: string;
}

/** The hash of one bucket. */
export function bucketHash(prefix: string, key: string, granularity: string, startMs: number): string {
  return `${prefix}${SEPARATOR}${fullKey(key, granularity, startMs)}`;
}

export function createRedisStore(options: RedisStoreOptions): WriteSetStore {
  const timeout = options.timeoutMs ?? OPERATION_TIMEOUT_MS;
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const splitter = new PathSplitter();
  let client: Redis | null = null;
  let connecting: Promise<Redis> | null = null;
  let guard: WireGuard | null = null;
  const idle = idleCloser(options.idleMs ?? IDLE_CLOSE_MS, () => drop());

  function drop(): void {
    const c = client;
    client = null;
    connecting = null;
    c?.disconnect();
  }

  /**
   * A client of the source's relay (network/wire-guard.ts) with the parsed fields only: never a URL, whose
   * options (path=, a unix socket) would reach the file system.
   */
  async function create(RedisClient: typeof Redis): Promise<Redis> {
    const target = connectionTarget('redis', options);
    guard ??= guardFor('redis', target, options, timeout);
    const relay = await guard.port();
    const c = new RedisClient({
      host: '127.0.0.1',
      port: relay,
      username: target.username,
      password: target.password,
      db: target.db ?? 0,
      tls: target.ssl ? { rejectUnauthorized: false, ...serverName(target.host) } : undefined,
      connectTimeout: timeout,
      commandTimeout: timeout,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      enableOfflineQueue: false,
      enableReadyCheck: false,
      // Give up at once: the next call opens a fresh connection instead of queueing behind retries.
      retryStrategy: () => null,
      reconnectOnError: () => false,
    });
    c.on('error', () => undefined); // failures reach the caller through its command
    return c;
  }

  /** A connected client; a closed or failed one is replaced. */
  async function connected(): Promise<Redis> {
    const RedisClient = await loadRedis();
    idle.touch();
    if (client && client.status === 'ready') return client;
    if (client && client.status !== 'connecting' && client.status !== 'connect') drop();
    if (!connecting) {
      const attempt: Promise<Redis> = (connecting = withTimeout(
        create(RedisClient),
        timeout,
        'redis connect',
      ).then(async (c) => {
        client = c;
        try {
          await withTimeout(c.connect(), timeout, 'redis connect');
          return c;
        } catch (err) {
          if (client === c) drop();
          c.disconnect();
          throw err;
        }
      }));
      attempt.catch(() => {
        if (connecting === attempt) connecting = null;
      });
    }
    return connecting;
  }

  return {
    kind: 'redis',

    async setup(): Promise<SetupResult> {
      // Hashes need no layout: setup checks that the server answers and accepts our writes.
      guard?.reset();
      try {
        const c = await connected();
        await c.ping();
      } catch (err) {
        throw new Error(setupMessage('redis', err, options, guard ?? undefined));
      }
      return {
        status: 'ready',
        message: `redis ready (hashes ${prefix}${SEPARATOR}<key>${SEPARATOR}<granularity>${SEPARATOR}<at>)`,
      };
    },

    async apply(writes: WriteSet): Promise<void> {
      const buckets = bucketWrites(writes);
      if (buckets.length === 0) return;
      try {
        const c = await connected();
        const multi = c.multi();
        for (const b of buckets) {
          const hash = bucketHash(prefix, b.key, b.granularity, b.startMs);
          for (const op of b.ops) {
            if (op.set) multi.hset(hash, op.path, String(op.value));
            else multi.hincrbyfloat(hash, op.path, op.value);
          }
        }
        const results = await withTimeout(multi.exec(), timeout, 'redis write');
        const failed = results?.find(([err]) => err);
        if (!results || failed) throw failed?.[0] ?? new Error('redis transaction discarded');
      } catch (err) {
        throw storeUnavailable('redis', err);
      } finally {
        idle.touch();
      }
    },

    async read(ref: SeriesRef, starts: readonly number[]): Promise<string[]> {
      if (starts.length === 0) return [];
      const plan = libraryRowPlan(starts, ref.granularity, options.timeZone);
      let results: Array<[Error | null, unknown]>;
      try {
        const c = await connected();
        const pipeline = c.pipeline();
        for (const ms of plan.lookups) pipeline.hgetall(bucketHash(prefix, ref.key, ref.granularity, ms));
        results = ((await withTimeout(pipeline.exec(), timeout, 'redis read')) ?? []) as Array<
          [Error | null, unknown]
        >;
        const failed = results.find(([err]) => err);
        if (failed) throw failed[0];
      } catch (err) {
        throw storeUnavailable('redis', err);
      } finally {
        idle.touch();
      }
      const rows = plan.lookups.map((ms, i): [number, Record<string, unknown>] => [
        ms,
        numericFields((results[i]?.[1] ?? {}) as Record<string, string>),
      ]);
      return foldRows(plan, starts.length, rows, splitter);
    },

    async close(): Promise<void> {
      idle.cancel();
      const c = client;
      client = null;
      connecting = null;
      if (c) await c.quit().catch(() => c.disconnect());
      await guard?.close();
      guard = null;
    },
  };
}
