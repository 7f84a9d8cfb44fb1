// Parsing and validating batch bodies (POST /api/v1/metrics/batch). A large batch costs about a
// millisecond per 100 KB in JSON.parse alone, plus the per-point checks: done on the event loop it
// holds up every other request and is the largest single cost of batch ingest. Bodies of at least
// `offThreadBytes` are therefore parsed in one worker thread, which hands back the points in a
// compact form (model/point-wire.ts); the event loop only merges and commits them. Small bodies, bodies
// beyond the in-flight cap, and every body once the worker cannot run, are parsed inline: the
// result and every error are the same either way.
import { Worker } from 'node:worker_threads';
import { unavailable } from '../../../errors';
import type { Logger } from '../../../lib/log';
import { parseJsonText } from '../../../lib/json';
import { scanBatch } from './batch-scan';
import { batchWorkerCode } from './batch-worker-code';
import { parseBatch } from './points';
import { type WireError, type WirePoints, decodeError, encodePoints } from '../../../model/point-wire';

export interface BatchParserOptions {
  /** bodies at least this long go to the worker (0 disables it) */
  offThreadBytes: number;
  /** bytes handed to the worker and not yet answered, above which bodies are parsed inline */
  maxInFlightBytes: number;
  log?: Logger;
}

export const DEFAULT_BATCH_PARSER: BatchParserOptions = {
  offThreadBytes: 256 * 1024,
  maxInFlightBytes: 32 * 1024 * 1024,
};

export interface BatchParser {
  /**
   * The points of a batch body (bytes of JSON; undefined when the request had none), in the wire
   * form the write path takes. A body sent to the worker is moved there: `raw` is empty afterwards.
   */
  parse(raw: Buffer | undefined): Promise<WirePoints>;
  /** bodies parsed so far in the worker and inline */
  readonly stats: { offThread: number; inline: number };
  /** Stops the worker; later calls parse inline. */
  close(): Promise<void>;
}

interface Job {
  bytes: number;
  resolve(points: WirePoints): void;
  reject(err: unknown): void;
}

// The worker's young generation, whatever the runtime's default (Node 24 on a large machine picks
// several times more): the scanner (domain/metrics/ingest/batch-scan.ts) allocates little per body, and the body buffers
// it is handed (external memory) are freed at each collection, so a small young generation keeps
// them from piling up. Bodies that take the generic path (JSON.parse) then promote more, which
// costs some throughput but no correctness.
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 4 };

/** worker failures after which batches are parsed inline for good */
const MAX_FAILURES = 3;

type Reply = { id: number; points: WirePoints; error?: undefined } | { id: number; error: WireError };

function parseInline(raw: Buffer | undefined): Promise<WirePoints> {
  try {
    // plain bodies straight from their bytes (domain/metrics/ingest/batch-scan.ts); any other (and every error) the generic way
    const wire = raw === undefined ? null : scanBatch(raw);
    return Promise.resolve(
      wire ?? encodePoints(parseBatch(raw === undefined ? undefined : parseJsonText(raw))),
    );
  } catch (err) {
    return Promise.reject(err);
  }
}

/** The body's own ArrayBuffer when it spans all of it (transferable), else a copy. */
function ownBuffer(raw: Buffer): ArrayBuffer {
  if (raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength && raw.buffer instanceof ArrayBuffer)
    return raw.buffer;
  const copy = new ArrayBuffer(raw.byteLength);
  new Uint8Array(copy).set(raw);
  return copy;
}

export function createBatchParser(options: BatchParserOptions = DEFAULT_BATCH_PARSER): BatchParser {
  const { offThreadBytes, maxInFlightBytes, log } = options;
  const jobs = new Map<number, Job>();
  let worker: Worker | null = null;
  let usable = offThreadBytes > 0;
  let nextId = 1;
  let inFlight = 0;
  let failures = 0;
  const stats = { offThread: 0, inline: 0 };

  function settle(id: number): Job | undefined {
    const job = jobs.get(id);
    if (!job) return undefined;
    jobs.delete(id);
    inFlight -= job.bytes;
    if (jobs.size === 0) worker?.unref(); // an idle worker does not keep the process alive
    return job;
  }

  /** The worker stopped with jobs outstanding: their bodies went with it. */
  function failAll(reason: string): void {
    for (const id of [...jobs.keys()])
      settle(id)?.reject(unavailable(`Batch could not be parsed (${reason}); retry`, 1));
  }

  function start(): Worker | null {
    if (worker) return worker;
    try {
      const w = new Worker(batchWorkerCode(), {
        eval: true,
        name: 'batch-parser',
        resourceLimits: WORKER_LIMITS,
      });
      w.on('message', (reply: Reply) => {
        const job = settle(reply.id);
        if (!job) return;
        if (reply.error) job.reject(decodeError(reply.error));
        else job.resolve(reply.points);
      });
      w.on('error', (err) => {
        failures++;
        if (failures >= MAX_FAILURES) usable = false;
        log?.error('batch parser worker failed', { error: err.message, inline: !usable });
      });
      w.on('exit', (code) => {
        if (worker === w) worker = null;
        failAll(`worker exited with code ${code}`);
      });
      w.unref();
      worker = w;
      return w;
    } catch (err) {
      log?.error('batch parser worker did not start; parsing batches inline', {
        error: (err as Error).message,
      });
      usable = false;
      return null;
    }
  }

  return {
    parse(raw) {
      const w =
        usable &&
        raw !== undefined &&
        raw.length >= offThreadBytes &&
        inFlight + raw.length <= maxInFlightBytes
          ? start()
          : null;
      if (!w || raw === undefined) {
        stats.inline++;
        return parseInline(raw);
      }
      stats.offThread++;
      const id = nextId++;
      const bytes = ownBuffer(raw);
      return new Promise<WirePoints>((resolve, reject) => {
        jobs.set(id, { bytes: raw.length, resolve, reject });
        inFlight += raw.length;
        if (jobs.size === 1) w.ref();
        w.postMessage({ id, bytes }, [bytes]);
      });
    },

    stats,

    async close() {
      usable = false;
      const w = worker;
      worker = null;
      if (w) await w.terminate();
      failAll('the service is stopping');
    },
  };
}
