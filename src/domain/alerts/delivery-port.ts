// The seam between the alert evaluator's outbox (which decides what to send, and when to retry) and the
// channels (which know how to reach ntfy, Gotify, a webhook or an SMTP server). The outbox owns
// durability and idempotency; a sender owns one attempt.

export type NotificationKind = 'firing' | 'resolved' | 'reminder' | 'nodata' | 'error' | 'test' | 'report';

export interface OutgoingNotification {
  /** Stable per notification: the same key on every retry and after a restart (X-Idempotency-Key). */
  idempotencyKey: string;
  kind: NotificationKind;
  monitor: { id: string; name: string; url?: string };
  /** The named groups of a key pattern (`{host: "pve1"}`), `{}` for a monitor on one key. */
  instance: Record<string, string>;
  state: string;
  previousState: string;
  value: number | null;
  /** Human text of the rule, e.g. "above 90" or "outside 10..20". */
  condition: string;
  /** ISO 8601 time the current state began. */
  since: string;
  /** How long the state has held, in milliseconds (reminders say "still firing for 2 h 10 m"). */
  durationMs: number;
  title: string;
  message: string;
  /** A report's files (e-mail attachments). */
  attachments?: Array<{ filename: string; contentType: string; content: string }>;
  /** A report's data, when it includes JSON (a webhook's body carries it). */
  report?: unknown;
}

export interface DeliveryResult {
  ok: boolean;
  /** False for a permanent failure (channel deleted, 4xx other than 408/429): the outbox stops retrying. */
  retryable: boolean;
  status?: number;
  /** Safe to show to the organization: never reveals whether a refused port is open. */
  error?: string;
}

export interface ChannelSender {
  /** One attempt. Must settle when `signal` aborts; never throws. */
  send(
    organizationId: string,
    channelId: string,
    notification: OutgoingNotification,
    signal: AbortSignal,
  ): Promise<DeliveryResult>;
}
