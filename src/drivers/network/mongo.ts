// A database source in MongoDB, in the Trifle::Stats layout (the Ruby, Elixir and Go mongo
// drivers): collection trifle_stats, one document per bucket with its values nested under `data`,
// per identifier mode
//   full       { key: "<key>::<granularity>::<unix s>", data }        unique index { key: 1 }
//   partial    { key: "<key>::<granularity>", at: Date, data }         unique index { key: 1, at: -1 }
//   separated  { key, granularity, at: Date, data }                    unique index { key: 1, granularity: 1, at: -1 }
// and, when the source has expire_after, `expire_at` = at + expire_after under a TTL index.
//
// A write set is one ordered bulkWrite of upserts with $inc (track) and $set (assert) on
// `data.<dot path>`, as the libraries write it; MongoDB has no transaction here without a replica
// set, so a write set that fails half-way may leave its first buckets written (as the libraries do).
import type { AnyBulkWriteOperation, Document, Filter, MongoClient } from 'mongodb';
import { PathSplitter } from '../../model/leaves';
import type { IdentifierMode } from '../sqlite/setup';
import { libraryRowPlan } from '../library-rows';
import {
  IDLE_CLOSE_MS,
  OPERATION_TIMEOUT_MS,
  POOL_SIZE,
  SEPARATOR,
  bucketWrites,
  foldRows,
  fullKey,
  idleCloser,
  rowObject,
  setupMessage,
  storeUnavailable,
  type BucketWrite,
  type NetworkSettings,
  lazyModule,
  connectionTarget,
  type ConnectionTarget,
} from './store';
import { guardFor, type WireGuard } from './wire-guard';
import type { SeriesRef, SetupResult, WriteSet, WriteSetStore } from '../types';

const loadMongo = lazyModule(() => import('mongodb'));

export const COLLECTION = 'trifle_stats';

export interface MongoStoreOptions extends NetworkSettings {
  mode: IdentifierMode;
  timeZone: string;
  /** seconds: documents expire this long after their bucket start (TTL index on expire_at) */
  expireAfter?: number | null;
}

export const INDEX_KEYS: Record<IdentifierMode, Document> = {
  full: { key: 1 },
  partial: { key: 1, at: -1 },
  separated: { key: 1, granularity: 1, at: -1 },
};

/** The filter naming one bucket's document. */
export function bucketFilter(
  mode: IdentifierMode,
  key: string,
  granularity: string,
  startMs: number,
): Document {
  if (mode === 'full') return { key: fullKey(key, granularity, startMs) };
  const at = new Date(Math.floor(startMs / 1000) * 1000);
  return mode === 'partial' ? { key: `${key}${SEPARATOR}${granularity}`, at } : { key, granularity, at };
}

/** One bucket's upsert: $inc and $set on data.<path>, expire_at set when the source expires data. */
export function bucketUpdate(
  mode: IdentifierMode,
  b: BucketWrite,
  expireAfter?: number | null,
): AnyBulkWriteOperation {
  const inc: Document = {};
  const set: Document = {};
  for (const op of b.ops) (op.set ? set : inc)[`data.${op.path}`] = op.value;
  if (expireAfter) set.expire_at = new Date(Math.floor(b.startMs / 1000) * 1000 + expireAfter * 1000);
  const update: Document = {};
  if (Object.keys(inc).length > 0) update.$inc = inc;
  if (Object.keys(set).length > 0) update.$set = set;
  return { updateOne: { filter: bucketFilter(mode, b.key, b.granularity, b.startMs), update, upsert: true } };
}

/**
 * The client's URL: the relay's address (network/wire-guard.ts) and the credentials, escaped; the source's
 * own URL is never given to the driver (its options, `?appName=`/`authSource=` in a host, SRV
 * records, would reach the client's settings).
 */
export function mongoUrl(relayPort: number, target: ConnectionTarget): string {
  const auth = target.username
    ? `${encodeURIComponent(target.username)}:${encodeURIComponent(target.password ?? '')}@`
    : '';
  return `mongodb://${auth}127.0.0.1:${relayPort}/`;
}

export function createMongoStore(options: MongoStoreOptions): WriteSetStore {
  const { mode } = options;
  const timeout = options.timeoutMs ?? OPERATION_TIMEOUT_MS;
  const splitter = new PathSplitter();
  let client: MongoClient | null = null;
  let guard: WireGuard | null = null;
  const idle = idleCloser(options.idleMs ?? IDLE_CLOSE_MS, () => {
    const c = client;
    client = null;
    void c?.close().catch(() => undefined);
  });

  /** The collection, the client library loaded on first use (network/store.ts, lazyModule). */
  async function collection() {
    const { MongoClient } = await loadMongo();
    idle.touch();
    const target = connectionTarget('mongo', options);
    guard ??= guardFor('mongo', target, options, timeout);
    const relay = await guard.port();
    client ??= new MongoClient(mongoUrl(relay, target), {
      // One server, the relay: the topology a server describes (hosts, primary) is not followed.
      directConnection: true,
      ...(target.username ? { authSource: target.authSource ?? 'admin' } : {}),
      tls: target.ssl,
      tlsAllowInvalidCertificates: target.ssl ? true : undefined,
      maxPoolSize: POOL_SIZE,
      serverSelectionTimeoutMS: timeout,
      connectTimeoutMS: timeout,
      socketTimeoutMS: timeout,
      waitQueueTimeoutMS: timeout,
      heartbeatFrequencyMS: 10_000,
      maxIdleTimeMS: options.idleMs ?? IDLE_CLOSE_MS,
      retryReads: false,
      retryWrites: false,
      autoSelectFamily: false,
      appName: 'trifle-service',
    });
    return client.db(target.database || undefined).collection(COLLECTION);
  }

  return {
    kind: 'mongo',

    async setup(): Promise<SetupResult> {
      guard?.reset();
      try {
        const c = await collection();
        const existing = await c.db.listCollections({ name: COLLECTION }, { nameOnly: true }).toArray();
        if (existing.length === 0) await c.db.createCollection(COLLECTION);
        await c.createIndex(INDEX_KEYS[mode], { unique: true });
        if (options.expireAfter) await c.createIndex({ expire_at: 1 }, { expireAfterSeconds: 0 });
      } catch (err) {
        throw new Error(setupMessage('mongo', err, options, guard ?? undefined));
      }
      return { status: 'ready', message: `${COLLECTION} ready (identifier mode ${mode})` };
    },

    async apply(writes: WriteSet): Promise<void> {
      const buckets = bucketWrites(writes);
      if (buckets.length === 0) return;
      try {
        await (
          await collection()
        ).bulkWrite(
          buckets.map((b) => bucketUpdate(mode, b, options.expireAfter)),
          { ordered: true },
        );
      } catch (err) {
        throw storeUnavailable('mongo', err);
      } finally {
        idle.touch();
      }
    },

    async read(ref: SeriesRef, starts: readonly number[]): Promise<string[]> {
      if (starts.length === 0) return [];
      const plan = libraryRowPlan(starts, ref.granularity, options.timeZone);
      const first = new Date(plan.lookups[0]!);
      const last = new Date(plan.lookups[plan.lookups.length - 1]!);
      const byKey = new Map<string, number>();
      if (mode === 'full')
        for (const ms of plan.lookups) byKey.set(fullKey(ref.key, ref.granularity, ms), ms);
      const filter: Filter<Document> =
        mode === 'full'
          ? { key: { $in: [...byKey.keys()] } }
          : mode === 'partial'
            ? { key: `${ref.key}${SEPARATOR}${ref.granularity}`, at: { $gte: first, $lte: last } }
            : { key: ref.key, granularity: ref.granularity, at: { $gte: first, $lte: last } };
      let docs: Document[];
      try {
        docs = await (
          await collection()
        )
          .find(filter, { projection: { _id: 0, key: 1, at: 1, data: 1 } })
          .toArray();
      } catch (err) {
        throw storeUnavailable('mongo', err);
      } finally {
        idle.touch();
      }
      const rows = docs.map((d): [number, Record<string, unknown>] => [
        mode === 'full' ? (byKey.get(String(d.key)) ?? NaN) : d.at instanceof Date ? d.at.getTime() : NaN,
        rowObject(d.data),
      ]);
      return foldRows(plan, starts.length, rows, splitter);
    },

    async close(): Promise<void> {
      idle.cancel();
      const c = client;
      client = null;
      await c?.close().catch(() => undefined);
      await guard?.close();
      guard = null;
    },
  };
}
