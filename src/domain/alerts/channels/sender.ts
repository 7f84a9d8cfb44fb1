// The channels' side of the delivery seam (../delivery-port.ts): one attempt to deliver one
// notification through one of an organization's channels. The outbox (alerts-core) owns retries,
// back-off and idempotency; this owns the request each type makes, under `network.outbound`.
//
//   const sender = createChannelSender(deps);          // deps: db, secrets, config, log
//   const result = await sender.send(orgId, channelId, notification, AbortSignal.timeout(10_000));
//
// `send` never throws and settles when the signal aborts. A channel of another organization is
// as unknown as a deleted one: `{ok: false, retryable: false, error: 'channel not found'}`.
import type { ChannelSender, DeliveryResult, OutgoingNotification } from '../delivery-port';
import type { Ports } from '../../ports';
import type { StoredChannel } from '../../../storage/channels';
import { SERVER_VERSION } from '../../../version';
import { presetBody } from './presets';
import { DEFAULT_TEMPLATE, renderTemplate } from './template';
import { sendHttp, type HttpDeps, type OutboundRequest } from './outbound-http';
import { sendMail, type MailDeps } from './email';

export type ChannelSenderDeps = Pick<Ports, 'channels' | 'secrets' | 'config' | 'log'>;

const USER_AGENT = `trifle-service/${SERVER_VERSION}`;

/** Default priorities by kind: what fires is high, what resolves or tests is normal. */
const URGENT = new Set(['firing', 'reminder', 'nodata', 'error']);

/** A header value in printable ASCII: RFC 2047 encoded words when the text is not (ntfy decodes them). */
export function headerText(text: string): string {
  const line = text.replace(/[\r\n]+/g, ' ');
  if (/^[\x20-\x7e]*$/.test(line)) return line;
  return `=?UTF-8?B?${Buffer.from(line, 'utf8').toString('base64')}?=`;
}

/** `server` + `/` + `path`, keeping a path prefix of the server (https://host/ntfy/topic). */
export function joinUrl(server: string, path: string): string {
  return `${server.replace(/\/+$/, '')}/${path}`;
}

/** ntfy takes a message of up to 4,096 bytes as text (a longer one would become an attachment). */
export const NTFY_MESSAGE_BYTES = 4096;

/** The text cut to at most `max` UTF-8 bytes, on a character boundary, marked with "…" when cut. */
export function cutBytes(text: string, max: number): string {
  if (Buffer.byteLength(text) <= max) return text;
  let out = '';
  let size = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch);
    if (size + n > max - 3) break;
    out += ch;
    size += n;
  }
  return `${out}…`;
}

function str(value: unknown, fallback = ''): string {
  return typeof value === 'string' ? value : fallback;
}

/** The HTTP request of a webhook, ntfy or Gotify channel. */
export function httpRequestOf(
  channel: StoredChannel,
  secrets: Record<string, string>,
  n: OutgoingNotification,
): OutboundRequest {
  const s = channel.settings;
  const common = { 'user-agent': USER_AGENT, 'x-idempotency-key': n.idempotencyKey };
  switch (channel.type) {
    case 'webhook': {
      const template = s.body ?? null;
      const body =
        template !== null
          ? renderTemplate(template, n)
          : channel.preset
            ? presetBody(channel.preset, n)
            : n.kind === 'report'
              ? { ...(renderTemplate(DEFAULT_TEMPLATE, n) as object), report: n.report ?? null }
              : renderTemplate(DEFAULT_TEMPLATE, n);
      const headers: Record<string, string> = {
        ...((s.headers as Record<string, string> | undefined) ?? {}),
        'content-type': 'application/json',
        ...common,
      };
      if (secrets.authorization) headers.authorization = secrets.authorization;
      return { url: secrets.url ?? '', method: str(s.method, 'POST'), headers, body: JSON.stringify(body) };
    }
    case 'ntfy': {
      const priority = typeof s.priority === 'number' ? s.priority : URGENT.has(n.kind) ? 4 : 3;
      const headers: Record<string, string> = {
        ...common,
        'content-type': 'text/plain; charset=utf-8',
        title: headerText(n.title),
        priority: String(priority),
      };
      const tags = Array.isArray(s.tags) ? (s.tags as string[]) : [];
      if (tags.length > 0) headers.tags = tags.join(',');
      if (n.monitor.url && /^[\x21-\x7e]+$/.test(n.monitor.url)) headers.click = n.monitor.url;
      if (secrets.token) headers.authorization = `Bearer ${secrets.token}`;
      return {
        url: joinUrl(str(s.server, 'https://ntfy.sh'), str(s.topic)),
        method: 'POST',
        headers,
        body: cutBytes(n.message, NTFY_MESSAGE_BYTES),
      };
    }
    case 'gotify': {
      const priority = typeof s.priority === 'number' ? s.priority : URGENT.has(n.kind) ? 8 : 5;
      return {
        url: joinUrl(str(s.server), 'message'),
        method: 'POST',
        headers: { ...common, 'content-type': 'application/json', 'x-gotify-key': secrets.token ?? '' },
        body: JSON.stringify({ title: n.title, message: n.message, priority }),
      };
    }
    case 'email':
      throw new Error('an e-mail channel makes no HTTP request');
  }
}

export interface ChannelSenderOptions {
  /** tests only: a name's addresses in place of the system resolver (still checked by the policy) */
  lookup?: (host: string) => Promise<string[]>;
}

export function createChannelSender(
  deps: ChannelSenderDeps,
  options: ChannelSenderOptions = {},
): ChannelSender {
  const channels = deps.channels;
  const network = deps.config.network;
  const http: HttpDeps = {
    policy: { outbound: network.outbound, allowedHosts: network.allowedHosts },
    lookupTimeoutMs: network.timeoutMs,
    lookup: options.lookup,
  };
  const mail: MailDeps = { ...http, smtp: deps.config.smtp };

  async function attempt(
    organizationId: string,
    channelId: string,
    n: OutgoingNotification,
    signal: AbortSignal,
  ): Promise<DeliveryResult> {
    const channel = await channels.get(organizationId, channelId.toLowerCase());
    if (!channel) return { ok: false, retryable: false, error: 'channel not found' };
    const secrets: Record<string, string> = {};
    try {
      for (const [name, stored] of Object.entries(channel.secrets))
        secrets[name] = deps.secrets.decrypt(stored);
    } catch {
      return {
        ok: false,
        retryable: false,
        error: "the channel's secrets cannot be decrypted (was the service's secrets.key changed?)",
      };
    }
    if (channel.type === 'email') return sendMail(mail, channel, n, signal);
    return sendHttp(http, httpRequestOf(channel, secrets, n), signal);
  }

  return {
    async send(organizationId, channelId, notification, signal) {
      try {
        return await attempt(organizationId, channelId, notification, signal);
      } catch (err) {
        deps.log.error('channel send failed', { channel: channelId, error: (err as Error)?.message });
        return { ok: false, retryable: true, error: 'internal error while sending' };
      }
    },
  };
}
