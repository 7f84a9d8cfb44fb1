// Logs (SPEC section 11): JSON lines; at info the start and stop lines and no line per request; at
// debug one line per request with its route template and status; a share link's token never.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, type LogLevel } from '../../src/config';
import { createLogger, redactPath } from '../../src/lib/log';
import { requestLog, SLOW_REQUEST_MS } from '../../src/http/middleware/request-log';
import { startServer } from '../../src/server';
import { request } from '../helpers/server';

async function logsOf(
  level: LogLevel,
  requests: (url: string) => Promise<void>,
): Promise<Array<Record<string, unknown>>> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'svc-logs-'));
  const lines: string[] = [];
  try {
    const config = loadConfig({ env: { SERVICE_DATA_DIR: dataDir, SERVICE_PORT: '0' }, cwd: dataDir });
    const server = await startServer(config, {
      log: createLogger(level, (line) => lines.push(line)),
      sweepTimer: false,
    });
    await requests(server.url);
    await server.close();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return lines.map((line) => {
    assert.ok(line.endsWith('\n'));
    return JSON.parse(line) as Record<string, unknown>;
  });
}

describe('logs', () => {
  test('info: start and stop lines, nothing per request', async () => {
    const logs = await logsOf('info', async (url) => {
      for (let i = 0; i < 3; i++) await request({ url }, 'GET', '/api/v1/health');
    });
    assert.deepEqual(
      logs.map((l) => l.msg),
      ['service started', 'service stopped'],
    );
    assert.equal(logs[0]!.level, 'info');
    assert.match(String(logs[0]!.url), /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(logs[1]!.requests, 3, 'the stop line counts what the last summary did not');
  });

  test('info: a request slower than 1 s gets a line (here: a body that takes 1.2 s to arrive)', async () => {
    const logs = await logsOf('info', async (url) => {
      const { hostname, port } = new URL(url);
      const socket = net.connect(Number(port), hostname).resume(); // read (and drop) the answer, so 'close' comes
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        'POST /api/v1/bootstrap/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{',
      );
      await new Promise((r) => setTimeout(r, 1200));
      socket.end('}');
      await new Promise((r) => socket.once('close', r));
    });
    const slow = logs.filter((l) => l.msg === 'slow request');
    assert.equal(slow.length, 1, JSON.stringify(logs));
    assert.equal(slow[0]!.route, '/api/v1/bootstrap/login');
    assert.equal(slow[0]!.status, 400);
    assert.ok(Number(slow[0]!.ms) >= 1000);
  });

  test('debug: one line per request with route template and status', async () => {
    const logs = await logsOf('debug', async (url) => {
      await request({ url }, 'GET', '/api/v1/health');
      await request({ url }, 'GET', '/api/v1/dashboards/0b6f5a0e-3c41-4a53-9a4a-5ad1b5f1f5a1');
    });
    const requests = logs.filter((l) => l.msg === 'request');
    assert.equal(requests.length, 2);
    assert.deepEqual(
      requests.map((r) => [r.route, r.status]),
      [
        ['/api/v1/health', 200],
        ['/api/v1/dashboards/:id', 401],
      ],
    );
    assert.ok(requests.every((r) => typeof r.ms === 'number' && typeof r.request_id === 'string'));
  });
});

describe('logs never carry a share link token', () => {
  const token = 'Zx9_secretSecretSecretSecretSecretSecret-12';

  test('debug: the page and API paths of a link are logged with the token redacted', async () => {
    const logs = await logsOf('debug', async (url) => {
      await request({ url }, 'GET', `/api/v1/shared/${token}`);
      await request({ url }, 'GET', `/api/v1/shared/${token}/metrics?from=x`);
      await request({ url }, 'GET', `/api/v1//shared/${token}/metrics`);
      await request({ url }, 'GET', `/s/${token}`);
      await request({ url }, 'GET', `/S/${token}`);
      await request({ url }, 'GET', `/%73hared/${token}`);
    });
    const requests = logs.filter((l) => l.msg === 'request');
    assert.equal(requests.length, 6);
    assert.ok(!JSON.stringify(logs).includes(token), JSON.stringify(requests));
    assert.deepEqual(
      requests.slice(0, 2).map((r) => r.path),
      ['/api/v1/shared/<redacted>', '/api/v1/shared/<redacted>/metrics'],
    );
    assert.equal(requests[3]!.path, '/s/<redacted>');
  });

  test('info: a slow request of a link is logged with the token redacted', async () => {
    const lines: string[] = [];
    const middleware = requestLog(createLogger('info', (line) => lines.push(line)));
    const ctx = {
      method: 'GET',
      path: `/api/v1/shared/${token}/metrics`,
      status: 200,
      state: {} as Record<string, unknown>,
      set() {},
    };
    await middleware(ctx as never, () => new Promise((r) => setTimeout(r, SLOW_REQUEST_MS + 50)));
    assert.equal(lines.length, 1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(line.msg, 'slow request');
    assert.equal(line.path, '/api/v1/shared/<redacted>/metrics');
    assert.ok(!lines[0]!.includes(token));
  });

  test('any line with a path field (an error, say) is redacted by the logger itself', () => {
    const lines: string[] = [];
    createLogger('info', (line) => lines.push(line)).error('request failed', {
      path: `/s/${token}`,
      error: 'boom',
    });
    assert.equal(JSON.parse(lines[0]!).path, '/s/<redacted>');
    assert.equal(
      redactPath('/api/v1/dashboards/abc/shares/def'),
      '/api/v1/dashboards/abc/shares/def',
      'other paths stay as they are',
    );
  });
});
