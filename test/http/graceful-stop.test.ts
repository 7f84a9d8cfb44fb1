// Stopping under load (SPEC section 1): SIGTERM to the real process while writes are in flight.
// Every request received before the signal is answered (201), a request that arrives after it on
// an open connection gets 503, idle keep-alive connections close at once, answers while stopping
// carry `Connection: close`, and the process exits 0 within 1 s of its last answer. Also `npm start`
// under SIGTERM and SIGINT: npm exits and leaves no service behind. Issue 27: a burst of writes on
// keep-alive connections followed a few milliseconds later by SIGTERM, 20 times: every request
// gets an HTTP answer (no connection reset), and every 201 is stored.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createProjectWithToken, request } from '../helpers/server';
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
  return new Promise((resolve) =>
    socket.once('close', () => resolve(Object.assign(out, { closedAt: performance.now() }))),
  );
}

describe('graceful stop', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('SIGTERM with writes in flight: 201 for each, 503 after, idle connections closed, exit within 1 s', async () => {
    const service = await startService(['--port', '0', '--data', tempDir()]);
    const p = await createProjectWithToken(service);
    const points = Array.from({ length: 500 }, (_, i) => ({
      key: 'stop',
      at: '2026-01-24T10:00:00Z',
      values: { n: i },
    }));
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
      assert.ok(
        r.closedAt! - signalled < 1500,
        `idle connection closed ${Math.round(r.closedAt! - signalled)} ms after the signal`,
      );
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
    assert.ok(
      exit.at - lastAnswer < 1000,
      `exited ${Math.round(exit.at - lastAnswer)} ms after its last answer`,
    );
    assert.ok(exit.at - signalled < 5000);
    assert.match(service.stderr(), /"msg":"service stopped"/);
  });

  test('bursts of writes on keep-alive connections, SIGTERM a few ms later, 20 times: an answer for each, every 201 stored', async () => {
    const data = tempDir();
    const at = '2026-01-24T10:00:00Z';
    let p: Awaited<ReturnType<typeof createProjectWithToken>> | null = null;
    let stored = 0;
    const readTotal = async (url: string) => {
      const read = await request(
        { url },
        'GET',
        `/api/v1/metrics?key=burst&from=${at}&to=${at}&granularity=1h`,
        undefined,
        { token: p!.sourceToken, sourceId: p!.sourceId },
      );
      assert.equal(read.status, 200, read.text);
      return (read.body.data.values[0]?.n as number | undefined) ?? 0;
    };
    const track = JSON.stringify({ key: 'burst', at, values: { n: 1 } });
    const batch = JSON.stringify({
      points: Array.from({ length: 10 }, () => ({ key: 'burst', at, values: { n: 1 } })),
    });
    const post = (route: string, body: string) =>
      `POST ${route} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${p!.sourceToken}\r\nX-Service-Source-Id: ${p!.sourceId}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const counts: Record<number, number> = {};

    for (let round = 0; round < 20; round++) {
      const service = await startService(['--port', '0', '--data', data]);
      p ??= await createProjectWithToken(service);
      assert.equal(
        await readTotal(service.url),
        stored,
        `round ${round}: every 201 of the rounds before is stored`,
      );
      // Keep-alive connections, each after one answered request.
      const sockets = await Promise.all(Array.from({ length: 20 }, () => connect(service.url)));
      await Promise.all(
        sockets.map(
          (socket) =>
            new Promise<void>((resolve) => {
              socket.once('data', () => resolve());
              socket.write('GET /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n');
            }),
        ),
      );
      // 24 tracks and 2 batches: on the 20 keep-alive connections and on 6 new ones.
      const { hostname, port } = new URL(service.url);
      const fresh = Array.from({ length: 6 }, () => net.connect(Number(port), hostname));
      const all = [...sockets, ...fresh];
      const outcomes = all.map(
        (socket, i) =>
          new Promise<{ status: number | null; error: string | null; points: number }>((resolve) => {
            let text = '';
            let error: string | null = null;
            const points = i < 2 ? 10 : 1;
            socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
            socket.on('error', (err: Error & { code?: string }) => (error = err.code ?? err.message));
            socket.on('close', () => {
              // the reply after the health check's (keep-alive connections) or the only one (new ones)
              const statuses = [...text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => Number(m[1]));
              resolve({ status: statuses.at(-1) ?? null, error, points });
            });
            const send = () =>
              socket.write(i < 2 ? post('/api/v1/metrics/batch', batch) : post('/api/v1/metrics', track));
            if (i < sockets.length) {
              text = '';
              send();
            } else socket.once('connect', send);
          }),
      );
      await new Promise((r) => setTimeout(r, 2 + (round % 4)));
      service.child.kill('SIGTERM');
      const results = await Promise.all(outcomes);
      const exit = await service.exited;
      assert.equal(exit.code, 0, service.stderr());
      for (const r of results) {
        assert.equal(
          r.error,
          null,
          `round ${round}: a request was cut off (${r.error}) instead of answered: ${JSON.stringify(results)}`,
        );
        assert.ok(r.status === 201 || r.status === 503, `round ${round}: answered ${r.status}`);
        counts[r.status] = (counts[r.status] ?? 0) + 1;
        if (r.status === 201) stored += r.points;
      }
    }
    const service = await startService(['--port', '0', '--data', data]);
    assert.equal(await readTotal(service.url), stored, 'every 201 of the last round is stored');
    service.child.kill('SIGTERM');
    await service.exited;
    assert.ok(counts[201]! > 0, `some writes were answered 201: ${JSON.stringify(counts)}`);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    test(`npm start stops on ${signal} to npm: npm exits 0 and the service is gone`, async () => {
      const npm = await startProcess('npm', ['start', '--silent', '--', '--port', '0', '--data', tempDir()], {
        npm_config_update_notifier: 'false',
      });
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
