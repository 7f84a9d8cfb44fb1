// The embedded store's write log: records survive a reopen, numbers keep rising, sealed segments
// are deleted once folded, a torn tail is cut, a log of the first version is read, files are private.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type LogRecord, SegmentedLog } from '../../src/drivers/embedded-log';

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

test('records are appended with rising numbers, read back after a reopen, in files of mode 0600', () => {
  const dir = freshDir();
  const log = new SegmentedLog(dir, 0);
  assert.equal(log.append([entry('s1', 'one'), entry('s2', 'two')]), 2);
  assert.equal(log.append([entry('s1', 'three')]), 3);
  log.close();
  for (const name of files(dir)) assert.equal(statSync(path.join(dir, name)).mode & 0o777, 0o600);
  const reopened = new SegmentedLog(dir, 0);
  assert.deepEqual(texts(reopened.takeRecovered(0)), ['1:s1:one', '2:s2:two', '3:s1:three']);
  assert.equal(reopened.append([entry('s3', 'four')]), 4);
  reopened.close();
  assert.deepEqual(texts(new SegmentedLog(dir, 2).takeRecovered(2)), ['3:s1:three', '4:s3:four'], 'a fold covered 1 and 2');
});

test('sealing starts a new segment; dropping removes only sealed segments folded whole', () => {
  const dir = freshDir();
  const log = new SegmentedLog(dir, 10);
  assert.equal(log.append([entry('s', 'a'), entry('s', 'b')]), 12, 'numbering goes on from the fold state');
  log.seal();
  log.append([entry('s', 'c')]);
  assert.deepEqual(files(dir), ['metric-log.0000000000000011.bin', 'metric-log.0000000000000013.bin']);
  log.dropUpTo(11); // the sealed segment holds 12 too: kept
  assert.equal(files(dir).length, 2);
  log.dropUpTo(12);
  assert.deepEqual(files(dir), ['metric-log.0000000000000013.bin']);
  log.seal();
  log.seal(); // nothing appended since: no empty segment
  log.close();
  assert.deepEqual(texts(new SegmentedLog(dir, 12).takeRecovered(12)), ['13:s:c']);
});

test('a torn last record (an interrupted write) is cut off at open', () => {
  const dir = freshDir();
  const log = new SegmentedLog(dir, 0);
  log.append([entry('s', 'whole')]);
  log.close();
  const [name] = files(dir);
  const file = path.join(dir, name!);
  const sizeBefore = statSync(file).size;
  appendFileSync(file, Buffer.from([200, 0, 0, 0, 1, 2, 3]));
  const reopened = new SegmentedLog(dir, 0);
  assert.equal(statSync(file).size, sizeBefore);
  assert.deepEqual(texts(reopened.takeRecovered(0)), ['1:s:whole']);
  assert.equal(reopened.append([entry('s', 'next')]), 2);
  reopened.close();
  assert.deepEqual(texts(new SegmentedLog(dir, 0).takeRecovered(0)), ['1:s:whole', '2:s:next']);
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
  const log = new SegmentedLog(dir, 6);
  assert.deepEqual(texts(log.takeRecovered(6)), ['7:p1:x', '8:p2:y']);
  assert.equal(log.append([entry('s', 'z')]), 9);
  log.dropUpTo(8);
  assert.ok(!files(dir).includes('metric-log.bin'));
  log.close();
});
