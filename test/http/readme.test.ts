// The README's walk-through, run as a newcomer would paste it: every ```sh block that starts with
// the API base URL runs in bash against a real server (its URL substituted), so it cannot drift.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server';

const README = readFileSync(path.join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
const BASE = 'http://127.0.0.1:4000';
const blocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)]
  .map((m) => m[1]!)
  .filter((b) => b.startsWith(`B=${BASE}/api/v1`));

/** bash -c block, asynchronously: the server answers from this same process. */
function bash(server: TestServer, block: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', block.replaceAll(BASE, server.url)], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => resolve({ code, out, err }));
  });
}

async function run(server: TestServer, block: string) {
  const res = await bash(server, block);
  assert.equal(res.code, 0, res.err);
  return res;
}

describe('README walk-through', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.stop());

  test('the README has the first-run and the later-session blocks', () => {
    assert.equal(blocks.length, 2, 'two blocks start with the base URL');
    assert.match(README, /bootstraps itself in three calls .*\n.*five calls in all/);
    assert.equal((blocks[0]!.match(/\bcurl /g) ?? []).length, 5, 'five curl calls in the first block');
  });

  test('first run: every call answers as the README says, the point reads back', async () => {
    const { out, err } = await run(server, blocks[0]!);
    assert.deepEqual(err.trim().split('\n'), ['signup: 201', 'project: 201', 'source token: 201']);
    assert.match(out, /track: 201/);
    assert.match(out, /read: 200/);
    assert.match(out, /"values":\[\{\},\{"count":1\},\{\}\]/);
  });

  test('running it again: signup answers 422, as the README says; the later-session block works', async () => {
    const again = await bash(server, blocks[0]!);
    assert.match(again.err, /^signup: 422$/m);
    const { out, err } = await run(server, blocks[1]!);
    assert.deepEqual(err.trim().split('\n'), ['login: 201', 'sources: 200', 'source token: 201']);
    assert.match(out, /read: 200/);
    assert.match(out, /"values":\[\{\},\{"count":1\},\{\}\]/);
  });
});
