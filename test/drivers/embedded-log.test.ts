// The embedded store's write log: records survive a reopen with rising numbers, a new segment
// starts by size or age, folded segments are deleted (never the newest), a torn tail is cut, a log
// of the first version is read, and the files are private.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LogAppender, type LogRecord, dropFolded, recoverLog } from '../../src/drivers/embedded-log';

const root = mkdtempSync(path.join(os.tmpdir(), 'metric-log-'));
after(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => {
  const dir = path.join(root, String(++dirs));
  mkdirSync(dir);
  return dir;
};

const entry = (head: string, text: string) => ({ head, body: [Buffer.from(text.slice(0, 2)), Buffer.from(text.slice(2))] });
const texts = (records: LogRecord[]) => records.map((r) => `${r.seq}:${r.head ?? r.sourceId}:${Buffer.from(r.body).toString()}`);
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
  assert.equal(log.append([entry('s', 'a'), entry('s', 'b')]), 12, 'numbering goes on from where the log was');
  log.append([entry('s', 'c')]); // the segment is over its size: a new one
  log.append([entry('s', 'd')]);
  assert.deepEqual(files(dir), ['metric-log.0000000000000011.bin', 'metric-log.0000000000000013.bin', 'metric-log.0000000000000014.bin']);
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
  writeFileSync(path.join(dir, 'metric-log.bin'), Buffer.concat([record(7, 'p1', 'x'), record(8, 'p2', 'y')]));
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
