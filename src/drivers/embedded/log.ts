// The embedded store's write log: append-only segment files beside service.db
// (`metric-log.<first record number>.bin`, mode 0600). Each group commit's points are appended with
// one write(2) before they are acknowledged; like service.db's WAL with `synchronous = NORMAL` (no
// fsync per commit), a record in the file survives a crash or `kill -9` of the process, and an
// operating-system crash may lose the last ones.
//
// Three parts, so that appending and folding can live on different threads:
// - LogAppender writes records into the newest segment and starts a new one every few seconds or
//   megabytes (the event loop appends, so a commit is acknowledged without a thread hop);
// - recoverLog reads every segment back when the metric writer starts;
// - dropFolded deletes the segments whose records are all folded; a segment's records run up to
//   the first number of the next one, so file names are all it needs, and the newest segment is
//   never touched.
//
// Segment format 3 (written since the log carries checksums): the 8 bytes FILE_MAGIC, then records:
// the 4 bytes RECORD_MARK, u32 CRC-32 of everything after it, u32 length of what follows it, f64
// record number, u32 head length, head (UTF-8: the settings of the record's source as JSON), body.
// A damaged record (its checksum fails, its length runs past the file, its number is not an integer
// above the one before) never hides the records after it: recovery scans on for the next mark whose
// record's checksum holds, copies the bytes it skipped to a file beside the segment
// (`<segment>.damaged-at-<offset>`) and warns naming that file.
//
// Older formats are read too: segments of format 2 (no file magic, no mark, no checksum: u32
// length, f64 number, u32 head length, head, body), where recovery resynchronises on the next
// record number it expects, and the first version's single `metric-log.bin` (records naming only
// their source: u16 length and the id instead of the head).
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readFileSync,
  readSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
  writevSync,
} from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

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
  /** the segment file (its path) and where the record starts in it: to set it aside (setAside) */
  file: string;
  offset: number;
  /** the whole record's bytes as stored */
  bytes: Uint8Array;
}

/** Where recovery reports what it set aside or skipped. */
export interface LogWarn {
  (msg: string, fields: Record<string, unknown>): void;
}

const LEGACY = 'metric-log.bin';
const SEGMENT = /^metric-log\.(\d{16})\.bin$/;
/** Names the log would use that do not parse (e.g. `metric-log.0000000000000NaN.bin`): skipped with a warning. */
const LOG_LIKE = /^metric-log\..*\.bin$/;

/** A segment's file starts with these: `MLOG`, the format number 3, then bytes no text file starts with. */
export const FILE_MAGIC = Buffer.from([0x4d, 0x4c, 0x4f, 0x47, 3, 0x0d, 0x0a, 0x1a]);
/** Each record of format 3 starts with these. */
export const RECORD_MARK = Buffer.from([0xa7, 0x4d, 0x52, 0xd5]);
/** mark, checksum, length, number, head length */
const FIXED3 = 4 + 4 + 4 + 8 + 4;
/** how far past the last good record number a format-2 resynchronisation looks */
const RESYNC_SEQS = 64;

const isRecordNumber = (n: number) => Number.isSafeInteger(n) && n >= 1;

/** A segment's file name; refuses anything but a whole record number, so no file is ever named `NaN`. */
export function segmentName(firstSeq: number): string {
  if (!isRecordNumber(firstSeq)) throw new Error(`write log: ${firstSeq} is not a record number`);
  return `metric-log.${String(firstSeq).padStart(16, '0')}.bin`;
}

/** The regular files among the log's names (a directory or a socket of such a name is no segment). */
function isFile(file: string): boolean {
  try {
    return lstatSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The log's files in a directory and the first record number the oldest of them can hold (the
 * segments together hold every record from there on): what a copy of the log needs. Names that do
 * not parse and entries that are not regular files are left out (recoverLog warns about them).
 */
export function logFiles(dir: string): { names: string[]; firstSeq: number } {
  const names = readdirSync(dir)
    .filter((n) => n === LEGACY || SEGMENT.test(n))
    .filter((n) => isFile(path.join(dir, n)))
    .sort();
  let firstSeq = Infinity;
  for (const name of names) {
    const m = SEGMENT.exec(name);
    if (m) firstSeq = Math.min(firstSeq, Number(m[1]));
    else {
      const { records } = decode(readFileSync(path.join(dir, name)), path.join(dir, name), null);
      if (records.length > 0) firstSeq = Math.min(firstSeq, records[0]!.seq);
    }
  }
  return { names, firstSeq };
}

/** Bytes recovery could not read: [from, to) of the file; `tail` when they run to its end. */
interface Damage {
  from: number;
  to: number;
  tail: boolean;
}

interface Decoded {
  records: LogRecord[];
  damage: Damage[];
  format: 1 | 2 | 3;
}

/** A whole, checked record of format 3 at `at`, or null. */
function readRecord3(bytes: Buffer, at: number, file: string, after: number): LogRecord | null {
  if (at + FIXED3 > bytes.length || bytes.compare(RECORD_MARK, 0, 4, at, at + 4) !== 0) return null;
  const length = bytes.readUInt32LE(at + 8);
  const end = at + 12 + length;
  if (length < 12 || end > bytes.length) return null;
  if (crc32(bytes.subarray(at + 8, end)) !== bytes.readUInt32LE(at + 4)) return null;
  const seq = bytes.readDoubleLE(at + 12);
  const headLength = bytes.readUInt32LE(at + 20);
  if (!isRecordNumber(seq) || seq <= after || at + FIXED3 + headLength > end) return null;
  const head = bytes.toString('utf8', at + FIXED3, at + FIXED3 + headLength);
  return {
    seq,
    head,
    sourceId: null,
    body: bytes.subarray(at + FIXED3 + headLength, end),
    file,
    offset: at,
    bytes: bytes.subarray(at, end),
  };
}

/** A plausible record of format 2 (or of the first version: `legacy`) at `at`, or null. */
function readRecord2(
  bytes: Buffer,
  at: number,
  file: string,
  after: number,
  legacy: boolean,
): LogRecord | null {
  const fixed = legacy ? 4 + 8 + 2 : 4 + 8 + 4;
  if (at + fixed > bytes.length) return null;
  const length = bytes.readUInt32LE(at);
  const end = at + 4 + length;
  if (end > bytes.length || length < fixed - 4) return null;
  const seq = bytes.readDoubleLE(at + 4);
  if (!isRecordNumber(seq) || seq <= after) return null;
  const nameLength = legacy ? bytes.readUInt16LE(at + 12) : bytes.readUInt32LE(at + 12);
  if (at + fixed + nameLength > end) return null;
  const name = bytes.toString('utf8', at + fixed, at + fixed + nameLength);
  if (!legacy && !isHead(name)) return null;
  return {
    seq,
    head: legacy ? null : name,
    sourceId: legacy ? name : null,
    body: bytes.subarray(at + fixed + nameLength, end),
    file,
    offset: at,
    bytes: bytes.subarray(at, end),
  };
}

/** A head is the JSON of a source's settings: an object with a string id. */
function isHead(text: string): boolean {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string';
  } catch {
    return false;
  }
}

/**
 * A file's records. Format 3: a bad record is skipped up to the next mark whose record checks.
 * Format 2: up to the next offset that holds one of the next record numbers (records of a segment
 * are numbered one after the other from the number in its name, `firstSeq`). The first version's
 * file has no such anchor: its reading stops at the first bad record.
 */
function decode(bytes: Buffer, file: string, firstSeq: number | null): Decoded {
  const legacy = firstSeq === null;
  const format = legacy
    ? 1
    : bytes.length >= FILE_MAGIC.length &&
        bytes.compare(FILE_MAGIC, 0, FILE_MAGIC.length, 0, FILE_MAGIC.length) === 0
      ? 3
      : 2;
  const records: LogRecord[] = [];
  const damage: Damage[] = [];
  let at = format === 3 ? FILE_MAGIC.length : 0;
  let last = legacy ? 0 : firstSeq - 1;
  const read = (offset: number) =>
    format === 3 ? readRecord3(bytes, offset, file, last) : readRecord2(bytes, offset, file, last, legacy);
  while (at < bytes.length) {
    const record = read(at);
    if (record) {
      records.push(record);
      last = record.seq;
      at = record.bytes.byteOffset - bytes.byteOffset + record.bytes.length;
      continue;
    }
    const next =
      format === 3
        ? nextMark(bytes, at + 1, read)
        : format === 2
          ? nextNumbered(bytes, at + 1, last, read)
          : -1;
    if (next < 0) {
      damage.push({ from: at, to: bytes.length, tail: true });
      break;
    }
    damage.push({ from: at, to: next, tail: false });
    at = next;
  }
  return { records, damage, format };
}

function nextMark(bytes: Buffer, from: number, read: (at: number) => LogRecord | null): number {
  for (let at = bytes.indexOf(RECORD_MARK, from); at >= 0; at = bytes.indexOf(RECORD_MARK, at + 1)) {
    if (read(at)) return at;
  }
  return -1;
}

function nextNumbered(
  bytes: Buffer,
  from: number,
  last: number,
  read: (at: number) => LogRecord | null,
): number {
  let best = -1;
  const number = Buffer.allocUnsafe(8);
  for (let seq = last + 1; seq <= last + RESYNC_SEQS; seq++) {
    number.writeDoubleLE(seq, 0);
    for (
      let i = bytes.indexOf(number, from + 4);
      i >= 0 && (best < 0 || i - 4 < best);
      i = bytes.indexOf(number, i + 1)
    ) {
      if (read(i - 4)) {
        best = i - 4;
        break;
      }
    }
  }
  return best;
}

/** Whether a file is empty or starts with FILE_MAGIC (appends may go on in it). */
function startsWithMagic(file: string): boolean {
  const fd = openSync(file, 'r');
  try {
    const head = Buffer.alloc(FILE_MAGIC.length);
    const read = readSync(fd, head, 0, head.length, 0);
    return read === 0 || (read === head.length && head.equals(FILE_MAGIC));
  } finally {
    closeSync(fd);
  }
}

/** One writev(2); a short write (rare for a regular file) is finished with plain writes. */
function writeAll(fd: number, parts: Buffer[]): number {
  const total = parts.reduce((n, p) => n + p.length, 0);
  const done = writevSync(fd, parts);
  if (done < total) {
    const rest = Buffer.concat(parts).subarray(done);
    for (let at = 0; at < rest.length;) at += writeSync(fd, rest, at, rest.length - at);
  }
  return total;
}

/**
 * Copies bytes of a segment that recovery cannot use into a file beside it, and warns naming that
 * file; null (with a warning) when the copy cannot be written, e.g. on a full disk.
 */
function setAsideBytes(
  file: string,
  offset: number,
  bytes: Uint8Array,
  reason: string,
  warn?: LogWarn,
): string | null {
  const aside = `${file}.damaged-at-${offset}`;
  const fields = { file: path.basename(file), offset, bytes: bytes.length, reason };
  try {
    writeFileSync(aside, bytes, { mode: 0o600 });
  } catch (err) {
    warn?.('write log: damaged bytes skipped, their copy failed', {
      ...fields,
      error: String((err as Error)?.message ?? err),
    });
    return null;
  }
  warn?.('write log: damaged bytes set aside', { ...fields, set_aside: path.basename(aside) });
  return aside;
}

/**
 * Sets aside a record that was read whole but cannot be replayed (e.g. a body that does not
 * decode): its bytes go to a file beside its segment, and a warning names that file.
 */
export function setAside(record: LogRecord, reason: string, warn?: LogWarn): string | null {
  return setAsideBytes(record.file, record.offset, record.bytes, reason, warn);
}

export interface RecoverOptions {
  /** told about every damaged part set aside and every file skipped */
  warn?: LogWarn;
}

/**
 * Reads every segment: the records above `foldedUpTo`, and the last record number. Damaged bytes
 * are set aside (a torn tail is then cut from its file); segments without a record are removed;
 * files whose names do not parse are skipped, and an entry with a segment's name that is not a
 * regular file (a directory) is renamed aside, so the name is free for the appender; each with
 * a warning.
 */
export function recoverLog(
  dir: string,
  foldedUpTo: number,
  options: RecoverOptions = {},
): { records: LogRecord[]; lastSeq: number } {
  const { warn } = options;
  let lastSeq = isRecordNumber(foldedUpTo) ? foldedUpTo : 0;
  const records: LogRecord[] = [];
  for (const name of readdirSync(dir).sort()) {
    if (name !== LEGACY && !LOG_LIKE.test(name)) continue;
    const file = path.join(dir, name);
    const m = SEGMENT.exec(name);
    if (name !== LEGACY && (!m || !isRecordNumber(Number(m[1])))) {
      warn?.('write log: file name does not parse, skipped', { file: name });
      continue;
    }
    if (!isFile(file)) {
      const aside = `${file}.not-a-file-${Date.now()}`;
      try {
        renameSync(file, aside);
        warn?.('write log: not a regular file, renamed aside', {
          file: name,
          renamed_to: path.basename(aside),
        });
      } catch (err) {
        warn?.('write log: not a regular file, skipped', {
          file: name,
          error: String((err as Error)?.message ?? err),
        });
      }
      continue;
    }
    const bytes = readFileSync(file);
    const found = decode(bytes, file, m ? Number(m[1]) : null);
    let kept = true;
    for (const d of found.damage) {
      const reason = d.tail ? 'unreadable to the end of the file' : 'unreadable up to the next whole record';
      kept = setAsideBytes(file, d.from, bytes.subarray(d.from, d.to), reason, warn) !== null && kept;
    }
    const tail = found.damage.find((d) => d.tail);
    if (tail && kept) {
      const fd = openSync(file, 'r+');
      ftruncateSync(fd, tail.from); // the next start does not set the same bytes aside again
      closeSync(fd);
    }
    if (found.records.length === 0 && kept) {
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
    if (decode(readFileSync(legacy), legacy, null).records.every((r) => r.seq <= foldedUpTo))
      rmSync(legacy, { force: true });
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
  constructor(
    private readonly dir: string,
    public lastSeq: number,
    options: AppenderOptions = {},
  ) {
    if (!Number.isSafeInteger(lastSeq) || lastSeq < 0)
      throw new Error(`write log: ${lastSeq} is not a record number to go on from`);
    this.segmentBytes = options.segmentBytes ?? 16 * 1024 * 1024;
    this.segmentMs = options.segmentMs ?? 2000;
    this.open();
  }

  /** Appends records durably, all or none; returns the number of the last one. */
  append(entries: readonly LogAppend[]): number {
    if (entries.length === 0) return this.lastSeq;
    if (
      this.size > FILE_MAGIC.length &&
      (this.size >= this.segmentBytes || performance.now() - this.openedAt >= this.segmentMs)
    )
      this.rotate();
    const parts: Buffer[] = [];
    entries.forEach((e, i) => {
      const head = Buffer.from(e.head);
      const fixed = Buffer.allocUnsafe(FIXED3);
      const bodyLength = e.body.reduce((n, part) => n + part.byteLength, 0);
      RECORD_MARK.copy(fixed, 0);
      fixed.writeUInt32LE(12 + head.length + bodyLength, 8);
      fixed.writeDoubleLE(this.lastSeq + 1 + i, 12);
      fixed.writeUInt32LE(head.length, 20);
      const body = e.body.map((part) =>
        Buffer.isBuffer(part) ? part : Buffer.from(part.buffer, part.byteOffset, part.byteLength),
      );
      let crc = crc32(fixed.subarray(8));
      crc = crc32(head, crc);
      for (const part of body) crc = crc32(part, crc);
      fixed.writeUInt32LE(crc, 4);
      parts.push(fixed, head, ...body);
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
    const file = path.join(this.dir, segmentName(this.lastSeq + 1));
    if (isFile(file) && !startsWithMagic(file)) renameSync(file, `${file}.damaged-at-0`); // no record of it was read
    const fd = openSync(file, 'a', 0o600);
    let size = 0;
    try {
      size = fstatSync(fd).size;
      if (size === 0) size = writeAll(fd, [FILE_MAGIC]);
    } catch (err) {
      closeSync(fd);
      // An empty segment would claim the numbers the current one goes on holding (dropFolded).
      if (size === 0) rmSync(file, { force: true });
      throw err;
    }
    this.fd = fd;
    this.size = size;
    this.openedAt = performance.now();
  }
}
