// The embedded store's write log: append-only segment files beside service.db
// (`metric-log.<first record number>.bin`, mode 0600). Each group commit's points are appended with
// one write(2) before they are acknowledged; like service.db's WAL with `synchronous = NORMAL` (no
// fsync per commit), a record in the file survives a crash or `kill -9` of the process, and an
// operating-system crash may lose the last ones.
//
// Three parts, so that appending and folding can live on different threads:
// - LogAppender writes records into the newest segment and starts a new one every few seconds or
//   megabytes (the event loop appends, so a commit is acknowledged without a thread hop);
// - recoverLog reads every segment back when the metric writer starts (cutting a torn tail);
// - dropFolded deletes the segments whose records are all folded; a segment's records run up to
//   the first number of the next one, so file names are all it needs, and the newest segment is
//   never touched.
//
// Record: u32 length of what follows, f64 record number, u32 head length, head (UTF-8: the
// settings of the record's source as JSON), body. A log of the first version (`metric-log.bin`,
// whose records name only the source: u16 length and the id instead of the head) is read too.
import { closeSync, ftruncateSync, fstatSync, openSync, readFileSync, readdirSync, rmSync, writeSync, writevSync } from 'node:fs';
import path from 'node:path';

export interface LogAppend {
  /** the settings of the record's source (JSON) */
  head: string;
  /** the record's body, in pieces written one after the other */
  body: readonly Uint8Array[];
}

export interface LogRecord {
  seq: number;
  /** the source's settings (JSON); null in a first-version log */
  head: string | null;
  /** first-version logs only */
  sourceId: string | null;
  body: Uint8Array;
}

const LEGACY = 'metric-log.bin';
const SEGMENT = /^metric-log\.(\d{16})\.bin$/;
const segmentName = (firstSeq: number) => `metric-log.${String(firstSeq).padStart(16, '0')}.bin`;

/**
 * The log's files in a directory and the first record number the oldest of them can hold (the
 * segments together hold every record from there on): what a copy of the log needs.
 */
export function logFiles(dir: string): { names: string[]; firstSeq: number } {
  const names = readdirSync(dir).filter((n) => n === LEGACY || SEGMENT.test(n)).sort();
  let firstSeq = Infinity;
  for (const name of names) {
    const m = SEGMENT.exec(name);
    if (m) firstSeq = Math.min(firstSeq, Number(m[1]));
    else {
      const { records } = decode(readFileSync(path.join(dir, name)), true);
      if (records.length > 0) firstSeq = Math.min(firstSeq, records[0]!.seq);
    }
  }
  return { names, firstSeq };
}

/** The whole records of a file's bytes, and where the last whole one ends (a torn tail is cut). */
function decode(bytes: Buffer, legacy: boolean): { records: LogRecord[]; validLength: number } {
  const records: LogRecord[] = [];
  const fixed = legacy ? 4 + 8 + 2 : 4 + 8 + 4;
  let at = 0;
  while (at + fixed <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    const end = at + 4 + length;
    if (end > bytes.length || length < fixed - 4) break;
    const seq = bytes.readDoubleLE(at + 4);
    const nameLength = legacy ? bytes.readUInt16LE(at + 12) : bytes.readUInt32LE(at + 12);
    if (at + fixed + nameLength > end) break;
    const name = bytes.toString('utf8', at + fixed, at + fixed + nameLength);
    const body = bytes.subarray(at + fixed + nameLength, end);
    records.push({ seq, head: legacy ? null : name, sourceId: legacy ? name : null, body });
    at = end;
  }
  return { records, validLength: at };
}

/** One writev(2); a short write (rare for a regular file) is finished with plain writes. */
function writeAll(fd: number, parts: Buffer[]): number {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const done = writevSync(fd, parts);
  if (done < total) {
    const rest = Buffer.concat(parts).subarray(done);
    for (let at = 0; at < rest.length; ) at += writeSync(fd, rest, at, rest.length - at);
  }
  return total;
}

/** Reads every segment (cutting torn tails, removing empty segments): records above `foldedUpTo`, and the last number. */
export function recoverLog(dir: string, foldedUpTo: number): { records: LogRecord[]; lastSeq: number } {
  let lastSeq = foldedUpTo;
  const records: LogRecord[] = [];
  for (const name of logFiles(dir).names) {
    const file = path.join(dir, name);
    const bytes = readFileSync(file);
    const found = decode(bytes, name === LEGACY);
    if (found.validLength < bytes.length) {
      const fd = openSync(file, 'r+');
      ftruncateSync(fd, found.validLength); // a torn tail: a write cut short, never acknowledged
      closeSync(fd);
    }
    if (found.records.length === 0) {
      rmSync(file, { force: true });
      continue;
    }
    for (const r of found.records) {
      lastSeq = Math.max(lastSeq, r.seq);
      if (r.seq > foldedUpTo) records.push(r);
    }
  }
  records.sort((a, b) => a.seq - b.seq);
  return { records, lastSeq };
}

/** Deletes the segments (never the newest) whose records are all folded, up to `foldedUpTo`. */
export function dropFolded(dir: string, foldedUpTo: number): void {
  const { names } = logFiles(dir);
  const segments = names.flatMap((name) => {
    const m = SEGMENT.exec(name);
    return m ? [{ name, first: Number(m[1]) }] : [];
  });
  for (let i = 0; i + 1 < segments.length; i++) {
    if (segments[i + 1]!.first - 1 <= foldedUpTo) rmSync(path.join(dir, segments[i]!.name), { force: true });
  }
  if (names.includes(LEGACY)) {
    const legacy = path.join(dir, LEGACY);
    if (decode(readFileSync(legacy), true).records.every((r) => r.seq <= foldedUpTo)) rmSync(legacy, { force: true });
  }
}

export interface AppenderOptions {
  /** bytes after which the next append starts a new segment (default 16 MB) */
  segmentBytes?: number;
  /** age after which the next append starts a new segment (default 2 s) */
  segmentMs?: number;
}

/** Appends records to the newest segment; one thread appends at a time. */
export class LogAppender {
  private fd = -1;
  private size = 0;
  private openedAt = 0;
  private readonly segmentBytes: number;
  private readonly segmentMs: number;

  /** Starts a segment at record number `lastSeq + 1` (after recoverLog). */
  constructor(private readonly dir: string, public lastSeq: number, options: AppenderOptions = {}) {
    this.segmentBytes = options.segmentBytes ?? 16 * 1024 * 1024;
    this.segmentMs = options.segmentMs ?? 2000;
    this.open();
  }

  /** Appends records durably, all or none; returns the number of the last one. */
  append(entries: readonly LogAppend[]): number {
    if (entries.length === 0) return this.lastSeq;
    if (this.size > 0 && (this.size >= this.segmentBytes || performance.now() - this.openedAt >= this.segmentMs)) this.rotate();
    const parts: Buffer[] = [];
    entries.forEach((e, i) => {
      const head = Buffer.from(e.head);
      const fixed = Buffer.allocUnsafe(16);
      const bodyLength = e.body.reduce((n, part) => n + part.byteLength, 0);
      fixed.writeUInt32LE(12 + head.length + bodyLength, 0);
      fixed.writeDoubleLE(this.lastSeq + 1 + i, 4);
      fixed.writeUInt32LE(head.length, 12);
      parts.push(fixed, head);
      for (const part of e.body) parts.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength));
    });
    try {
      this.size += writeAll(this.fd, parts);
    } catch (err) {
      ftruncateSync(this.fd, this.size); // no part of a failed append stays (e.g. a full disk)
      throw err;
    }
    this.lastSeq += entries.length;
    return this.lastSeq;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  /** A new segment for the next records; if it cannot be created (a full disk), the current one goes on. */
  private rotate(): void {
    const old = this.fd;
    try {
      this.open();
    } catch {
      this.openedAt = performance.now();
      return;
    }
    closeSync(old);
  }

  private open(): void {
    this.fd = openSync(path.join(this.dir, segmentName(this.lastSeq + 1)), 'a', 0o600);
    this.size = fstatSync(this.fd).size;
    this.openedAt = performance.now();
  }
}
