// A server killed with SIGKILL in the middle of an ingest load keeps every point it acknowledged.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken, request, embeddedOnly } from '../helpers/server';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crash-test-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

interface Child {
  process: ChildProcess;
  url: string;
}

/** `service serve --port 0 --data <dir>` as a child process; resolves with its URL once listening. */
function startChild(): Promise<Child> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/main.ts', 'serve', '--port', '0', '--data', dataDir],
    {
      cwd: ROOT,
      env: { ...process.env, SERVICE_LOG_LEVEL: 'error' },
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

function kill(child: Child): Promise<void> {
  return new Promise((resolve) => {
    child.process.removeAllListeners('exit');
    child.process.once('exit', () => resolve());
    child.process.kill('SIGKILL');
  });
}

const GRANULARITIES = ['1m', '1h', '1d', '1w', '1mo', '1y'];
const AT = '2026-03-01T12:34:56Z';

interface Tally {
  acked: number;
  sent: number;
}

/** Loads the server with single points and batches of 10 until it is killed after `killAt` acks. */
async function loadUntilKilled(
  server: Child,
  as: { token: string; sourceId: string },
  killAt: number,
  tally: Tally,
): Promise<void> {
  let acked = 0;
  let killing: Promise<void> | null = null;
  const worker = async (batch: boolean) => {
    while (!killing) {
      const points = batch ? 10 : 1;
      tally.sent += points;
      const body = batch
        ? { points: Array.from({ length: 10 }, () => ({ key: 'crash', at: AT, values: { count: 1 } })) }
        : { key: 'crash', at: AT, values: { count: 1 } };
      try {
        const res = await request(
          server,
          'POST',
          batch ? '/api/v1/metrics/batch' : '/api/v1/metrics',
          body,
          as,
        );
        if (res.status !== 201) throw new Error(`unexpected ${res.status}: ${res.text}`);
        acked += points;
        tally.acked += points;
      } catch (err) {
        if (!killing) throw err;
        return;
      }
      if (acked >= killAt && !killing) killing = kill(server);
    }
  };
  await Promise.all(Array.from({ length: 12 }, (_, i) => worker(i % 2 === 1)));
  await killing;
}

/** The count stored under every granularity, which must agree with each other and the system key. */
async function storedCount(server: Child, as: { token: string; sourceId: string }): Promise<number> {
  const counts: number[] = [];
  for (const granularity of GRANULARITIES) {
    const metric = await request(
      server,
      'GET',
      `/api/v1/metrics?${new URLSearchParams({ key: 'crash', from: AT, to: AT, granularity })}`,
      undefined,
      as,
    );
    const system = await request(
      server,
      'GET',
      `/api/v1/metrics?${new URLSearchParams({ from: AT, to: AT, granularity })}`,
      undefined,
      as,
    );
    const count = (metric.body.data.values[0] as { count: number }).count;
    assert.deepEqual(
      system.body.data.values[0],
      { count, keys: { crash: count } },
      `system key at ${granularity}`,
    );
    counts.push(count);
  }
  assert.ok(
    counts.every((c) => c === counts[0]),
    `granularities disagree: ${counts.join(', ')}`,
  );
  return counts[0]!;
}

// Five rounds on one data directory, killed after different amounts of work, so that kills land
// with points in the write log, in the gathering window and in the middle of folds (whose short
// transactions a kill can cut between): every run replays what the one before left.
test(
  'every acknowledged point survives kill -9, five times over, once each',
  embeddedOnly(
    "the embedded store's write log (a cluster project is acknowledged after its PostgreSQL commit)",
  ),
  async (t) => {
    let server = await startChild();
    const agent = await createProjectWithToken(server, { granularities: GRANULARITIES });
    const as = { token: agent.sourceToken, sourceId: agent.sourceId };
    const tally: Tally = { acked: 0, sent: 0 };
    try {
      for (const killAt of [1500, 300, 2500, 800, 4000]) {
        await loadUntilKilled(server, as, killAt, tally);
        server = await startChild();
        const stored = await storedCount(server, as);
        t.diagnostic(
          `after kill at ${killAt}: sent ${tally.sent}, acknowledged ${tally.acked}, stored ${stored}`,
        );
        assert.ok(stored >= tally.acked, `stored ${stored} < acknowledged ${tally.acked}`);
        assert.ok(stored <= tally.sent, `stored ${stored} > sent ${tally.sent}`);
      }
    } finally {
      await kill(server);
    }
  },
);
