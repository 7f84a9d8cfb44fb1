// The embedded store's write log: an append-only file beside service.db (metric-log.bin, mode
// 0600). A group commit's entries are written with one write(2) before the points are
// acknowledged; like service.db's WAL with `synchronous = NORMAL` (no fsync per commit), a record
// in the file survives a crash or `kill -9` of the process, and an operating-system crash may lose
// the last ones. A table in service.db (the first version) sent every logged byte through the WAL,
// the database and a freelist, and left the file about twice the size per stored leaf.
//
// Records carry increasing sequence numbers. A fold records the last one it applied in
// metric_fold_state, in its own transaction; records up to it are never replayed, and once a
// fold has covered every record the file is emptied. Record: u32 length of what follows, f64
// sequence number, u16 source id length, source id (UTF-8), body.
import { closeSync, ftruncateSync, fstatSync, openSync, readFileSync, writeSync, writevSync } from 'node:fs';
import type { LogEntry, LogRecord, WriteLog } from './types';

const HEAD = 4 + 8 + 2;

export interface FileLog extends WriteLog {
  /** After a fold committed up to `seq`: empties the file when nothing newer is in it. */
  folded(seq: number): void;
  close(): void;
}

/** A commit's records as buffers to write in order (bodies are not copied). */
function encode(entries: readonly LogEntry[], firstSeq: number): Buffer[] {
  const parts: Buffer[] = [];
  entries.forEach((e, i) => {
    const source = Buffer.from(e.sourceId);
    const head = Buffer.alloc(HEAD);
    head.writeUInt32LE(8 + 2 + source.length + e.body.byteLength, 0);
    head.writeDoubleLE(firstSeq + i, 4);
    head.writeUInt16LE(source.length, 12);
    parts.push(head, source, Buffer.from(e.body.buffer, e.body.byteOffset, e.body.byteLength));
  });
  return parts;
}

/** The whole records of a file's bytes, and where the last whole one ends (a torn tail is cut). */
function decode(bytes: Buffer): { records: LogRecord[]; validLength: number } {
  const records: LogRecord[] = [];
  let at = 0;
  while (at + HEAD <= bytes.length) {
    const length = bytes.readUInt32LE(at);
    if (at + 4 + length > bytes.length || length < 10) break;
    const seq = bytes.readDoubleLE(at + 4);
    const sourceLength = bytes.readUInt16LE(at + 12);
    const sourceId = bytes.toString('utf8', at + HEAD, at + HEAD + sourceLength);
    const body = bytes.subarray(at + HEAD + sourceLength, at + 4 + length);
    records.push({ id: seq, sourceId, body });
    at += 4 + length;
  }
  return { records, validLength: at };
}

/** One writev(2); a short write (rare for a regular file) is finished with plain writes. */
function writeAll(fd: number, parts: Buffer[]): number {
  const total = parts.reduce((n, p) => n + p.length, 0);
  let done = writevSync(fd, parts);
  if (done < total) {
    const rest = Buffer.concat(parts).subarray(done);
    for (let at = 0; at < rest.length; ) at += writeSync(fd, rest, at, rest.length - at);
    done = total;
  }
  return total;
}

/** Opens (or creates) the log; `foldedUpTo` is the last sequence number already applied. */
export function openFileLog(file: string, foldedUpTo: () => number): FileLog {
  const fd = openSync(file, 'a+', 0o600);
  const found = decode(readFileSync(file));
  if (found.validLength < fstatSync(fd).size) ftruncateSync(fd, found.validLength); // a torn tail
  let size = found.validLength;
  let lastSeq = found.records.reduce((max, r) => Math.max(max, r.id), foldedUpTo());

  return {
    async append(entries) {
      if (entries.length === 0) return lastSeq;
      let written: number;
      try {
        written = writeAll(fd, encode(entries, lastSeq + 1));
      } catch (err) {
        ftruncateSync(fd, size); // no part of a failed append stays (e.g. a full disk)
        throw err;
      }
      size += written;
      lastSeq += entries.length;
      return lastSeq;
    },

    async unfolded() {
      const upTo = foldedUpTo();
      return decode(readFileSync(file)).records.filter((r) => r.id > upTo);
    },

    folded(seq) {
      if (seq < lastSeq) return;
      ftruncateSync(fd, 0);
      size = 0;
    },

    close() {
      closeSync(fd);
    },
  };
}
