// Time limits on connections (SPEC 9): headers within `server.headers_timeout_ms` (10 s), the whole
// request within `server.request_timeout_ms` (30 s), then 408 and the connection is closed; idle
// keep-alive connections close after `server.keep_alive_timeout_ms`, and a socket with no traffic
// at all (a client that never reads its answer) after twice the request time-out. Node's default
// let unfinished bodies hold their connection for 300 s (issue 9).
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config';

type ServerConfig = Pick<Config, 'server'>;

function timeouts(config: ServerConfig): { headers: number; request: number } {
  const request = config.server.requestTimeoutMs;
  // Node refuses a headers time-out longer than the request time-out.
  return { headers: Math.min(config.server.headersTimeoutMs, request), request };
}

/** Options that only http.createServer accepts. */
export function connectionOptions(config: ServerConfig): http.ServerOptions {
  const { headers } = timeouts(config);
  // Node checks the time-outs on this interval (default 30 s, which would triple a 10 s limit).
  return { connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headers / 4))) };
}

export function applyConnectionLimits(server: http.Server, config: ServerConfig): void {
  const { headers, request } = timeouts(config);
  server.headersTimeout = headers;
  server.requestTimeout = request;
  server.keepAliveTimeout = config.server.keepAliveTimeoutMs;
  server.timeout = 2 * request;
}

/**
 * An `Expect` header other than 100-continue: Node would answer a bare 417; this gives it the JSON
 * error body every other failure has (SPEC 2).
 */
export function answerExpectationFailed(_req: http.IncomingMessage, res: http.ServerResponse): void {
  const body = JSON.stringify({ errors: { detail: 'Unsupported Expect header (only 100-continue)' } });
  res.writeHead(417, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}

/**
 * Connections followed from their start, for a stop that resets none of them (issue 27): an idle
 * connection is closed only when no byte of a next request has been read on it, and one that has
 * not sent its first request yet gets FRESH_GRACE_MS to send it.
 */
const FRESH_GRACE_MS = 1_000;

interface Followed {
  /** a request of it is being answered */
  busy: boolean;
  /** answers sent on it */
  answered: number;
  /** socket.bytesRead when it last turned idle (0: since it was accepted) */
  readWhenIdle: number;
  /** when it last turned idle (performance.now()) */
  idleSince: number;
}

export interface ConnectionTracker {
  /** Closes the idle connections that hold no part of a request; true when none is left. */
  closeIdle(): boolean;
}

export function trackConnections(server: http.Server): ConnectionTracker {
  const followed = new Map<Socket, Followed>();
  server.on('connection', (socket: Socket) => {
    followed.set(socket, { busy: false, answered: 0, readWhenIdle: 0, idleSince: performance.now() });
    socket.once('close', () => followed.delete(socket));
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const entry = followed.get(req.socket);
    if (!entry) return;
    entry.busy = true;
    res.once('close', () => {
      entry.busy = false;
      entry.answered++;
      entry.readWhenIdle = req.socket.bytesRead;
      entry.idleSince = performance.now();
    });
  });
  return {
    closeIdle() {
      const now = performance.now();
      for (const [socket, entry] of followed) {
        if (entry.busy || socket.bytesRead > entry.readWhenIdle) continue; // a request is on its way or answered
        if (entry.answered === 0 && now - entry.idleSince < FRESH_GRACE_MS) continue; // its first request may still come
        socket.destroy();
        followed.delete(socket);
      }
      return followed.size === 0;
    },
  };
}
