// Start-up failures of the listening socket as one line naming the setting and the flag that
// change it (SPEC section 11), instead of a stack trace.
import type { Config } from '../config';

export function listenFailure(err: unknown, config: Config): string | null {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const { host, port } = config.server;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: port ${port} is in use by another program; choose another port with server.port in config.toml, SERVICE_PORT or --port N (0 picks a free one)`;
    case 'EACCES':
      return `cannot listen on ${where}: permission denied for port ${port}; ports below 1024 need privileges, choose another with server.port, SERVICE_PORT or --port N`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${where}: address ${host} is not available on this machine; set server.host, SERVICE_HOST or --host (127.0.0.1, 0.0.0.0, ...)`;
    default:
      return null;
  }
}
