// The metric writer's thread (embedded/writer-client.ts starts it): its own connection to the service
// database and one MetricWriter. Messages in: { id, op, ...arguments } (embedded/writer-client.ts
// WriterRequest). Messages out: { ready } once the write log is replayed, or { failed, error };
// { log } for each line the writer logs;
// then { id, ok, value } or { id, ok: false, error } per request, in the order of the work done.
//
// The same script runs the database's checkpointer (workerData.role 'checkpointer'): a connection
// that copies the WAL back into the database file every CHECKPOINT_MS, on a thread of its own, so
// that neither the writer's commits nor the event loop's stop for a checkpoint and its fsync.
// Any message stops it.
import { type MessagePort, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import type { Logger } from '../../lib/log';
import { openDatabase } from '../../storage/db';
import { WriteGate } from '../../storage/write-gate';
import { sourceSettingsReader } from '../../storage/sources';
import { MetricWriter } from './metric-writer';
import { type PackedPart, type PendingSeries, packPart, packedBuffers } from '../../model/row-delta';
import { KeyTable, errorToWire, type WriterRequest, type WriterThreadData } from './writer-protocol';

const port = parentPort;
if (!port) throw new Error('writer-thread runs as a worker thread');
const data = workerData as WriterThreadData;

/** Merges are told at least this often, also in the middle of a long turn. */
const TELL_MS = 10;
/** How often the checkpointer copies the WAL back (a passive checkpoint never blocks a writer). */
const CHECKPOINT_MS = 250;

/** In the single executable the addon is loaded from the file the main thread extracted. */
function nativeBinding(): unknown {
  if (!data.nativeBindingPath) return undefined;
  const mod = { exports: {} as unknown };
  process.dlopen(mod, data.nativeBindingPath);
  return mod.exports;
}

function checkpointer(): void {
  const db = openDatabase(data.dbFile, { nativeBinding: nativeBinding() });
  db.pragma('cache_size = 64'); // it reads nothing: pages only pass through
  const timer = setInterval(() => {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // e.g. a full disk or a busy lock: the next tick tries again
    }
  }, CHECKPOINT_MS);
  port!.once('message', () => {
    clearInterval(timer);
    db.close();
    port!.close();
  });
}

/** The writer's log lines (e.g. what recovery set aside) go to the event loop's logger: { log: [level, msg, fields] }. */
const threadLog: Logger = {
  debug: (msg, fields) => port!.postMessage({ log: ['debug', msg, fields] }),
  info: (msg, fields) => port!.postMessage({ log: ['info', msg, fields] }),
  warn: (msg, fields) => port!.postMessage({ log: ['warn', msg, fields] }),
  error: (msg, fields) => port!.postMessage({ log: ['error', msg, fields] }),
};

function writer(): void {
  let db: ReturnType<typeof openDatabase>;
  let metrics: MetricWriter;
  const reads = data.readPort;
  // Reads first: they are answered from inside long merges and spreads too (pollReads), where
  // nothing but reading the windows may run.
  const pollReads = () => {
    if (!reads) return;
    for (let m = receiveMessageOnPort(reads); m; m = receiveMessageOnPort(reads))
      handleRead(m.message as WriterRequest);
  };
  // Requests that arrive while a fold's transaction runs are taken from inside it (MetricWriter's poll).
  const poll = () => {
    pollReads();
    for (let m = receiveMessageOnPort(port!); m; m = receiveMessageOnPort(port!))
      handle(m.message as WriterRequest);
  };
  try {
    db = openDatabase(data.dbFile, { nativeBinding: nativeBinding(), checkpointPages: data.checkpointPages });
    // The event loop appends to the log itself (embedded/writer-client.ts): this writer merges what it logged.
    const gate = data.writeGate ? new WriteGate(data.writeGate) : undefined;
    metrics = new MetricWriter({
      ...data.options,
      db,
      log: threadLog,
      sourceSettings: sourceSettingsReader(db),
      poll,
      pollReads,
      onFolded: (upTo) => port!.postMessage({ folded: upTo }),
      appends: false,
      gate,
    });
    port!.postMessage({ ready: true, lastSeq: metrics.lastSeq });
  } catch (err) {
    port!.postMessage({ failed: true, error: errorToWire(err) });
    throw err;
  }
  const reply = (id: number, err: unknown, value?: unknown) =>
    port!.postMessage(
      err === undefined ? { id, ok: true, value } : { id, ok: false, error: errorToWire(err) },
    );
  const answer = (id: number, work: Promise<unknown>) =>
    work.then(
      (value) => reply(id, undefined, value),
      (err: unknown) => reply(id, err ?? new Error('failed')),
    );
  // How far merges have gone, told once per turn (the event loop bounds what it handed on by it,
  // and keeps what it handed on until told), and at once when the last telling is TELL_MS old: a
  // burst of merges is taken in one long turn (a port hands over every message queued).
  let merged = 0;
  let told = 0;
  let telling = false;
  const tell = () => {
    telling = false;
    told = performance.now();
    port!.postMessage({ merged });
  };
  const mergedUpTo = (upTo: number) => {
    merged = Math.max(merged, upTo);
    if (performance.now() - told >= TELL_MS) return tell();
    if (telling) return;
    telling = true;
    setImmediate(() => telling && tell());
  };
  /** the keys merges name by number (writer-protocol.ts KeyNumbers) */
  const keyTable = new KeyTable();
  port!.on('message', handle);
  reads?.on('message', (req: WriterRequest) => handleRead(req));

  /** A read's question, answered at once (the windows hold the log's records up to `mergedUpTo`). */
  function handleRead(req: WriterRequest, on: MessagePort = reads ?? port!): void {
    if (req.op === 'pendingMany') return handleReadMany(req, on);
    if (req.op !== 'pending') return;
    let value: PendingSeries & { packed: PackedPart[] };
    try {
      const series = metrics.pending(req.sourceId, req.key, req.granularity, req.startsMs);
      value = { ...series, parts: [], packed: series.parts.map(packPart) };
    } catch (err) {
      on.postMessage({ id: req.id, ok: false, error: errorToWire(err) });
      return;
    }
    on.postMessage({ id: req.id, ok: true, value }, packedBuffers(value.packed));
  }

  /** Many keys' questions, answered at one moment (one state of the windows). */
  function handleReadMany(req: Extract<WriterRequest, { op: 'pendingMany' }>, on: MessagePort): void {
    let value: Array<PendingSeries & { packed: PackedPart[] }>;
    try {
      value = metrics
        .pendingMany(req.sourceId, req.keys, req.granularity, req.startsMs)
        .map((series) => ({ ...series, parts: [], packed: series.parts.map(packPart) }));
    } catch (err) {
      on.postMessage({ id: req.id, ok: false, error: errorToWire(err) });
      return;
    }
    on.postMessage(
      { id: req.id, ok: true, value },
      value.flatMap((series) => packedBuffers(series.packed)),
    );
  }

  function handle(req: WriterRequest): void {
    switch (req.op) {
      // Merges are taken at once, also from inside a fold's transaction; a read waiting on its own
      // port goes before each.
      case 'merge':
        pollReads();
        return metrics.merge(keyTable.resolve(req), req.upTo, () => mergedUpTo(req.upTo));
      case 'append':
        return metrics.appendThen(req.entries, (err) => reply(req.id, err));
      case 'pending':
      case 'pendingMany':
        return handleRead(req, port!);
      case 'settle':
        return void answer(req.id, metrics.settle());
      case 'apply':
        return void answer(req.id, metrics.applyWriteSet(req.writes));
      case 'close':
        return void answer(
          req.id,
          metrics.close().then(() => db.close()),
        );
    }
  }
}

if (data.role === 'checkpointer') checkpointer();
else writer();
