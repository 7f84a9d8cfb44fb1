// One HTTP request of a channel (webhook, ntfy, Gotify) under `network.outbound`: the host is
// resolved and checked first (lib/outbound.ts), and the connection goes to that checked address
// (a lookup pinned to it), so a name that resolves elsewhere a moment later cannot switch the
// target. Redirects are not followed, the answer's body is read up to a bound, and the request
// ends when the caller's signal aborts. Never throws: every outcome is a DeliveryResult.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import {
  OutboundRefused,
  addressAllowed,
  bareHost,
  isHostName,
  resolveOutbound,
  type NetworkPolicy,
} from '../../../lib/outbound';
import type { DeliveryResult } from '../delivery-port';

/** The answer's body is read up to this many bytes (the rest is discarded, the socket closed). */
export const MAX_RESPONSE_BYTES = 16 * 1024;
/** How much of a refusing receiver's answer an error message quotes. */
const QUOTED = 200;

export interface OutboundRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}

export interface HttpDeps {
  policy: NetworkPolicy;
  /** the name lookup's own bound (the signal bounds the whole attempt) */
  lookupTimeoutMs: number;
  /**
   * Tests only: a name's addresses in place of the system resolver (a name that resolves to
   * 127.0.0.1, or rebinds). Its answers are checked by the same policy as the system's.
   */
  lookup?: (host: string) => Promise<string[]>;
}

/**
 * The address to connect to for `host`: resolved and checked by `network.outbound`
 * (lib/outbound.ts, every address of the name; one refused address refuses it), or OutboundRefused.
 */
export async function checkedAddress(deps: HttpDeps, host: string): Promise<string> {
  if (!deps.lookup || net.isIP(bareHost(host)) !== 0)
    return resolveOutbound(host, deps.policy, deps.lookupTimeoutMs);
  if (!isHostName(host)) throw new OutboundRefused('the host must be a DNS name or an IP address');
  const addresses = await deps.lookup(bareHost(host));
  if (addresses.length === 0) throw Object.assign(new Error('no address'), { code: 'ENOTFOUND' });
  for (const address of addresses)
    if (!addressAllowed(deps.policy, host, address)) throw new OutboundRefused('refused by network.outbound');
  return addresses[0]!;
}

/** The message of a refusal by the policy: the same whatever is listening on the address. */
export const REFUSED_MESSAGE =
  'refused by network.outbound: the host is not allowed ("public" refuses loopback, private, link-local and metadata addresses)';

const NETWORK_MESSAGES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the receiver',
  EPIPE: 'connection closed by the receiver',
  ETIMEDOUT: 'timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EAI_AGAIN: 'the host name could not be resolved (temporary)',
  ENOTFOUND: 'the host name could not be resolved',
  UND_ERR_SOCKET: 'connection closed by the receiver',
};

/** A DeliveryResult for an error raised before or during a request. */
export function networkFailure(err: unknown, signal: AbortSignal): DeliveryResult {
  if (err instanceof OutboundRefused) return { ok: false, retryable: false, error: REFUSED_MESSAGE };
  if (signal.aborted || (err as { name?: string })?.name === 'AbortError')
    return { ok: false, retryable: true, error: 'timed out' };
  const code = String((err as { code?: unknown })?.code ?? '');
  if (
    /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code) ||
    /certificate|ssl|tls/i.test(String((err as Error)?.message))
  )
    return {
      ok: false,
      retryable: false,
      error: 'TLS handshake failed (certificate not trusted or not for this host)',
    };
  if (code === 'ERR_INVALID_CHAR' || code === 'ERR_INVALID_HTTP_TOKEN')
    return { ok: false, retryable: false, error: 'a header value holds characters HTTP does not allow' };
  return { ok: false, retryable: true, error: NETWORK_MESSAGES[code] ?? 'network error' };
}

/** What a status means for the outbox: 2xx delivered; 408, 429, 5xx retried; the rest permanent. */
export function statusResult(status: number, body: string): DeliveryResult {
  if (status >= 200 && status < 300) return { ok: true, retryable: false, status };
  const quoted = body.replace(/\s+/g, ' ').trim().slice(0, QUOTED);
  const suffix = quoted === '' ? '' : `: ${quoted}`;
  if (status >= 300 && status < 400)
    return {
      ok: false,
      retryable: false,
      status,
      error: `the receiver answered ${status} (redirects are not followed)`,
    };
  const retryable = status === 408 || status === 429 || status >= 500;
  return { ok: false, retryable, status, error: `the receiver answered ${status}${suffix}` };
}

/** A lookup that answers the checked address whatever name it is asked for. */
function pinnedLookup(address: string): LookupFunction {
  const family = net.isIP(address) === 6 ? 6 : 4;
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address, family }]);
    else callback(null, address, family);
  }) as unknown as LookupFunction;
}

/** One request: resolve and check the host, connect to that address, read a bounded answer. */
export async function sendHttp(
  deps: HttpDeps,
  request: OutboundRequest,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return { ok: false, retryable: false, error: 'the URL is not valid' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, retryable: false, error: 'the URL must be http or https' };
  if (signal.aborted) return { ok: false, retryable: true, error: 'timed out' };
  let address: string;
  try {
    address = await raceAbort(checkedAddress(deps, url.hostname), signal);
  } catch (err) {
    return networkFailure(err, signal);
  }
  const host = bareHost(url.hostname);
  const secure = url.protocol === 'https:';
  const body = Buffer.from(request.body, 'utf8');
  const options: https.RequestOptions = {
    protocol: url.protocol,
    hostname: host,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: request.method,
    headers: { ...request.headers, 'content-length': String(body.length) },
    agent: false, // a connection of its own: never one kept alive to another address
    lookup: pinnedLookup(address),
    signal,
  };
  if (secure && net.isIP(host) === 0) options.servername = host;
  return new Promise<DeliveryResult>((resolve) => {
    let settled = false;
    const finish = (result: DeliveryResult) => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    let req: http.ClientRequest;
    try {
      req = (secure ? https : http).request(options, (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) {
          // delivered: the answer's body is not needed (a slow one cannot hold the attempt)
          finish(statusResult(status, ''));
          res.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          finish(statusResult(status, Buffer.concat(chunks).toString('utf8')));
          res.destroy();
        };
        res.on('data', (chunk: Buffer) => {
          if (size >= MAX_RESPONSE_BYTES) return;
          const room = MAX_RESPONSE_BYTES - size;
          chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          size += Math.min(chunk.length, room);
          if (size >= MAX_RESPONSE_BYTES) done();
        });
        res.on('end', done);
        res.on('error', () => done());
        res.on('close', done);
      });
    } catch (err) {
      finish(networkFailure(err, signal));
      return;
    }
    req.on('error', (err) => finish(networkFailure(err, signal)));
    req.end(body);
  });
}

/** The promise, or a rejection as soon as the signal aborts. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
