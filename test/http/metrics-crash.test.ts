// A server killed with SIGKILL in the middle of an ingest load keeps every point it acknowledged.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken, request } from '../helpers/server';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crash-test-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

interface Child {
  process: ChildProcess;
  url: string;
}

/** `service serve --port 0 --data <dir>` as a child process; resolves with its URL once listening. */
function startChild(): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--port', '0', '--data', dataDir], {
    cwd: ROOT,
    env: { ...process.env, SERVICE_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve({ process: child, url: m[1]! });
    });
    child.once('exit', (code) => reject(new Error(`server exited early (${code}): ${out}`)));
  });
}

function kill(child: Child): Promise<void> {
  return new Promise((resolve) => {
    child.process.removeAllListeners('exit');
    child.process.once('exit', () => resolve());
    child.process.kill('SIGKILL');
  });
}

test('every acknowledged point survives kill -9', async (t) => {
  const first = await startChild();
  const agent = await createProjectWithToken(first);
  const as = { token: agent.sourceToken, sourceId: agent.sourceId };
  const at = '2026-03-01T12:34:56Z';
  let acked = 0;
  let sent = 0;
  let killing: Promise<void> | null = null;

  // Workers send single points and batches of 10 until the server dies under them.
  const worker = async (batch: boolean) => {
    while (!killing) {
      const points = batch ? 10 : 1;
      sent += points;
      const body = batch
        ? { points: Array.from({ length: 10 }, () => ({ key: 'crash', at, values: { count: 1 } })) }
        : { key: 'crash', at, values: { count: 1 } };
      try {
        const res = await request(first, 'POST', batch ? '/api/v1/metrics/batch' : '/api/v1/metrics', body, as);
        if (res.status !== 201) throw new Error(`unexpected ${res.status}: ${res.text}`);
        acked += points;
      } catch (err) {
        if (!killing) throw err;
        return;
      }
      if (acked >= 1500 && !killing) killing = kill(first);
    }
  };
  await Promise.all(Array.from({ length: 12 }, (_, i) => worker(i % 2 === 1)));
  await killing;

  const second = await startChild();
  try {
    const query = new URLSearchParams({ key: 'crash', from: at, to: at, granularity: '1h' });
    const res = await request(second, 'GET', `/api/v1/metrics?${query}`, undefined, as);
    const stored = (res.body.data.values[0] as { count: number }).count;
    t.diagnostic(`sent ${sent}, acknowledged ${acked}, stored after restart ${stored}`);
    assert.ok(stored >= acked, `stored ${stored} < acknowledged ${acked}`);
    assert.ok(stored <= sent, `stored ${stored} > sent ${sent}`);
    const system = await request(second, 'GET', `/api/v1/metrics?${new URLSearchParams({ from: at, to: at, granularity: '1h' })}`, undefined, as);
    assert.deepEqual(system.body.data.values[0], { count: stored, keys: { crash: stored } });
  } finally {
    await kill(second);
  }
});
