// E-mail channels: one message to the channel's recipients through the SMTP server of the service
// configuration (`[smtp]`), with nodemailer. The server's host goes through `network.outbound` like
// any other target (resolved, checked, connected to by address; the configured name is kept for
// TLS), and the connection is destroyed when the caller's signal aborts.
import net from 'node:net';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import type { Config } from '../../../config';
import { bareHost } from '../../../lib/outbound';
import type { StoredChannel } from '../../../storage/channels';
import type { DeliveryResult, OutgoingNotification } from '../delivery-port';
import { checkedAddress, networkFailure, raceAbort, type HttpDeps } from './outbound-http';
import { instanceText } from './template';

export interface MailDeps extends HttpDeps {
  smtp: Config['smtp'];
}

/** The text of an alert e-mail: the message, then the facts a reader needs without opening anything. */
export function mailText(n: OutgoingNotification): string {
  if (n.kind === 'report') {
    const files = (n.attachments ?? []).map((a) => a.filename);
    const lines = [n.message, '', `Period: from ${n.since}`];
    if (files.length > 0) lines.push(`Attached: ${files.join(', ')}`);
    if (n.monitor.url) lines.push('', n.monitor.url);
    return lines.join('\n');
  }
  const lines = [n.message, ''];
  lines.push(`State: ${n.state} (was ${n.previousState})`);
  lines.push(`Value: ${n.value === null ? 'no data' : n.value}`);
  if (n.condition) lines.push(`Condition: ${n.condition}`);
  lines.push(`Since: ${n.since}`);
  const labels = instanceText(n.instance);
  if (labels) lines.push(`Instance: ${labels}`);
  if (n.monitor.url) lines.push('', n.monitor.url);
  return lines.join('\n');
}

/** An SMTP failure as a DeliveryResult: 4xx answers and lost connections are retried, 5xx not. */
export function smtpFailure(err: unknown, signal: AbortSignal): DeliveryResult {
  const e = err as { code?: string; responseCode?: number; response?: string; name?: string };
  if (signal.aborted) return { ok: false, retryable: true, error: 'timed out' };
  if (typeof e?.responseCode === 'number') {
    const answer = String(e.response ?? '')
      .split(/\r?\n/)[0]!
      .slice(0, 200);
    const retryable = e.responseCode >= 400 && e.responseCode < 500;
    return {
      ok: false,
      retryable,
      status: e.responseCode,
      error: `the SMTP server answered ${answer || e.responseCode}`,
    };
  }
  const message = String((err as Error)?.message ?? '');
  if (
    e?.code === 'ETLS' ||
    /certificate|self.signed|unable to verify|SSL routines|wrong version number/i.test(message)
  )
    return {
      ok: false,
      retryable: false,
      error:
        'TLS with the SMTP server failed (certificate not trusted or not for this host, or [smtp] tls does not match the port)',
    };
  switch (e?.code) {
    case 'EAUTH':
      return {
        ok: false,
        retryable: false,
        error: 'SMTP authentication failed (check [smtp] username and password)',
      };
    case 'ECONNECTION':
    case 'ESOCKET':
    case 'ETIMEDOUT':
    case 'EDNS':
    case 'EPROTOCOL':
      return {
        ok: false,
        retryable: true,
        error: 'the SMTP server cannot be reached or closed the connection',
      };
  }
  return networkFailure(err, signal);
}

/** A Message-ID from the idempotency key: a retry of the same notification carries the same id. */
function messageId(key: string, from: string): string {
  const domain = /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'localhost';
  return `<${key.replace(/[^A-Za-z0-9._-]/g, '_')}@${domain}>`;
}

export async function sendMail(
  deps: MailDeps,
  channel: StoredChannel,
  n: OutgoingNotification,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  const smtp = deps.smtp;
  if (!smtp.host || !smtp.from)
    return {
      ok: false,
      retryable: false,
      error: 'e-mail is not configured on this service ([smtp] host and from)',
    };
  const to = Array.isArray(channel.settings.to) ? (channel.settings.to as string[]) : [];
  if (to.length === 0) return { ok: false, retryable: false, error: 'the channel names no recipient' };
  let address: string;
  try {
    address = await raceAbort(checkedAddress(deps, smtp.host), signal);
  } catch (err) {
    return networkFailure(err, signal);
  }
  const host = bareHost(smtp.host);
  const sockets: net.Socket[] = [];
  const transporter = nodemailer.createTransport({
    host: address,
    port: smtp.port,
    secure: smtp.tls === 'tls',
    requireTLS: smtp.tls === 'starttls',
    ignoreTLS: smtp.tls === 'none',
    auth: smtp.username ? { user: smtp.username, pass: smtp.password ?? '' } : undefined,
    servername: net.isIP(host) === 0 ? host : undefined,
    tls: net.isIP(host) === 0 ? { servername: host } : {},
    connectionTimeout: 30_000,
    greetingTimeout: 30_000,
    socketTimeout: 60_000,
    disableFileAccess: true,
    disableUrlAccess: true,
    logger: false,
    // the connection goes to the checked address, and is ours to destroy on abort
    getSocket(_options: unknown, callback: (err: Error | null, socketOptions: unknown) => void) {
      const socket = net.connect({ host: address, port: smtp.port });
      sockets.push(socket);
      const onError = (err: Error) => callback(err, false);
      socket.once('error', onError);
      socket.once('connect', () => {
        socket.off('error', onError);
        callback(null, { connection: socket });
      });
    },
  } as SMTPTransport.Options);
  const subject =
    `${channel.settings.subject_prefix ? `${String(channel.settings.subject_prefix)} ` : ''}${n.title}`.replace(
      /[\r\n]+/g,
      ' ',
    );
  const abort = () => {
    for (const socket of sockets) socket.destroy();
    transporter.close();
  };
  signal.addEventListener('abort', abort, { once: true });
  try {
    await raceAbort(
      transporter.sendMail({
        from: smtp.from,
        to,
        subject,
        text: mailText(n),
        attachments: (n.attachments ?? []).map((a) => ({
          filename: a.filename,
          content: a.content,
          contentType: a.contentType,
        })),
        messageId: messageId(n.idempotencyKey, smtp.from),
        headers: { 'X-Idempotency-Key': n.idempotencyKey },
      }),
      signal,
    );
    return { ok: true, retryable: false };
  } catch (err) {
    return smtpFailure(err, signal);
  } finally {
    signal.removeEventListener('abort', abort);
    for (const socket of sockets) socket.destroy();
    transporter.close();
  }
}
