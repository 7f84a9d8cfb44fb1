// The metrics engine: validation, merging, group commit and reads over the stores of all sources.
// server.ts builds one per server (`deps.metrics`) and closes it on shutdown before the database.
import type { Config } from '../../config';
import { forbidden } from '../../errors';
import type { Logger } from '../../lib/log';
import type { Db } from '../../storage/db';
import { createDriverRegistry } from '../../drivers';
import { translateSqliteError } from '../../drivers/sqlite';
import type { LogRecord, SetupResult, WriteSet } from '../../drivers/types';
import type { SecretBox } from '../../lib/secrets';
import type { Source } from '../types';
import { parseBatch, parsePoint, type ValidPoint } from './ingest';
import { type BatchParserOptions, DEFAULT_BATCH_PARSER, createBatchParser } from './batch-parser';
import { PlanCache, mergeIntoPending } from './merge';
import { decodePoints, wireFromBytes } from './point-wire';
import type { SeriesData } from './query';
import { type SeriesParams, type SeriesText, parseSeriesParams, parseSeriesValues, readSeriesText } from './series';
import { createWriteQueue } from './write-queue';
import { OverflowGuard } from './overflow';
import { createLargeLeavesRepo } from '../../storage/large-leaves';

export interface MetricsEngineOptions {
  db: Db;
  config: Pick<Config, 'limits' | 'features'>;
  log?: Logger;
  /** where batch bodies are parsed (default: large ones in a worker thread) */
  batchParser?: BatchParserOptions;
  /** better-sqlite3 native binding (single executable), used for sqlite source files */
  nativeBinding?: unknown;
  /** decrypts database source secrets for the stores (drivers/index.ts) */
  secrets?: SecretBox;
  /** told of every committed write, for GET /metrics (points, leaf values, seconds since enqueue) */
  onCommitted?: (points: number, leaves: number, seconds: number) => void;
  /**
   * The source of an id, to replay the embedded store's write log after a restart. Without it the
   * embedded store is written without its log (each group commit applied directly).
   */
  findSource?: (id: string) => Source | undefined;
  /** acknowledge embedded writes after the write log's append and fold them later (needs findSource) */
  writeLog?: boolean;
}

export interface MetricsEngine {
  /** POST /api/v1/metrics: resolves once the point is committed. */
  ingest(source: Source, body: unknown): Promise<void>;
  /** POST /api/v1/metrics/batch: all points or none; resolves with the count once committed. */
  ingestBatch(source: Source, body: unknown): Promise<number>;
  /** The same from the body's bytes: a large body is parsed off the event loop (batch-parser.ts). */
  ingestBatchBytes(source: Source, raw: Buffer | undefined): Promise<number>;
  /** GET /api/v1/metrics: `query` holds key (optional), from, to, granularity. */
  series(source: Source, query: Record<string, unknown>): Promise<SeriesText>;
  /** The series of a query body (key required), parsed for the query maths. */
  seriesData(source: Source, input: Record<string, unknown>): Promise<{ params: SeriesParams; series: SeriesData }>;
  /** Creates a database source's store layout (idempotent); rejects with an Error meant for the client. */
  setup(source: Source): Promise<SetupResult>;
  /** Commits every pending write. */
  flush(): Promise<void>;
  /** Commits pending writes, refuses new ones and closes source files (not the service database). */
  close(): Promise<void>;
  readonly pendingPoints: number;
}

const INGEST_DISABLED = 'Metric ingestion is disabled: projects are disabled for this deployment';

export function createMetricsEngine(options: MetricsEngineOptions): MetricsEngine {
  const { config } = options;
  const sqlite = { timeoutMs: config.limits.sqliteSourceTimeoutMs, idleMs: config.limits.sqliteIdleCloseMs, log: options.log };
  const drivers = createDriverRegistry({ db: options.db, nativeBinding: options.nativeBinding, sqlite, secrets: options.secrets });
  const plans = new PlanCache();
  const findSource = options.writeLog ? options.findSource : undefined;

  /** Merges a logged entry back (after a restart or a failed fold); a deleted source's are dropped. */
  function replay(record: LogRecord, writes: WriteSet): void {
    const source = findSource!(record.sourceId);
    if (source) mergeIntoPending(writes, plans.get(source), decodePoints(wireFromBytes(record.body)));
  }

  const queue = createWriteQueue({
    maxPendingPoints: config.limits.writeQueueMaxPoints,
    log: options.log,
    translateError: translateSqliteError,
    replay: findSource ? replay : undefined,
  });

  const batchParser = createBatchParser(options.batchParser ?? { ...DEFAULT_BATCH_PARSER, log: options.log });

  const guard = new OverflowGuard(createLargeLeavesRepo(options.db));

  function write(source: Source, points: ValidPoint[], batch = false): Promise<void> {
    const store = drivers.storeFor(source);
    const plan = plans.get(source);
    const enqueue = () => {
      const logged = store.log && findSource ? { sourceId: source.id, points } : undefined;
      return queue.enqueue(store, points.length, (writes) => mergeIntoPending(writes, plan, points), logged);
    };
    const done = guard.needsCheck(source.id, points)
      ? guard.checked(points, { plan, store, batch, drain: () => queue.drain(store), write: enqueue })
      : enqueue();
    const observe = options.onCommitted;
    if (!observe) return done;
    const started = performance.now();
    const count = points.length;
    let leaves = 0;
    for (const point of points) leaves += point.paths.length;
    return done.then(() => observe(count, leaves, (performance.now() - started) / 1000));
  }

  /** Writes a batch's points; resolves with their count once committed. */
  function writeBatch(source: Source, points: ValidPoint[]): Promise<number> {
    const count = points.length;
    return write(source, points, true).then(() => count);
  }

  /** The source's store once every acknowledged point is in it (reads see them all). */
  async function settledStore(source: Source) {
    const store = drivers.storeFor(source);
    await queue.settle(store);
    return store;
  }

  function assertIngestEnabled(): void {
    if (!config.features.projectsEnabled) throw forbidden(INGEST_DISABLED);
  }

  return {
    // Not async functions: neither the body nor its points stay referenced while the commit is
    // awaited (a suspended async function would keep its arguments); throws become rejections.
    ingest(source, body) {
      try {
        assertIngestEnabled();
        return write(source, [parsePoint(body)]);
      } catch (err) {
        return Promise.reject(err);
      }
    },

    ingestBatch(source, body) {
      try {
        assertIngestEnabled();
        return writeBatch(source, parseBatch(body));
      } catch (err) {
        return Promise.reject(err);
      }
    },

    ingestBatchBytes(source, raw) {
      try {
        assertIngestEnabled();
      } catch (err) {
        return Promise.reject(err);
      }
      return batchParser.parse(raw).then((points) => writeBatch(source, points));
    },

    async series(source, query) {
      const params = parseSeriesParams(source, query, { keyRequired: false });
      return readSeriesText(await settledStore(source), source, params);
    },

    async seriesData(source, input) {
      const params = parseSeriesParams(source, input, { keyRequired: true });
      return { params, series: parseSeriesValues(await readSeriesText(await settledStore(source), source, params)) };
    },

    async setup(source) {
      return drivers.storeFor(source).setup();
    },

    flush: () => queue.flush(),

    async close() {
      await batchParser.close();
      await queue.close();
      await drivers.close();
    },

    get pendingPoints() {
      return queue.pendingPoints;
    },
  };
}
