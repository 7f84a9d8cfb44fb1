// Smoke test of the single executable: copied alone into an empty folder, it must answer
// `version`, `help` and `config`, serve the agent flow of the API (signup -> project -> source token
// -> track -> read), stop cleanly on SIGTERM, find its data again after a restart, serve /metrics,
// back up while serving and restore into a new data directory; and run `service demo`.
// Usage: node test/smoke/executable.mjs [path/to/service]   (default dist/service)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';

const source = path.resolve(process.argv[2] ?? 'dist/service');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'service-smoke-'));
const binDir = path.join(root, 'bin');
const dataDir = path.join(root, 'data');
const service = path.join(binDir, 'service');
const results = { passed: 0, failed: 0 };

async function check(name, fn) {
  try {
    await fn();
    results.passed++;
    console.log(`ok - ${name}`);
  } catch (err) {
    results.failed++;
    console.log(
      `not ok - ${name}\n  ${String(err?.stack ?? err)
        .split('\n')
        .join('\n  ')}`,
    );
    throw err;
  }
}

/** Runs `service args...` to completion in the executable's own folder, with no node_modules near. */
function runOnce(args) {
  return spawnSync(service, args, { cwd: binDir, encoding: 'utf8', timeout: 10_000 });
}

/** Starts `service serve` and resolves once it logs `listening on http://HOST:PORT`. */
function startServer() {
  const child = spawn(service, ['serve', '--port', '0', '--data', dataDir], { cwd: binDir });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const listening = new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(
      () => reject(new Error(`no listening line in 10 s; stderr:\n${stderr}`)),
      10_000,
    );
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/\S+:\d+)/.exec(stdout);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    exited.then(({ code }) => reject(new Error(`exited with ${code} before listening; stderr:\n${stderr}`)));
  });
  return { child, exited, listening, stderr: () => stderr };
}

/** Runs fn(baseUrl) against a fresh server process, then stops it with SIGTERM (checked). */
async function withServer(stopName, fn) {
  const server = startServer();
  let failed = false;
  try {
    await fn(await server.listening, server.child.pid, server.stderr);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await check(stopName, () => stopServer(server)).catch(() => (failed = true));
    if (failed) console.log(`# server stderr:\n${server.stderr().trimEnd().replace(/^/gm, '#   ')}`);
  }
}

async function stopServer(server) {
  server.child.kill('SIGTERM');
  const timeout = new Promise((resolve) => setTimeout(() => resolve('timeout'), 10_000, 'timeout').unref());
  const outcome = await Promise.race([server.exited, timeout]);
  if (outcome === 'timeout') server.child.kill('SIGKILL');
  assert.deepEqual(outcome, { code: 0, signal: null }, 'SIGTERM must end the server with exit code 0');
}

async function call(base, method, url, { token, sourceId, body } = {}) {
  const headers = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (sourceId) headers['x-service-source-id'] = sourceId;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${base}${url}`, { method, headers, body: body && JSON.stringify(body) });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

const POINT = {
  key: 'smoke.requests',
  at: '2026-01-24T10:15:00Z',
  values: { count: 3, latency: { p50: 1.5 } },
};
const SERIES_URL =
  '/api/v1/metrics?key=smoke.requests&from=2026-01-24T10:00:00Z&to=2026-01-24T11:00:00Z&granularity=1h';
const EXPECTED_SERIES = {
  at: ['2026-01-24T10:00:00Z', '2026-01-24T11:00:00Z'],
  values: [{ count: 3, latency: { p50: 1.5 } }, {}],
};
const account = {
  email: 'smoke@example.com',
  password: 'correct horse battery',
  organization_name: 'Smoke Test',
};

/** Whether this machine's C library is glibc (the executable's allocator settings act only there). */
const glibc = typeof process.report.getReport().header.glibcVersionRuntime === 'string';

async function firstRun(state) {
  await withServer('SIGTERM exits 0', async (base, pid, stderr) => {
    await check('the start-up line names the allocator settings the addon applied (glibc only)', () => {
      const started = stderr()
        .split('\n')
        .find((line) => line.includes('"service started"'));
      assert.ok(started, `no start-up line in:\n${stderr()}`);
      const allocator = JSON.parse(started).allocator;
      if (glibc) assert.equal(allocator, 'glibc arena_max=2 mmap_threshold=131072');
      else assert.equal(allocator, undefined);
    });
    await check('health answers 200', async () => {
      const res = await call(base, 'GET', '/api/v1/health');
      assert.equal(res.status, 200);
      assert.equal(res.json.status, 'ok');
    });
    await check('signup with organization_name', async () => {
      const res = await call(base, 'POST', '/api/v1/bootstrap/signup', { body: account });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      assert.equal(res.json.data.organization.name, account.organization_name);
      state.userToken = res.json.data.token.value;
    });
    await check('create a project', async () => {
      const body = { name: 'Smoke', time_zone: 'UTC' };
      const res = await call(base, 'POST', '/api/v1/bootstrap/projects', { token: state.userToken, body });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      state.sourceId = res.json.data.source.id;
    });
    await check('mint a source token', async () => {
      const body = { source_type: 'project', source_id: state.sourceId };
      const res = await call(base, 'POST', '/api/v1/bootstrap/source-tokens', {
        token: state.userToken,
        body,
      });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      state.sourceToken = res.json.data.token.value;
    });
    await check('track one point', async () => {
      const res = await call(base, 'POST', '/api/v1/metrics', {
        token: state.sourceToken,
        sourceId: state.sourceId,
        body: POINT,
      });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      assert.deepEqual(res.json, { data: { created: 'ok' } });
    });
    await readSeries(base, state, 'read the series back');
    await check('a batch of 3,000 points (278 KB) is stored, parsed in the batch-parser thread', async () => {
      const points = Array.from({ length: 3_000 }, (_, i) => ({
        key: 'smoke.batch',
        at: new Date(Date.UTC(2026, 0, 24, 10) + i * 1_000).toISOString(),
        values: { n: 1, size: { bytes: i } },
      }));
      const auth = { token: state.sourceToken, sourceId: state.sourceId };
      const res = await call(base, 'POST', '/api/v1/metrics/batch', { ...auth, body: { points } });
      assert.deepEqual([res.status, res.json], [201, { data: { created: 3_000 } }]);
      const url =
        '/api/v1/metrics?key=smoke.batch&from=2026-01-24T10:00:00Z&to=2026-01-24T10:00:00Z&granularity=1h';
      const read = await call(base, 'GET', url, auth);
      assert.deepEqual(read.json.data.values, [{ n: 3_000, size: { bytes: 4_498_500 } }]);
      const threads = fs
        .readdirSync(`/proc/${pid}/task`)
        .map((t) => fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim());
      assert.ok(threads.includes('batch-parser'), `threads: ${threads.join(', ')}`);
    });
    await check(
      'a line-protocol write on /api/v2/write is stored exactly (its WebAssembly reader loads here)',
      async () => {
        const lines = Array.from(
          { length: 1_000 },
          (_, i) => `smoke,host=h${i % 10} v=${i % 7}.25,n=${i}i ${1769248800 + i}`,
        ).join('\n');
        const res = await fetch(`${base}/api/v2/write?org=smoke&bucket=smoke&precision=s`, {
          method: 'POST',
          headers: { authorization: `Token ${state.sourceToken}` },
          body: lines,
        });
        assert.equal(res.status, 204, await res.text());
        const url =
          '/api/v1/metrics?key=smoke%2Chost%3Dh3&from=2026-01-24T10:00:00Z&to=2026-01-24T10:00:00Z&granularity=1h';
        const read = await call(base, 'GET', url, { token: state.sourceToken, sourceId: state.sourceId });
        let sum = 0;
        let nSum = 0;
        for (let i = 3; i < 1_000; i += 10) {
          sum += (i % 7) + 0.25;
          nSum += i;
        }
        assert.deepEqual(read.json.data.values, [
          { v: { sum, count: 100, last: (993 % 7) + 0.25 }, n: { sum: nSum, count: 100, last: 993 } },
        ]);
      },
    );
    await check(
      'a sqlite database source is set up, written and read in the sqlite-sources thread',
      async () => {
        const body = {
          display_name: 'smoke sqlite',
          driver: 'sqlite',
          file_path: 'smoke.db',
          granularities: ['1h'],
        };
        const db = await call(base, 'POST', '/api/v1/bootstrap/databases', { token: state.userToken, body });
        assert.equal(db.status, 201, JSON.stringify(db.json));
        const id = db.json.data.source.id;
        const setup = await call(base, 'POST', `/api/v1/bootstrap/databases/${id}/setup`, {
          token: state.userToken,
        });
        assert.equal(setup.status, 200, JSON.stringify(setup.json));
        const minted = await call(base, 'POST', '/api/v1/bootstrap/source-tokens', {
          token: state.userToken,
          body: { source_type: 'database', source_id: id },
        });
        const auth = { token: minted.json.data.token.value, sourceId: id };
        const tracked = await call(base, 'POST', '/api/v1/metrics', { ...auth, body: POINT });
        assert.equal(tracked.status, 201, JSON.stringify(tracked.json));
        const read = await call(base, 'GET', SERIES_URL, auth);
        assert.equal(read.status, 200, JSON.stringify(read.json));
        assert.deepEqual(read.json.data, EXPECTED_SERIES);
        const threads = fs
          .readdirSync(`/proc/${pid}/task`)
          .map((t) => fs.readFileSync(`/proc/${pid}/task/${t}/comm`, 'utf8').trim());
        assert.ok(threads.includes('sqlite-sources'), `threads: ${threads.join(', ')}`);
      },
    );
  });
}

async function readSeries(base, state, name) {
  await check(name, async () => {
    const res = await call(base, 'GET', SERIES_URL, { token: state.sourceToken, sourceId: state.sourceId });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(res.json.data, EXPECTED_SERIES);
  });
}

async function secondRun(state) {
  await withServer('SIGTERM exits 0 again', async (base) => {
    await readSeries(base, state, 'after a restart the point is still there');
    await check('login verifies the stored password hash', async () => {
      const res = await call(base, 'POST', '/api/v1/bootstrap/login', {
        body: { email: account.email, password: account.password },
      });
      assert.equal(res.status, 201, JSON.stringify(res.json));
    });
    await check('native addons were extracted once (one folder each)', () => {
      assert.equal(fs.readdirSync(path.join(dataDir, 'native')).length, 3); // better-sqlite3, argon2, memory
    });
    await check('GET /metrics serves the Prometheus text format', async () => {
      const res = await fetch(`${base}/metrics`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^service_http_requests_total\{/m);
    });
    await check('`service backup` copies the database while it serves', () => {
      const res = runOnce(['backup', '--to', path.join(root, 'backup.db'), '--data', dataDir]);
      assert.equal(res.status, 0, res.stderr);
      assert.match(res.stdout, /backup written to/);
    });
  });
  await check('`service restore` puts the backup into a new data directory', () => {
    const res = runOnce([
      'restore',
      '--from',
      path.join(root, 'backup.db'),
      '--data',
      path.join(root, 'restored'),
    ]);
    assert.equal(res.status, 0, res.stderr);
    assert.ok(fs.existsSync(path.join(root, 'restored', 'service.db')));
  });
}

/** `service demo`: fills a fresh data directory, prints the sign-in, and stops cleanly. */
async function demoRun() {
  await check('`service demo` prints a sign-in that works, and SIGTERM exits 0', async () => {
    const child = spawn(service, ['demo', '--port', '0', '--data', path.join(root, 'demo')], { cwd: binDir });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      for (let waited = 0; !out.includes('Press Ctrl+C to stop.'); waited += 100) {
        assert.ok(
          waited < 120_000 && child.exitCode === null,
          `no demo banner; stdout:\n${out}\nstderr:\n${err}`,
        );
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const base = /Open\s+(http:\/\/\S+?)\/?\n/.exec(out)?.[1];
      const password = /Password\s+(\S+)/.exec(out)?.[1];
      const res = await call(base, 'POST', '/api/v1/bootstrap/login', {
        body: { email: 'demo@example.com', password },
      });
      assert.equal(res.status, 201, JSON.stringify(res.json));
      const dashboards = await call(base, 'GET', '/api/v1/dashboards', { token: res.json.data.token.value });
      assert.equal(dashboards.json.data.length, 2);
      child.kill('SIGTERM');
      assert.deepEqual(await exited, { code: 0, signal: null });
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
}

async function main() {
  fs.mkdirSync(binDir);
  fs.copyFileSync(source, service);
  fs.chmodSync(service, 0o755);
  await check('`service version` prints the version', () => {
    const res = runOnce(['version']);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /^service \d+\.\d+\.\d+/);
  });
  await check('`service help` prints the usage', () => {
    const res = runOnce(['help']);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /Usage:/);
    assert.doesNotMatch(res.stdout, /config\.example\.toml/);
  });
  await check('`service config` prints the example configuration it embeds', () => {
    const res = runOnce(['config']);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /^\[server\]$/m);
    assert.match(res.stdout, /^\[metrics\]$/m);
  });
  await demoRun();
  const state = {};
  await firstRun(state);
  await secondRun(state);
}

main()
  .catch((err) => {
    if (results.failed > 0) return; // the failing check has printed its error
    results.failed++;
    console.log(`not ok - smoke test setup\n  ${err?.stack ?? err}`);
  })
  .finally(() => {
    fs.rmSync(root, { recursive: true, force: true });
    console.log(`${results.passed} passed, ${results.failed} failed`);
    process.exitCode = results.failed === 0 && results.passed > 0 ? 0 : 1;
  });
