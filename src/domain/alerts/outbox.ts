// The outbox worker (SPEC 13): sends the notifications the evaluator queued, one attempt at a time
// per row through the channels' ChannelSender (delivery-port.ts), each attempt bounded by an
// AbortSignal timeout. A failed attempt is retried with exponential back-off and jitter up to
// `maxAttempts`; a permanent failure (retryable false) stops at once. Attempts run concurrently up
// to `concurrency`, on the event loop's I/O, so a hung receiver occupies one attempt slot until its
// timeout and never holds up evaluation, ingest or the other rows.
//
// Guarantees: a row is written with its state change (same transaction) so a crash never loses it;
// a row marked sent is never sent again; a row whose attempt was interrupted by a crash (left
// `sending`) is sent again after the restart with the same idempotency key (X-Idempotency-Key), so a
// receiver that keeps the keys it saw sees it once.
import type { Logger } from '../../lib/log';
import type { OutboxRepo, OutboxRow } from '../../storage/outbox';
import type { ChannelSender, DeliveryResult, OutgoingNotification } from './delivery-port';

export interface OutboxOptions {
  outbox: OutboxRepo;
  sender: ChannelSender;
  now: () => number;
  log: Logger;
  /** one attempt's limit (default 10 s) */
  timeoutMs?: number;
  /** attempts before a row is given up as failed (default 8) */
  maxAttempts?: number;
  /** back-off after the first failure (default 5 s), doubled per attempt, up to maxDelayMs (15 min) */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** attempts in flight at once (default 4) */
  concurrency?: number;
  /** how often due rows are looked for (default 1 s) */
  pollMs?: number;
  /** 0..1; Math.random by default (tests pass a fixed one) */
  random?: () => number;
}

export interface OutboxWorker {
  /**
   * Starts polling (0: no timer; tests call drain()). Rows left `sending` by a crash or a stop are
   * resumed first. After a stop, start() sends again (the node took the jobs' lease back).
   */
  start(pollMs?: number): void;
  /**
   * Stops polling and aborts the attempts in flight (their rows stay `sending`, resumed by the next
   * start on this node or another), resolving once they have ended.
   */
  stop(): Promise<void>;
  /** Looks for due rows now. */
  kick(): void;
  /** Sends every row due now and waits for those attempts (tests). */
  drain(): Promise<void>;
  close(): Promise<void>;
  readonly inFlight: number;
}

/** The delay before attempt `attempts + 1`: base x 2^(attempts-1), capped, with +-50% jitter. */
export function backoffMs(attempts: number, base: number, max: number, random: () => number): number {
  const exp = Math.min(max, base * 2 ** Math.max(0, attempts - 1));
  return Math.round(exp * (0.5 + random()));
}

export function createOutboxWorker(options: OutboxOptions): OutboxWorker {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const maxAttempts = options.maxAttempts ?? 8;
  const baseDelayMs = options.baseDelayMs ?? 5_000;
  const maxDelayMs = options.maxDelayMs ?? 15 * 60_000;
  const concurrency = options.concurrency ?? 4;
  const random = options.random ?? Math.random;
  const { outbox, sender, log } = options;
  const inFlight = new Map<number, Promise<void>>();
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  /** stop() or close() was called since the last start() */
  let halted = false;
  /** start() calls, so that a timer of an earlier start never goes on after a restart */
  let starts = 0;
  let resumed: Promise<void> | null = null;
  let stopping = new AbortController();
  /** the pump running now, and whether another was asked for meanwhile (one runs at a time) */
  let pumping: Promise<void> | null = null;
  let again = false;

  /** Once per start: rows left `sending` by a stop become pending again (a failure is logged, not retried). */
  function resume(): Promise<void> {
    resumed ??= outbox.resumeInterrupted().then(
      (n) => {
        if (n > 0) log.info('alert outbox: resuming notifications interrupted by a stop', { rows: n });
      },
      (err: unknown) => {
        log.warn('alert outbox resume failed', { error: (err as Error)?.message ?? String(err) });
      },
    );
    return resumed;
  }

  /** Looks for due rows; one pass at a time, so the slots are never overfilled across its awaits. */
  function pump(): Promise<void> {
    if (pumping) {
      again = true;
      return pumping;
    }
    pumping = (async () => {
      try {
        do {
          again = false;
          await pumpOnce();
        } while (again && !halted);
      } finally {
        pumping = null;
      }
    })();
    return pumping;
  }

  async function pumpOnce(): Promise<void> {
    if (halted) return;
    await resume();
    const room = concurrency - inFlight.size;
    if (room <= 0) return;
    for (const row of await outbox.due(options.now(), room + inFlight.size)) {
      if (inFlight.size >= concurrency || halted) break;
      // claim is a conditioned update: only one pump (of any node) takes a row
      if (inFlight.has(row.id) || !(await outbox.claim(row.id))) continue;
      if (halted) break; // stopped meanwhile: the row stays `sending`, resumed by the next start
      const attempt = send(row).finally(() => {
        inFlight.delete(row.id);
        void kick(); // a slot is free: the next due row may go
      });
      inFlight.set(row.id, attempt);
    }
  }

  function kick(): Promise<void> {
    return pump().catch((err: unknown) => {
      log.warn('alert outbox poll failed', { error: (err as Error)?.message ?? String(err) });
    });
  }

  async function send(row: OutboxRow): Promise<void> {
    const notification = JSON.parse(row.notification) as OutgoingNotification;
    const attempts = row.attempts + 1;
    let result: DeliveryResult;
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping.signal]);
    try {
      // The sender must settle when the signal aborts; the race makes sure a faulty one cannot hang a slot.
      result = await Promise.race([
        sender.send(row.organization_id, row.channel_id, notification, signal),
        new Promise<DeliveryResult>((resolve) =>
          signal.addEventListener(
            'abort',
            () => resolve({ ok: false, retryable: true, error: `no answer within ${timeoutMs} ms` }),
            { once: true },
          ),
        ),
      ]);
    } catch (err) {
      result = { ok: false, retryable: true, error: (err as Error)?.message ?? String(err) };
    }
    if (halted && !result.ok) {
      // Stopping: leave the row for the next start (it is still `sending`, resumed then).
      return;
    }
    if (result.ok) {
      await outbox.markSent(row.id, options.now());
      return;
    }
    const error = (result.error ?? `failed${result.status ? ` (${result.status})` : ''}`).slice(0, 500);
    if (!result.retryable || attempts >= maxAttempts) {
      await outbox.markFailed(row.id, error);
      log.warn('alert notification failed', { channel_id: row.channel_id, attempts, error });
      return;
    }
    await outbox.retryAt(row.id, options.now() + backoffMs(attempts, baseDelayMs, maxDelayMs, random), error);
  }

  async function stop(): Promise<void> {
    halted = true;
    if (timer) clearTimeout(timer);
    stopping.abort(); // attempts in flight end now; their rows stay `sending` and resume at the next start
    await pumping?.catch(() => undefined);
    await Promise.allSettled([...inFlight.values()]);
  }

  return {
    start(pollMs = options.pollMs ?? 1000) {
      if (closed) return;
      if (halted) {
        // a restart: attempts get a live signal again, and rows left `sending` are resumed again
        halted = false;
        stopping = new AbortController();
        resumed = null;
      }
      const mine = ++starts;
      void resume();
      if (pollMs <= 0) return;
      const tick = () => {
        timer = setTimeout(() => {
          void kick().then(() => {
            if (!halted && starts === mine) tick();
          });
        }, pollMs);
        timer.unref();
      };
      tick();
    },
    kick: () => void kick(),
    async drain() {
      await pump();
      while (inFlight.size > 0) await Promise.allSettled([...inFlight.values()]);
    },
    stop,
    async close() {
      closed = true;
      await stop();
    },
    get inFlight() {
      return inFlight.size;
    },
  };
}
