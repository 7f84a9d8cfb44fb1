// The embedded store's write log: records survive a reopen with rising numbers, a new segment
// starts by size or age, folded segments are deleted (never the newest), a torn tail is cut, a log
// of the first version is read, and the files are private. Issue 27: damage in a segment (a head
// or body edited, a huge length prefix, a NaN record number, a directory with a segment's name)
// never hides the records after it; what cannot be read is set aside in a file beside the log
// with a warning naming it, and segments of the previous format (no checksums) are still read.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  LogAppender,
  type LogRecord,
  dropFolded,
  logFiles,
  recoverLog,
  segmentName,
} from '../../src/drivers/embedded/log';

const root = mkdtempSync(path.join(os.tmpdir(), 'metric-log-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => {
  const dir = path.join(root, String(++dirs));
  mkdirSync(dir);
  return dir;
};

const entry = (head: string, text: string) => ({
  head,
  body: [Buffer.from(text.slice(0, 2)), Buffer.from(text.slice(2))],
});
const texts = (records: LogRecord[]) =>
  records.map((r) => `${r.seq}:${r.head ?? r.sourceId}:${Buffer.from(r.body).toString()}`);
const files = (dir: string) => readdirSync(dir).sort();

test('records are appended with rising numbers, read back after a restart, in files of mode 0600', () => {
  const dir = freshDir();
  const log = new LogAppender(dir, 0);
  assert.equal(log.append([entry('s1', 'one'), entry('s2', 'two')]), 2);
  assert.equal(log.append([entry('s1', 'three')]), 3);
  log.close();
  for (const name of files(dir)) assert.equal(statSync(path.join(dir, name)).mode & 0o777, 0o600);
  const found = recoverLog(dir, 0);
  assert.deepEqual(texts(found.records), ['1:s1:one', '2:s2:two', '3:s1:three']);
  assert.equal(found.lastSeq, 3);
  const next = new LogAppender(dir, found.lastSeq);
  assert.equal(next.append([entry('s3', 'four')]), 4);
  next.close();
  assert.deepEqual(texts(recoverLog(dir, 2).records), ['3:s1:three', '4:s3:four'], 'a fold covered 1 and 2');
});

test('a new segment starts past its size or age; folded segments go, the newest stays', async () => {
  const dir = freshDir();
  const log = new LogAppender(dir, 10, { segmentBytes: 1, segmentMs: 60_000 });
  assert.equal(
    log.append([entry('s', 'a'), entry('s', 'b')]),
    12,
    'numbering goes on from where the log was',
  );
  log.append([entry('s', 'c')]); // the segment is over its size: a new one
  log.append([entry('s', 'd')]);
  assert.deepEqual(files(dir), [
    'metric-log.0000000000000011.bin',
    'metric-log.0000000000000013.bin',
    'metric-log.0000000000000014.bin',
  ]);
  dropFolded(dir, 12); // the first segment holds 11 and 12: folded
  assert.deepEqual(files(dir), ['metric-log.0000000000000013.bin', 'metric-log.0000000000000014.bin']);
  dropFolded(dir, 100); // all folded, but the newest segment is the one being appended to
  assert.deepEqual(files(dir), ['metric-log.0000000000000014.bin']);
  log.close();
  const aging = new LogAppender(freshDir(), 0, { segmentMs: 5 });
  aging.append([entry('s', 'x')]);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(aging.append([entry('s', 'y')]), 2);
  aging.close();
});

test('a torn last record (an interrupted write) is cut off by the recovery', () => {
  const dir = freshDir();
  const log = new LogAppender(dir, 0);
  log.append([entry('s', 'whole')]);
  log.close();
  const [name] = files(dir);
  const file = path.join(dir, name!);
  const sizeBefore = statSync(file).size;
  appendFileSync(file, Buffer.from([200, 0, 0, 0, 1, 2, 3]));
  const found = recoverLog(dir, 0);
  assert.equal(statSync(file).size, sizeBefore);
  assert.deepEqual(texts(found.records), ['1:s:whole']);
  const next = new LogAppender(dir, found.lastSeq);
  assert.equal(next.append([entry('s', 'next')]), 2);
  next.close();
  assert.deepEqual(texts(recoverLog(dir, 0).records), ['1:s:whole', '2:s:next']);
});

test('a first-version log (metric-log.bin, records naming their source) is read, then dropped once folded', () => {
  const dir = freshDir();
  const record = (seq: number, sourceId: string, body: string) => {
    const id = Buffer.from(sourceId);
    const head = Buffer.alloc(14);
    head.writeUInt32LE(8 + 2 + id.length + body.length, 0);
    head.writeDoubleLE(seq, 4);
    head.writeUInt16LE(id.length, 12);
    return Buffer.concat([head, id, Buffer.from(body)]);
  };
  writeFileSync(
    path.join(dir, 'metric-log.bin'),
    Buffer.concat([record(7, 'p1', 'x'), record(8, 'p2', 'y')]),
  );
  const found = recoverLog(dir, 6);
  assert.deepEqual(texts(found.records), ['7:p1:x', '8:p2:y']);
  const log = new LogAppender(dir, found.lastSeq);
  assert.equal(log.append([entry('s', 'z')]), 9);
  dropFolded(dir, 7);
  assert.ok(files(dir).includes('metric-log.bin'), 'record 8 is not folded yet');
  dropFolded(dir, 8);
  assert.ok(!files(dir).includes('metric-log.bin'));
  log.close();
});

// --- damage (issue 27) ---

const HEAD = JSON.stringify({ id: 'src', timeZone: 'UTC', beginningOfWeek: 1, granularities: ['1h'] });

/** A segment of `count` records numbered from `first`, one append each, body `point <n>`. */
function segmentOf(dir: string, first: number, count: number): string {
  const log = new LogAppender(dir, first - 1);
  for (let i = 0; i < count; i++) log.append([entry(HEAD, `point ${first + i}`)]);
  log.close();
  return path.join(dir, segmentName(first));
}

/** The offsets of the records of an undamaged segment, by record number. */
function offsets(dir: string): Map<number, LogRecord> {
  return new Map(recoverLog(dir, 0).records.map((r) => [r.seq, r]));
}

function recoverWarned(dir: string) {
  const warnings: Array<{ msg: string; fields: Record<string, unknown> }> = [];
  const found = recoverLog(dir, 0, { warn: (msg, fields) => warnings.push({ msg, fields }) });
  return { ...found, warnings, seqs: found.records.map((r) => r.seq) };
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/** Edits bytes of the file in place. */
function edit(file: string, at: number, bytes: Buffer): void {
  const all = readFileSync(file);
  bytes.copy(all, at);
  writeFileSync(file, all);
}

/** The one damaged part was set aside: a file beside the segment holding exactly the record's bytes, named in a warning. */
function assertSetAside(
  dir: string,
  warnings: Array<{ msg: string; fields: Record<string, unknown> }>,
  record: LogRecord,
) {
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  const aside = String(warnings[0]!.fields.set_aside);
  assert.match(warnings[0]!.msg, /set aside/);
  assert.ok(files(dir).includes(aside), `${aside} is beside the log`);
  assert.deepEqual(
    readFileSync(path.join(dir, aside)),
    Buffer.from(record.bytes),
    'the damaged record is kept as it was',
  );
  assert.equal(statSync(path.join(dir, aside)).mode & 0o777, 0o600);
}

test('a record whose head is not JSON is set aside; every other record is replayed', () => {
  const dir = freshDir();
  const file = segmentOf(dir, 1, 40);
  const record = offsets(dir).get(5)!;
  const damaged = Buffer.from(record.bytes);
  edit(file, record.offset + 24, Buffer.from('not json')); // the head starts after the 24 fixed bytes
  const { seqs, warnings, lastSeq } = recoverWarned(dir);
  assert.deepEqual(
    seqs,
    range(1, 40).filter((n) => n !== 5),
  );
  assert.equal(lastSeq, 40);
  assertSetAside(dir, warnings, {
    ...record,
    bytes: readFileSync(file).subarray(record.offset, record.offset + damaged.length),
  });
});

test('a record whose body is garbage is set aside; every other record is replayed', () => {
  const dir = freshDir();
  const file = segmentOf(dir, 1, 40);
  const record = offsets(dir).get(17)!;
  edit(file, record.offset + record.bytes.length - 5, Buffer.from('\xff\x00garbage'.slice(0, 5), 'latin1'));
  const { seqs, warnings } = recoverWarned(dir);
  assert.deepEqual(
    seqs,
    range(1, 40).filter((n) => n !== 17),
  );
  assertSetAside(dir, warnings, {
    ...record,
    bytes: readFileSync(file).subarray(record.offset, record.offset + record.bytes.length),
  });
});

for (const damagedSeq of [1, 20]) {
  test(`a huge length prefix in record ${damagedSeq} of 40 loses that record only`, () => {
    const dir = freshDir();
    const file = segmentOf(dir, 1, 40);
    const record = offsets(dir).get(damagedSeq)!;
    const huge = Buffer.alloc(4);
    huge.writeUInt32LE(0xfffffff0, 0);
    edit(file, record.offset + 8, huge);
    const sizeBefore = statSync(file).size;
    const { seqs, warnings } = recoverWarned(dir);
    assert.deepEqual(
      seqs,
      range(1, 40).filter((n) => n !== damagedSeq),
    );
    assert.equal(statSync(file).size, sizeBefore, 'the segment is not truncated');
    assertSetAside(dir, warnings, {
      ...record,
      bytes: readFileSync(file).subarray(record.offset, record.offset + record.bytes.length),
    });
    // The next start finds the same: nothing more is lost, numbering goes on after 40.
    const log = new LogAppender(dir, 40);
    assert.equal(log.append([entry(HEAD, 'after')]), 41);
    log.close();
    assert.deepEqual(
      recoverLog(dir, 0).records.map((r) => r.seq),
      [...range(1, 40).filter((n) => n !== damagedSeq), 41],
    );
  });
}

test('a NaN record number: the record is set aside, never names a file; a segment named NaN is skipped with a warning', () => {
  const dir = freshDir();
  const file = segmentOf(dir, 1, 40);
  const record = offsets(dir).get(40)!; // the last record: a NaN there once named the next segment
  const nan = Buffer.alloc(8);
  nan.writeDoubleLE(NaN, 0);
  edit(file, record.offset + 12, nan);
  writeFileSync(path.join(dir, 'metric-log.0000000000000NaN.bin'), 'left by an older version');
  const { seqs, warnings, lastSeq } = recoverWarned(dir);
  assert.deepEqual(seqs, range(1, 39));
  assert.equal(lastSeq, 39);
  assert.deepEqual(warnings.map((w) => w.msg).sort(), [
    'write log: damaged bytes set aside',
    'write log: file name does not parse, skipped',
  ]);
  assert.throws(() => segmentName(NaN), /not a record number/);
  assert.throws(() => segmentName(1.5), /not a record number/);
  assert.throws(() => new LogAppender(dir, NaN), /not a record number/);
  const log = new LogAppender(dir, lastSeq);
  assert.equal(log.append([entry(HEAD, 'next')]), 40);
  log.close();
  assert.ok(files(dir).includes(segmentName(40)));
  assert.ok(!files(dir).some((n) => /NaN\.bin$/.test(n) && n !== 'metric-log.0000000000000NaN.bin'));
  assert.deepEqual(
    logFiles(dir).names,
    [segmentName(1), segmentName(40)],
    'a copy of the log leaves the NaN file out',
  );
});

test("a directory with a segment's name is renamed aside with a warning; appends go on", () => {
  const dir = freshDir();
  segmentOf(dir, 1, 40);
  mkdirSync(path.join(dir, segmentName(41))); // where the next start's segment goes
  mkdirSync(path.join(dir, segmentName(7)));
  const { seqs, warnings, lastSeq } = recoverWarned(dir);
  assert.deepEqual(seqs, range(1, 40));
  assert.equal(warnings.length, 2);
  for (const w of warnings) assert.match(w.msg, /not a regular file/);
  const log = new LogAppender(dir, lastSeq);
  assert.equal(log.append([entry(HEAD, 'next')]), 41);
  log.close();
  assert.deepEqual(
    recoverLog(dir, 0).records.map((r) => r.seq),
    range(1, 41),
  );
});

/** A segment in the previous format (no file magic, no mark, no checksum). */
function oldSegment(
  dir: string,
  first: number,
  count: number,
  damage?: (seq: number, record: Buffer) => Buffer,
): string {
  const parts: Buffer[] = [];
  for (let seq = first; seq < first + count; seq++) {
    const head = Buffer.from(HEAD);
    const body = Buffer.from(`point ${seq}`);
    const fixed = Buffer.alloc(16);
    fixed.writeUInt32LE(12 + head.length + body.length, 0);
    fixed.writeDoubleLE(seq, 4);
    fixed.writeUInt32LE(head.length, 12);
    const record = Buffer.concat([fixed, head, body]);
    parts.push(damage ? damage(seq, record) : record);
  }
  const file = path.join(dir, segmentName(first));
  writeFileSync(file, Buffer.concat(parts));
  return file;
}

test('a segment of the previous format is read; a huge length prefix or a head that is not JSON there loses that record only', () => {
  const dir = freshDir();
  oldSegment(dir, 1, 40);
  assert.deepEqual(texts(recoverLog(dir, 0).records).slice(0, 2), [`1:${HEAD}:point 1`, `2:${HEAD}:point 2`]);
  const log = new LogAppender(dir, 40);
  assert.equal(log.append([entry(HEAD, 'new format')]), 41, 'new records go on in the new format');
  log.close();
  assert.deepEqual(
    recoverLog(dir, 0).records.map((r) => r.seq),
    range(1, 41),
  );

  for (const [damagedSeq, how] of [
    [1, 'length'],
    [20, 'length'],
    [5, 'head'],
  ] as const) {
    const old = freshDir();
    oldSegment(old, 1, 40, (seq, record) => {
      if (seq !== damagedSeq) return record;
      if (how === 'length') record.writeUInt32LE(0xfffffff0, 0);
      else record.write('{not json', 16, 'latin1');
      return record;
    });
    const { seqs, warnings } = recoverWarned(old);
    assert.deepEqual(
      seqs,
      range(1, 40).filter((n) => n !== damagedSeq),
      `${how} of record ${damagedSeq}`,
    );
    assert.equal(warnings.length, 1);
  }
});
