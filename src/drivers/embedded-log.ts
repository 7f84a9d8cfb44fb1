// The embedded store's write log: append-only segment files beside service.db
// (`metric-log.<first record number>.bin`, mode 0600). The metric writer appends the points of
// each group commit with one write(2) before they are acknowledged; like service.db's WAL with
// `synchronous = NORMAL` (no fsync per commit), a record in the file survives a crash or `kill -9`
// of the process, and an operating-system crash may lose the last ones.
//
// Segments let folding and appending overlap: when a fold begins, the active segment is sealed and
// appends go on into a new one; once the fold has committed, the sealed segments it covered are
// deleted. After a restart every segment is read back and the records the fold state does not
// cover are folded again.
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

interface Segment {
  file: string;
  /** the last record number it holds (the one before its first when it is empty) */
  lastSeq: number;
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

export class SegmentedLog {
  private readonly sealed: Segment[] = [];
  private active!: Segment;
  private fd = -1;
  private size = 0;
  /** the records found at open, for the writer's recovery */
  private found: LogRecord[] = [];
  lastSeq: number;

  /** Opens the log in `dir`; `foldedUpTo` is the last record number already folded. */
  constructor(private readonly dir: string, foldedUpTo: number) {
    let last = foldedUpTo;
    for (const name of logFiles(dir).names) {
      const file = path.join(dir, name);
      const bytes = readFileSync(file);
      const { records, validLength } = decode(bytes, name === LEGACY);
      if (validLength < bytes.length) {
        const fd = openSync(file, 'r+');
        ftruncateSync(fd, validLength); // a torn tail: a write cut short, never acknowledged
        closeSync(fd);
      }
      if (records.length === 0) {
        rmSync(file, { force: true });
        continue;
      }
      const segmentLast = records.reduce((max, r) => Math.max(max, r.seq), 0);
      this.sealed.push({ file, lastSeq: segmentLast });
      for (const r of records) this.found.push(r);
      last = Math.max(last, segmentLast);
    }
    this.found.sort((a, b) => a.seq - b.seq);
    this.lastSeq = last;
    this.openActive();
  }

  /** Records found at open with a number above `after`, oldest first (then forgotten). */
  takeRecovered(after: number): LogRecord[] {
    const records = this.found.filter((r) => r.seq > after);
    this.found = [];
    return records;
  }

  /** Appends records durably, all or none; returns the number of the last one. */
  append(entries: readonly LogAppend[]): number {
    if (entries.length === 0) return this.lastSeq;
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
    this.active.lastSeq = this.lastSeq;
    return this.lastSeq;
  }

  /**
   * Seals the active segment (a fold begins): later appends go to a new one. If the new one cannot
   * be created (a full disk), appends go on in the old one, which is then removed at a later fold.
   */
  seal(): void {
    if (this.size === 0) return;
    const old = { fd: this.fd, size: this.size, active: this.active };
    try {
      this.openActive();
    } catch {
      return;
    }
    closeSync(old.fd);
    this.sealed.push(old.active);
  }

  /** Deletes the sealed segments whose records are all folded (up to `seq`). */
  dropUpTo(seq: number): void {
    for (let i = this.sealed.length - 1; i >= 0; i--) {
      const segment = this.sealed[i]!;
      if (segment.lastSeq > seq) continue;
      rmSync(segment.file, { force: true });
      this.sealed.splice(i, 1);
    }
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  private openActive(): void {
    const file = path.join(this.dir, segmentName(this.lastSeq + 1));
    this.fd = openSync(file, 'a', 0o600);
    this.size = fstatSync(this.fd).size;
    this.active = { file, lastSeq: this.lastSeq };
  }
}
