// Stopping under load (SPEC section 1): SIGTERM to the real process while writes are in flight.
// Every request received before the signal is answered (201), a request that arrives after it on
// an open connection gets 503, idle keep-alive connections close at once, answers while stopping
// carry `Connection: close`, and the process exits 0 within 1 s of its last answer. Also `npm start`
// under SIGTERM and SIGINT: npm exits and leaves no service behind.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken } from '../helpers/server';
import { ROOT, startProcess, startService } from '../helpers/process';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'svc-stop-'));
  dirs.push(dir);
  return dir;
};

interface RawReply {
  status: number;
  head: string;
  at: number;
}

/** A raw connection: what was written arrives as is; the reply is read until the server closes. */
function connect(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

function replies(socket: net.Socket): Promise<RawReply[] & { closedAt?: number }> {
  let data = '';
  const out: RawReply[] = [];
  socket.on('data', (chunk: Buffer) => {
    data += chunk.toString('latin1');
    for (const m of data.matchAll(/HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n/g)) {
      if (out.length < [...data.matchAll(/HTTP\/1\.1 \d{3}/g)].length && !out.some((r) => r.head === m[0])) {
        out.push({ status: Number(m[1]), head: m[0], at: performance.now() });
      }
    }
  });
  return new Promise((resolve) => socket.once('close', () => resolve(Object.assign(out, { closedAt: performance.now() }))));
}

describe('graceful stop', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('SIGTERM with writes in flight: 201 for each, 503 after, idle connections closed, exit within 1 s', async () => {
    const service = await startService(['--port', '0', '--data', tempDir()]);
    const p = await createProjectWithToken(service);
    const points = Array.from({ length: 500 }, (_, i) => ({ key: 'stop', at: '2026-01-24T10:00:00Z', values: { n: i } }));
    const body = JSON.stringify({ points });
    const head = (length: number) =>
      `POST /api/v1/metrics/batch HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p.sourceToken}\r\n` +
      `X-Service-Source-Id: ${p.sourceId}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

    // Writes in flight: headers and half the body sent before the signal, the rest after it.
    const inFlight = await Promise.all(Array.from({ length: 12 }, () => connect(service.url)));
    const inFlightReplies = inFlight.map(replies);
    for (const s of inFlight) s.write(head(Buffer.byteLength(body)) + body.slice(0, body.length / 2));
    // Idle keep-alive connections, each after one answered request.
    const idle = await Promise.all(Array.from({ length: 4 }, () => connect(service.url)));
    const idleReplies = idle.map(replies);
    for (const s of idle) s.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
    // A request whose head is only begun before the signal arrives after it.
    const late = await connect(service.url);
    const lateReplies = replies(late);
    late.write('POST /api/v1/metrics HTTP/1.1\r\nHost: x\r\n');
    await new Promise((r) => setTimeout(r, 500));

    const signalled = performance.now();
    service.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 200));
    for (const s of inFlight) s.write(body.slice(body.length / 2));
    const point = JSON.stringify({ key: 'late', at: '2026-01-24T10:00:00Z', values: { n: 1 } });
    late.write(
      `Authorization: Bearer ${p.sourceToken}\r\nX-Service-Source-Id: ${p.sourceId}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${point.length}\r\n\r\n${point}`,
    );

    const idleDone = await Promise.all(idleReplies);
    for (const r of idleDone) {
      assert.equal(r.length, 1);
      assert.equal(r[0]!.status, 200);
      // Closed at once, not after the keep-alive timeout (5 s) or the last write's answer.
      assert.ok(r.closedAt! - signalled < 1500, `idle connection closed ${Math.round(r.closedAt! - signalled)} ms after the signal`);
    }
    const answered = await Promise.all(inFlightReplies);
    for (const r of answered) {
      assert.equal(r.length, 1, 'one answer per write in flight');
      assert.equal(r[0]!.status, 201, r[0]!.head);
      assert.match(r[0]!.head, /\r\nConnection: close\r\n/i);
    }
    const lateDone = await lateReplies;
    assert.equal(lateDone[0]?.status, 503, JSON.stringify(lateDone));
    assert.match(lateDone[0]!.head, /Retry-After: 1/i);
    assert.match(lateDone[0]!.head, /Connection: close/i);

    const exit = await service.exited;
    assert.equal(exit.code, 0, service.stderr());
    const lastAnswer = Math.max(...answered.flat().map((r) => r.at), ...lateDone.map((r) => r.at));
    assert.ok(exit.at - lastAnswer < 1000, `exited ${Math.round(exit.at - lastAnswer)} ms after its last answer`);
    assert.ok(exit.at - signalled < 5000);
    assert.match(service.stderr(), /"msg":"service stopped"/);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`npm start stops on ${signal} to npm: npm exits 0 and the service is gone`, async () => {
      const npm = await startProcess('npm', ['start', '--silent', '--', '--port', '0', '--data', tempDir()], { npm_config_update_notifier: 'false' });
      const { port } = new URL(npm.url);
      npm.child.kill(signal);
      const exit = await npm.exited;
      assert.equal(exit.code, 0, `npm exit ${exit.code} ${exit.signal}: ${npm.stderr()}`);
      assert.match(npm.stderr(), new RegExp(`"signal":"${signal}"`));
      // Nothing listens on the port any more: no orphaned service.
      await assert.rejects(connect(`http://127.0.0.1:${port}`), /ECONNREFUSED/);
    });
  }
});

void ROOT;
