// A receiver on loopback for the channel tests: records every request (method, path, headers,
// body) and answers what the test asks for (a status, a delay, a redirect).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** the next answers, in order (then 200 `{}`) */
  answer: Array<{
    status: number;
    body?: string;
    headers?: Record<string, string>;
    delayMs?: number;
    /** send the head and the body, then never end the answer */
    hold?: boolean;
  }>;
  close(): Promise<void>;
}

export async function startReceiver(host = '127.0.0.1'): Promise<Receiver> {
  const received: Received[] = [];
  const answer: Receiver['answer'] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const next = answer.shift() ?? { status: 200, body: '{}' };
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(next.status, { 'content-type': 'application/json', ...(next.headers ?? {}) });
        if (next.hold) res.write(next.body ?? '{');
        else res.end(next.body ?? '{}');
      };
      if (next.delayMs) setTimeout(reply, next.delayMs).unref();
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    received,
    answer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
