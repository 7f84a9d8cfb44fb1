// Memory stays bounded under unfinished bodies (SPEC 9). Issue 9: 300 connections that never finish
// a gzip body added 114 MB, 200 unfinished 1 MB bodies 192 MB, and Node dropped them after 300 s.
// The server runs as a child process with its default body cap, so its RSS is its own.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { createProjectWithToken, request } from '../helpers/server';
import { connect, postHead, sleep, type RawConnection } from '../helpers/raw-http';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'body-memory-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

const REQUEST_TIMEOUT_MS = 6_000;

function startChild(): Promise<{ process: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', 'serve', '--port', '0', '--data', dataDir],
    {
      cwd: ROOT,
      env: {
        ...process.env,
        SERVICE_LOG_LEVEL: 'error',
        SERVICE_HEADERS_TIMEOUT_MS: '5000',
        SERVICE_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
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

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m![1]) * 1024;
}

/** Opens `count` connections `batch` at a time, each started by `start`. */
async function openMany(
  url: string,
  count: number,
  start: (conn: RawConnection) => void,
): Promise<RawConnection[]> {
  const conns: RawConnection[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, count - i) }, () => connect(url)));
    for (const conn of batch) start(conn);
    conns.push(...batch);
  }
  return conns;
}

test('300 unfinished gzip bodies and 200 unfinished 1 MB bodies: RSS grows under 64 MB, a normal client is served, all are closed at the time-out', async () => {
  const child = await startChild();
  try {
    const agent = await createProjectWithToken(child);
    const as = { token: agent.sourceToken, sourceId: agent.sourceId };
    const point = (n: number) => ({ key: 'normal', at: '2026-01-24T10:00:00Z', values: { n } });
    // Warm up with ordinary traffic first, so the baseline is a server that has grown its young
    // generation and connection pools, not one that has only just started.
    for (let round = 0; round < 60; round++) {
      const replies = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          i % 2
            ? request(child, 'GET', '/api/v1/health')
            : request(child, 'POST', '/api/v1/metrics', point(1), as),
        ),
      );
      assert.ok(replies.every((r) => r.status < 300));
    }
    await sleep(500);
    const baseline = rssBytes(child.process.pid!);

    const head = (length: number, gzip: boolean) =>
      postHead('/api/v1/metrics', length, {
        Authorization: `Bearer ${agent.sourceToken}`,
        'X-Service-Source-Id': agent.sourceId,
        ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
      });
    const inflating = gzipSync(Buffer.alloc(1_000_000, ' '));
    const gzipConns = await openMany(child.url, Number(process.env.NG ?? 300), (c) => {
      c.socket.write(head(inflating.length + 100, true));
      c.socket.write(inflating.subarray(0, inflating.length - 8)); // the gzip stream never ends
    });
    const plain = Buffer.alloc(999_999, ' ');
    const plainConns = await openMany(child.url, Number(process.env.NP ?? 200), (c) => {
      c.socket.write(head(1_000_000, false));
      c.socket.write(plain); // one byte short, for ever
    });

    let peak = 0;
    for (let i = 0; i < 20; i++) {
      peak = Math.max(peak, rssBytes(child.process.pid!));
      await sleep(100);
    }
    // A normal client is still served while all of that is held open.
    assert.equal((await request(child, 'GET', '/api/v1/health')).status, 200);
    assert.equal((await request(child, 'POST', '/api/v1/metrics', point(2), as)).status, 201);
    const read = await request(
      child,
      'GET',
      '/api/v1/metrics?key=normal&from=2026-01-24T10:00:00Z&to=2026-01-24T10:00:00Z&granularity=1h',
      undefined,
      as,
    );
    assert.deepEqual(read.body.data.values, [{ n: 1502 }]);
    peak = Math.max(peak, rssBytes(child.process.pid!));
    const growth = peak - baseline;
    console.log(
      `body memory: baseline ${(baseline / 2 ** 20).toFixed(1)} MiB, peak ${(peak / 2 ** 20).toFixed(1)} MiB, growth ${(growth / 2 ** 20).toFixed(1)} MiB`,
    );
    // Bodies in flight are capped at 8 MB (server.body_bytes_in_flight); the rest is 500 sockets,
    // their parsers and the heap's own growth. Measured 40.6-50.4 MiB over six runs of this code
    // and of the code before (2026-11-27), against 306 MB before the cap: the bound holds that
    // order of magnitude without failing on the allocator's spread.
    assert.ok(growth < 64 * 2 ** 20, `RSS grew ${(growth / 2 ** 20).toFixed(1)} MiB`);

    // Every unfinished request is closed at the request time-out, not after Node's 300 s.
    const all = [...gzipConns, ...plainConns];
    const closed = await Promise.race([
      Promise.all(all.map((c) => c.closed)).then(() => true),
      sleep(REQUEST_TIMEOUT_MS + 5_000).then(() => false),
    ]);
    assert.ok(closed, 'every connection was closed by the server');
    assert.equal((await request(child, 'GET', '/api/v1/health')).status, 200);
  } finally {
    child.process.kill('SIGTERM');
    await new Promise((resolve) => child.process.once('exit', resolve));
  }
});
