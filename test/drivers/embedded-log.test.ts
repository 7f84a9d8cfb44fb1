// The embedded store's write-log file: records survive a reopen, sequence numbers keep rising,
// folded records are never handed back, a torn tail is cut, and the file is private.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openFileLog } from '../../src/drivers/embedded-log';

const dir = mkdtempSync(path.join(os.tmpdir(), 'metric-log-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const entry = (sourceId: string, text: string) => ({ sourceId, body: Buffer.from(text) });
const texts = (records: Array<{ id: number; sourceId: string; body: Uint8Array }>) =>
  records.map((r) => `${r.id}:${r.sourceId}:${Buffer.from(r.body).toString()}`);

test('records are appended with rising numbers, read back after a reopen, and the file is 0600', async () => {
  const file = path.join(dir, 'a.bin');
  let folded = 0;
  const log = openFileLog(file, () => folded);
  assert.equal(await log.append([entry('s1', 'one'), entry('s2', 'two')]), 2);
  assert.equal(await log.append([entry('s1', 'three')]), 3);
  log.close();
  assert.equal(statSync(file).mode & 0o777, 0o600);
  const reopened = openFileLog(file, () => folded);
  assert.deepEqual(texts(await reopened.unfolded()), ['1:s1:one', '2:s2:two', '3:s1:three']);
  folded = 2; // a fold committed up to 2, then the process died before emptying the file
  assert.deepEqual(texts(await reopened.unfolded()), ['3:s1:three']);
  assert.equal(await reopened.append([entry('s3', 'four')]), 4);
  reopened.close();
});

test('a fold that covered every record empties the file; numbering goes on from the fold state', async () => {
  const file = path.join(dir, 'b.bin');
  let folded = 0;
  const log = openFileLog(file, () => folded);
  await log.append([entry('s', 'x'), entry('s', 'y')]);
  log.folded(1); // something newer is in the file: kept
  assert.equal(statSync(file).size > 0, true);
  folded = 2;
  log.folded(2);
  assert.equal(statSync(file).size, 0);
  log.close();
  const reopened = openFileLog(file, () => folded);
  assert.equal(await reopened.append([entry('s', 'z')]), 3);
  assert.deepEqual(texts(await reopened.unfolded()), ['3:s:z']);
  reopened.close();
});

test('a torn last record (an interrupted write) is cut off at open', async () => {
  const file = path.join(dir, 'c.bin');
  const log = openFileLog(file, () => 0);
  await log.append([entry('s', 'whole')]);
  log.close();
  const sizeBefore = statSync(file).size;
  appendFileSync(file, Buffer.from([200, 0, 0, 0, 1, 2, 3]));
  const reopened = openFileLog(file, () => 0);
  assert.equal(statSync(file).size, sizeBefore);
  assert.deepEqual(texts(await reopened.unfolded()), ['1:s:whole']);
  assert.equal(await reopened.append([entry('s', 'next')]), 2);
  assert.deepEqual(texts(await reopened.unfolded()), ['1:s:whole', '2:s:next']);
  reopened.close();
});
