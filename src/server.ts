// startServer(config) -> { url, close }: open storage, migrate, build deps, listen.
// Used by main.ts and by the tests, which start as many servers as they like in one process.
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Socket } from 'node:net';
import type { Config } from './config';
import type { Deps } from './deps';
import { createApp } from './app';
import { createLogger, type Logger } from './lib/log';
import { openDatabase } from './storage/db';
import { migrate } from './storage/migrations';
import { createAccountsRepo } from './storage/accounts';
import { createSourcesRepo } from './storage/sources';
import { createDashboardsRepo } from './storage/dashboards';
import { createLoginThrottle } from './domain/login-throttle';
import { createMetricsEngine } from './domain/metrics/engine';

export interface StartOptions {
  log?: Logger;
  /** better-sqlite3 native binding (the single executable loads it itself) */
  nativeBinding?: unknown;
}

export interface RunningServer {
  url: string;
  port: number;
  deps: Deps;
  /** stop accepting, finish in-flight requests, flush pending writes, close the database */
  close(): Promise<void>;
}

const CLIENT_ERROR_BODIES: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large'],
  HPE_URI_TOO_LONG: [431, 'Request line too long'],
};

// Malformed or oversized request lines/headers never reach Koa: answer them with the JSON error body.
function answerClientError(err: Error & { code?: string }, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, detail] = CLIENT_ERROR_BODIES[err.code ?? ''] ?? [400, 'Bad request'];
  const body = JSON.stringify({ errors: { detail } });
  const reason = status === 431 ? 'Request Header Fields Too Large' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? createLogger(config.log.level);
  mkdirSync(config.storage.dataDir, { recursive: true });
  mkdirSync(path.join(config.sources.sqliteRoot, '.uploads'), { recursive: true });
  const db = openDatabase(path.join(config.storage.dataDir, 'service.db'), { nativeBinding: options.nativeBinding });
  migrate(db);
  const sources = createSourcesRepo(db);
  const deps: Deps = {
    config,
    db,
    log,
    now: () => Date.now(),
    accounts: createAccountsRepo(db),
    sources,
    dashboards: createDashboardsRepo(db),
    loginThrottle: createLoginThrottle(),
    metrics: createMetricsEngine({ db, config, log, nativeBinding: options.nativeBinding, findSource: (id) => sources.byId(id) }),
    nativeBinding: options.nativeBinding,
  };
  const app = createApp(deps);
  const server = http.createServer(app.callback());
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.server.port, config.server.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.server.port;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await deps.metrics.close(); // commits pending writes, closes source files
      db.close();
    })());
  return { url: `http://${host}:${port}`, port, deps, close };
}
