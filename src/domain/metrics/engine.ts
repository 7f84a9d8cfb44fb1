// The metrics engine: validation, group commit and reads over the stores of all sources.
// server.ts builds one per server (`deps.metrics`) and closes it on shutdown before the database.
// Every request's points go the same way: the write queue gathers them and commits them to the
// source's store by its one door (drivers/types.ts `commit`). The engine hands the registry the
// merger (merge.ts) that turns a commit into the write set a database source's layout applies;
// the embedded store's metric writer merges on its own thread.
import type { Config } from '../../config';
import { forbidden } from '../../errors';
import type { Logger } from '../../lib/log';
import type { Db } from '../../storage/db';
import { createDriverRegistry, projectClusterOf } from '../../drivers';
import { createMetricClusters } from '../../drivers/network/clusters';
import { DEFAULT_CLUSTER_ID, DEFAULT_MERGE_WINDOW_MS } from '../../config-clusters';
import { createEmbeddedStore } from '../../drivers/embedded/store';
import { translateSqliteError } from '../../drivers/sqlite/store';
import type { LoggedPoints, SetupResult } from '../../drivers/types';
import type { SecretBox } from '../../lib/secrets';
import type { BucketSettings, WirePoints } from '../../model/wire';
import type { Source } from '../types';
import { LAST_RESORT_CHECKPOINT_PAGES } from '../../storage/db';
import { type Granularity, parseGranularity } from '../../model/time/granularity';
import { nominalMaxMs } from '../../model/time/calendar';
import { writeGateOf } from '../../storage/write-gate';
import { parseBatch, parsePoint, type ValidPoint } from './ingest/points';
import { type BatchParserOptions, DEFAULT_BATCH_PARSER, createBatchParser } from './ingest/batch-parser';
import { PlanCache, mergeCommit } from './merge';
import type { MetricWriterOptions } from '../../drivers/embedded/metric-writer';
import { decodePoints, wirePointCount } from '../../model/point-wire';
import type { SeriesData } from './query/query';
import {
  type SeriesParams,
  type SeriesText,
  applyTransponders,
  applyTranspondersData,
  parseSeriesParams,
  readSeriesText,
  readSeriesTexts,
} from './query/series';
import { createEnabledTransponders, type EnabledTransponders } from '../../storage/transponders';
import { createWriteQueue } from './write-queue';
import {
  inProcessWriter,
  startWriterThread,
  type WriterPort,
  type WriterStatus,
} from '../../drivers/embedded/writer-client';
import { OverflowGuard } from './ingest/overflow';
import { createLargeLeavesRepo } from '../../storage/large-leaves';
import { AnswerCache, type AnswerStats } from './answers';
import { SYSTEM_KEY } from './merge';

export interface MetricsEngineOptions {
  db: Db;
  config: Pick<Config, 'limits' | 'features'> & Partial<Pick<Config, 'network' | 'storage' | 'clusters'>>;
  log?: Logger;
  /** where batch bodies are parsed (default: large ones in a worker thread) */
  batchParser?: BatchParserOptions;
  /** better-sqlite3 native binding (single executable), used for sqlite source files */
  nativeBinding?: unknown;
  /** the file it was loaded from (server.ts resolves it), for the writer's and the sqlite workers' threads */
  nativeBindingPath?: string;
  /** decrypts database source secrets for the stores (drivers/index.ts) */
  secrets?: SecretBox;
  /** told of every committed write, for GET /metrics (points, leaf values, seconds since enqueue) */
  onCommitted?: (points: number, leaves: number, seconds: number) => void;
  /**
   * Where the metric writer of the embedded store runs: a thread of its own (default), or this
   * thread (tests that reach into it). Its settings are those of embedded/metric-writer.ts.
   */
  writer?: { thread?: boolean; maxUnmergedPoints?: number } & Omit<
    MetricWriterOptions,
    'db' | 'log' | 'sourceSettings'
  >;
  /**
   * The enabled transponders every read applies (default: the node's cache over `db`,
   * storage/transponders.ts; cluster mode: PostgreSQL's, storage/pg/transponders.ts).
   */
  enabledTransponders?: EnabledTransponders;
}

export interface MetricsEngine {
  /** POST /api/v1/metrics: resolves once the point is committed. */
  ingest(source: Source, body: unknown): Promise<void>;
  /** The same for a point the edge already parsed (parsePoint). */
  ingestPoint(source: Source, point: ValidPoint): Promise<void>;
  /** POST /api/v1/metrics/batch: all points or none; resolves with the count once committed. */
  ingestBatch(source: Source, body: unknown): Promise<number>;
  /** The same from the body's bytes: a large body is parsed off the event loop (domain/metrics/ingest/batch-parser.ts). */
  ingestBatchBytes(source: Source, raw: Buffer | undefined): Promise<number>;
  /**
   * The same for points already in the write path's form, every rule of a batch point checked by
   * the caller (the intake's line protocol, src/intake/line-wire.ts); at most 10,000 points.
   */
  ingestWire(source: Source, wire: WirePoints): Promise<number>;
  /** GET /api/v1/metrics: `query` holds key (optional), from, to, granularity. */
  series(source: Source, query: Record<string, unknown>): Promise<SeriesText>;
  /** The series of a query body (key required), parsed for the query maths. */
  seriesData(
    source: Source,
    input: Record<string, unknown>,
  ): Promise<{ params: SeriesParams; series: SeriesData }>;
  /** The series of parameters the edge already parsed (parseSeriesParams). */
  readSeries(source: Source, params: SeriesParams): Promise<SeriesText>;
  /**
   * readSeries of many keys of one source over the same granularity and range (`params.key` is
   * ignored), in the keys' order: one round trip to the metric writer for all of them, with the
   * same read-your-writes as readSeries (every point acknowledged before the call is seen).
   */
  readSeriesMany(
    source: Source,
    keys: readonly string[],
    params: Omit<SeriesParams, 'key'>,
  ): Promise<SeriesText[]>;
  /** readSeries for the query maths: the transponders are applied by the query's scan. */
  readSeriesData(source: Source, params: SeriesParams): Promise<SeriesData>;
  /**
   * readSeries written by `render` (the response's bytes): an answer kept from an earlier read is
   * sent again while the series is unchanged (answers.ts); the bytes must not be changed.
   */
  readSeriesAnswer(
    source: Source,
    params: SeriesParams,
    render: (series: SeriesText) => Buffer,
  ): Promise<Buffer>;
  /** Forgets every kept answer: stored rows were deleted (the retention sweep). */
  forgetAnswers(): void;
  /** The kept answers' counts (GET /metrics); null when none are kept. */
  answerStats(): AnswerStats | null;
  /** Creates a database source's store layout (idempotent); rejects with an Error meant for the client. */
  setup(source: Source): Promise<SetupResult>;
  /**
   * Projects on a metrics cluster (their `config.cluster_id`, drivers/network/clusters.ts): what
   * the embedded store's tables answer for the others. `null`: the project is not on a cluster.
   */
  cluster(source: Source): ClusterProject | null;
  /** Commits every pending write. */
  flush(): Promise<void>;
  /** Closes the store of a removed database source (its connections or file handle). */
  release(sourceId: string): Promise<void>;
  /** Commits pending writes, refuses new ones and closes source files (not the service database). */
  close(): Promise<void>;
  readonly pendingPoints: number;
  /** Whether the embedded store's metric writer runs (health). */
  writerStatus(): WriterStatus;
  /** Resolves once the metric writer has replayed its log; rejects with the reason it could not. */
  writerStarted(): Promise<void>;
}

/** storage.answer_cache_bytes when the caller's configuration has none (tests that build an engine) */
const DEFAULT_ANSWER_CACHE_BYTES = 32 * 1024 * 1024;
const NO_TRANSPONDERS: readonly never[] = Object.freeze([]);

/** The granularity of the longest buckets (null: none parses). */
export function coarsestGranularity(texts: readonly string[]): Granularity | null {
  let found: Granularity | null = null;
  for (const text of texts) {
    const g = parseGranularity(text);
    if (g && (found === null || nominalMaxMs(g) > nominalMaxMs(found))) found = g;
  }
  return found;
}

/** What a project on a metrics cluster needs besides writes and reads. */
export interface ClusterProject {
  /** whether a bucket is stored (pending writes committed first) */
  holdsData(): Promise<boolean>;
  /** the distinct metric keys stored, the system key left out (pending writes committed first) */
  keyCount(): Promise<number>;
  /** deletes the buckets older than each granularity's cutoff (null: keep); resolves with the rows */
  expire(cutoffMs: (granularity: string) => number | null): Promise<number>;
  /** deletes every bucket of the (removed) project */
  drop(): Promise<void>;
  /**
   * The keys listed in the system key's rows of the project's coarsest granularity (`keys.<key>`,
   * what the intake's key limit counts); with `recentMs`, only from the rows whose bucket may hold
   * a timestamp of the last `recentMs` ms (or a later one). Pending writes are not waited for.
   */
  keys(recentMs?: number): Promise<string[]>;
}

export const INGEST_DISABLED = 'Metric ingestion is disabled: projects are disabled for this deployment';

/** The bucketing settings of a source, one object per (frozen) source so that commits can group by it. */
const settingsCache = new WeakMap<Source, BucketSettings>();
function settingsOf(source: Source): BucketSettings {
  let settings = settingsCache.get(source);
  if (!settings) {
    settings = {
      id: source.id,
      timeZone: source.timeZone,
      beginningOfWeek: source.beginningOfWeek,
      granularities: [...source.granularities],
    };
    if (Object.isFrozen(source)) settingsCache.set(source, settings);
  }
  return settings;
}

function startWriter(options: MetricsEngineOptions): WriterPort {
  const { thread = true, maxUnmergedPoints, ...settings } = options.writer ?? {};
  if (!thread) return inProcessWriter({ ...settings, db: options.db, log: options.log });
  // The writer's thread starts a checkpointer: this connection's commits then leave the WAL to it too.
  options.db.pragma(`wal_autocheckpoint = ${LAST_RESORT_CHECKPOINT_PAGES}`);
  return startWriterThread({
    dbFile: options.db.name,
    writeGate: writeGateOf(options.db).buffer, // this connection's writes get their turn between folds
    nativeBindingPath: options.nativeBinding ? options.nativeBindingPath : undefined,
    checkpointPages: LAST_RESORT_CHECKPOINT_PAGES,
    maxUnmergedPoints,
    options: settings,
    log: options.log,
  });
}

/** A request's points: parsed (single points, small bodies) or as the batch parser's wire. */
type Points = { parsed: ValidPoint[]; wire?: undefined } | { wire: WirePoints; parsed?: undefined };

export function createMetricsEngine(options: MetricsEngineOptions): MetricsEngine {
  const { config } = options;
  const sqlite = {
    timeoutMs: config.limits.sqliteSourceTimeoutMs,
    idleMs: config.limits.sqliteIdleCloseMs,
    log: options.log,
  };
  const writer = startWriter(options);
  const embedded = createEmbeddedStore(options.db, writer);
  const plans = new PlanCache();
  const merge = (entries: readonly LoggedPoints[]) => mergeCommit(entries, plans);
  // Cluster mode (storage.url): every project that names no configured cluster keeps its buckets
  // on the default metrics cluster, storage.url itself (docs/cluster.md part 3).
  const storageUrl = config.storage?.url ?? null;
  const defaultCluster = storageUrl === null ? null : DEFAULT_CLUSTER_ID;
  const clusters = createMetricClusters(
    [
      ...(config.clusters ?? []),
      ...(storageUrl === null
        ? []
        : [{ id: DEFAULT_CLUSTER_ID, url: storageUrl, mergeWindowMs: DEFAULT_MERGE_WINDOW_MS }]),
    ],
    { timeoutMs: config.network?.timeoutMs },
  );
  const clusterOf = (source: Source) => projectClusterOf(source, defaultCluster);
  const drivers = createDriverRegistry({
    clusters,
    defaultCluster,
    db: options.db,
    embedded,
    merge,
    nativeBinding: options.nativeBinding,
    nativeBindingPath: options.nativeBindingPath,
    sqlite,
    secrets: options.secrets,
    network: config.network,
  });
  const queue = createWriteQueue({
    maxPendingPoints: config.limits.writeQueueMaxPoints,
    log: options.log,
    translateError: translateSqliteError,
  });
  const batchParser = createBatchParser(options.batchParser ?? { ...DEFAULT_BATCH_PARSER, log: options.log });
  const guard = new OverflowGuard(createLargeLeavesRepo(options.db));
  // Node-local cache, cleared by the repository's writes. Every read awaits its prefetch only when
  // it returns a promise (PostgreSQL's, when stale): SQLite's answers `enabled` with no await.
  const transponders = options.enabledTransponders ?? createEnabledTransponders(options.db);
  const answerBytes = config.storage?.answerCacheBytes ?? DEFAULT_ANSWER_CACHE_BYTES;
  const answers = answerBytes > 0 ? new AnswerCache(answerBytes) : null;

  /** Writes the points (`count` of them, when the caller counted them already). */
  function write(source: Source, input: Points, batch = false, counted?: number): Promise<void> {
    const store = drivers.storeFor(source);
    const plan = plans.get(source);
    const count = counted ?? (input.parsed ? input.parsed.length : wirePointCount(input.wire));
    let parsed = input.parsed;
    const points = () => (parsed ??= decodePoints(input.wire!));
    const enqueue = () => {
      const settings = settingsOf(source);
      return queue.enqueue(
        store,
        count,
        input.wire ? { settings, wire: input.wire } : { settings, points: input.parsed },
      );
    };
    const check = input.wire
      ? guard.needsCheckWire(source.id, input.wire)
      : guard.needsCheck(source.id, input.parsed);
    const done = check
      ? guard.checked(points(), { plan, store, batch, drain: () => queue.drain(store), write: enqueue })
      : enqueue();
    const observe = options.onCommitted;
    if (!observe) return done;
    const started = performance.now();
    const leaves = input.wire
      ? input.wire.values.length
      : input.parsed.reduce((n, p) => n + p.paths.length, 0);
    return done.then(() => observe(count, leaves, (performance.now() - started) / 1000));
  }

  /** Writes a batch's points; resolves with their count once committed. */
  function writeBatch(source: Source, input: Points): Promise<number> {
    const count = input.parsed ? input.parsed.length : wirePointCount(input.wire);
    return write(source, input, true, count).then(() => count);
  }

  /** One series read with the source's enabled transponders applied (never on the system key). */
  async function readApplied(
    store: ReturnType<typeof drivers.storeFor>,
    source: Source,
    params: SeriesParams,
    enabled = () => transponders.enabled(source.id),
  ): Promise<SeriesText> {
    const loading = transponders.prefetch(source.id);
    if (loading) await loading;
    return applyTransponders(await readSeriesText(store, source, params), params.key, enabled);
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
        return write(source, { parsed: [parsePoint(body)] });
      } catch (err) {
        return Promise.reject(err);
      }
    },

    ingestPoint(source, point) {
      try {
        assertIngestEnabled();
        return write(source, { parsed: [point] });
      } catch (err) {
        return Promise.reject(err);
      }
    },

    ingestBatch(source, body) {
      try {
        assertIngestEnabled();
        return writeBatch(source, { parsed: parseBatch(body) });
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
      return batchParser.parse(raw).then((wire) => writeBatch(source, { wire }));
    },

    ingestWire(source, wire) {
      try {
        assertIngestEnabled();
        return writeBatch(source, { wire });
      } catch (err) {
        return Promise.reject(err);
      }
    },

    series(source, query) {
      try {
        const params = parseSeriesParams(source, query, { keyRequired: false });
        return readApplied(drivers.storeFor(source), source, params);
      } catch (err) {
        return Promise.reject(err);
      }
    },

    async seriesData(source, input) {
      const params = parseSeriesParams(source, input, { keyRequired: true });
      const loading = transponders.prefetch(source.id);
      if (loading) await loading;
      const text = await readSeriesText(drivers.storeFor(source), source, params);
      return {
        params,
        series: applyTranspondersData(text, params.key, () => transponders.enabled(source.id)),
      };
    },

    readSeries: (source, params) => readApplied(drivers.storeFor(source), source, params),

    async readSeriesMany(source, keys, params) {
      const loading = transponders.prefetch(source.id);
      if (loading) await loading;
      const texts = await readSeriesTexts(drivers.storeFor(source), source, keys, params);
      let enabled: ReturnType<typeof transponders.enabled> | undefined;
      const list = () => (enabled ??= transponders.enabled(source.id));
      return texts.map((text, i) => applyTransponders(text, keys[i]!, list));
    },

    async readSeriesAnswer(source, params, render) {
      const store = drivers.storeFor(source);
      if (!answers || !store.changeMark) return render(await readApplied(store, source, params));
      const loading = transponders.prefetch(source.id);
      if (loading) await loading;
      // The mark and the epoch before the read: see answers.ts for why the kept answer is current.
      const mark = store.changeMark(source.id, params.key);
      const epoch = answers.epoch;
      const list = params.key === SYSTEM_KEY ? NO_TRANSPONDERS : transponders.enabled(source.id);
      const { bucketsMs } = params.range;
      const name = `${source.id}\u0000${source.timeZone}\u0000${source.beginningOfWeek}\u0000${params.granularity.text}\u0000${bucketsMs[0]}\u0000${bucketsMs.length}\u0000${params.key}`;
      const kept = answers.get(name, mark, epoch, list, render);
      if (kept) return kept;
      const body = render(await readApplied(store, source, params, () => list));
      answers.set(name, { mark, epoch, transponders: list, render, body });
      return body;
    },

    forgetAnswers: () => answers?.forget(),
    answerStats: () => answers?.stats() ?? null,

    async readSeriesData(source, params) {
      const loading = transponders.prefetch(source.id);
      if (loading) await loading;
      const text = await readSeriesText(drivers.storeFor(source), source, params);
      return applyTranspondersData(text, params.key, () => transponders.enabled(source.id));
    },

    async setup(source) {
      return drivers.storeFor(source).setup();
    },

    cluster(source) {
      const id = clusterOf(source);
      if (id === null) return null;
      return {
        holdsData: async () => {
          await queue.flush();
          return clusters.holdsData(id, source.id);
        },
        keyCount: async () => {
          await queue.flush();
          return clusters.keyCount(id, source.id);
        },
        async expire(cutoffMs) {
          let deleted = 0;
          for (const granularity of source.granularities) {
            const before = cutoffMs(granularity);
            if (before !== null) deleted += await clusters.expire(id, source.id, granularity, before);
          }
          return deleted;
        },
        async drop() {
          await queue.flush();
          await clusters.drop(id, source.id);
          await drivers.release(source.id);
        },
        keys(recentMs) {
          const coarsest = coarsestGranularity(source.granularities);
          if (coarsest === null) return Promise.resolve([]);
          const sinceMs = recentMs === undefined ? null : Date.now() - recentMs - nominalMaxMs(coarsest);
          return clusters.keys(id, source.id, coarsest.text, sinceMs);
        },
      };
    },

    flush: () => queue.flush(),

    async release(sourceId) {
      await queue.flush();
      await drivers.release(sourceId);
    },

    async close() {
      await batchParser.close();
      try {
        await queue.close();
      } finally {
        await writer.close();
        await drivers.close();
      }
    },

    get pendingPoints() {
      return queue.pendingPoints;
    },

    writerStatus: () => writer.status(),
    writerStarted: () => writer.whenStarted(),
  };
}
