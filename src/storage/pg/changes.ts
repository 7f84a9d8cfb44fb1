// The node's feed of committed changes to the rows its caches hold (cluster mode, docs/cluster.md
// "Caches that assumed one writer"). Several nodes share one PostgreSQL; each keeps short-lived
// caches of control-plane rows (the sources repository's token and source caches, the engine's
// enabled transponders). A write that changes what such a cache holds sends
// `pg_notify('service_changes', '<kind>:<id>')` in its own transaction, so PostgreSQL delivers it
// to every listening node when, and only if, the transaction commits; each node drops the entries
// it names. The writing node gets its own notification too (it has already dropped its entries:
// dropping twice is harmless).
//
// One dedicated connection per node (not one of the pool's: a LISTEN belongs to its session),
// opened when the first cache subscribes. When it breaks, it is opened again with back-off
// (50-100 ms, doubling to 5-10 s; afresh once a connection has listened for 30 s); meanwhile the caches fall back to their time-to-live (2 s),
// which stays as the safety net. Every time LISTEN takes effect the subscribers are told to drop
// everything (`reset`): notifications sent while no LISTEN was in effect are lost. A ping every
// 10 s (answered within 5 s, or the connection is replaced) finds a connection that died without
// an error (a half-open TCP connection would otherwise deliver nothing until the kernel gave up).
import pg from 'pg';
import type { Sql } from './client';

export const CHANGES_CHANNEL = 'service_changes';

/**
 * What changed: `source:<source id>` a source's row changed or was removed (its tokens and
 * transponders with it); `token:<source token id>` a source token was revoked;
 * `transponders:<source id>` a transponder of the source was added, changed or removed.
 */
export type ChangeKind = 'source' | 'token' | 'transponders';
/** A connection that listened this long before it broke starts the back-off afresh. */
const STABLE_MS = 30_000;
/** How long close() waits for the connection to end. */
const CLOSE_WAIT_MS = 5_000;
const KINDS: ReadonlySet<string> = new Set<ChangeKind>(['source', 'token', 'transponders']);

/** `pg_notify(…)` of `kind` with the id in `column`: for a `SELECT … FROM <changed rows>`. */
export const notifySql = (kind: ChangeKind, column: string): string =>
  `pg_notify('${CHANGES_CHANNEL}', '${kind}:' || ${column})`;

/** Sends the change on `sql` (a transaction's connection: delivered when it commits). */
export async function notifyChange(sql: Sql, kind: ChangeKind, id: string): Promise<void> {
  await sql.run('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, `${kind}:${id}`]);
}

/** A notification's payload, or null when it is not one of ours. */
export function parseChange(payload: string | undefined): { kind: ChangeKind; id: string } | null {
  if (payload === undefined) return null;
  const colon = payload.indexOf(':');
  if (colon <= 0 || colon === payload.length - 1) return null;
  const kind = payload.slice(0, colon);
  return KINDS.has(kind) ? { kind: kind as ChangeKind, id: payload.slice(colon + 1) } : null;
}

export interface ChangeSubscriber {
  /** a change committed by some node (this one included) */
  change(kind: ChangeKind, id: string): void;
  /** LISTEN (again) in effect: changes may have been missed before it, drop everything */
  reset(): void;
}

export interface ChangeFeed {
  subscribe(subscriber: ChangeSubscriber): void;
  /** whether LISTEN is in effect on a live connection now */
  readonly listening: boolean;
  /** how many times LISTEN took effect (1 after the first connection, +1 on every reconnection) */
  readonly listens: number;
  /** the listening backend's process id (pg_stat_activity.pid), null while disconnected */
  readonly backendPid: number | null;
  /** stops listening and reconnecting; resolves once the connection is closed */
  close(): Promise<void>;
}

export interface ChangeFeedOptions {
  /** first delay before reconnecting, ms (doubled on each failed attempt) */
  minBackoffMs?: number;
  /** longest delay before reconnecting, ms */
  maxBackoffMs?: number;
  /** ms between pings of an idle listening connection */
  pingMs?: number;
  /** ms a ping may take before the connection is given up and replaced */
  pingTimeoutMs?: number;
}

/** Listens on a connection `connect` makes (a new, unconnected client each call). */
export function createChangeFeed(connect: () => pg.Client, options: ChangeFeedOptions = {}): ChangeFeed {
  const minBackoff = options.minBackoffMs ?? 100;
  const maxBackoff = options.maxBackoffMs ?? 10_000;
  const pingMs = options.pingMs ?? 10_000;
  const pingTimeoutMs = options.pingTimeoutMs ?? 5_000;
  const subscribers: ChangeSubscriber[] = [];
  /** the connection in use (connecting or listening), null between attempts and after close */
  let client: pg.Client | null = null;
  let listening = false;
  let listens = 0;
  let failures = 0;
  /** when LISTEN last took effect (performance.now()), null while not listening */
  let listenedAt: number | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let pinging = false;
  /** connections being closed: close() waits for them (a scratch database is dropped after it) */
  const ending = new Set<Promise<void>>();

  const each = (fn: (s: ChangeSubscriber) => void): void => {
    for (const s of subscribers) {
      try {
        fn(s);
      } catch {
        // a cache's failure to drop must not stop the others, nor the listener
      }
    }
  };

  function end(c: pg.Client): void {
    const done = c.end().catch(() => undefined);
    ending.add(done);
    void done.then(() => ending.delete(done));
  }

  /** The connection `c` failed (or was given up): close it and try again after the back-off. */
  function lost(c: pg.Client): void {
    if (c !== client) return;
    client = null;
    listening = false;
    // a connection that keeps breaking soon after LISTEN backs off too (each LISTEN drops the caches)
    if (listenedAt !== null && performance.now() - listenedAt >= STABLE_MS) failures = 0;
    listenedAt = null;
    end(c);
    if (closed) return;
    const delay = Math.min(maxBackoff, minBackoff * 2 ** Math.min(failures, 20));
    failures++;
    retry = setTimeout(
      () => {
        retry = undefined;
        void open();
      },
      delay / 2 + (Math.random() * delay) / 2,
    );
    retry.unref();
  }

  async function open(): Promise<void> {
    if (closed) return;
    const c = connect();
    client = c;
    c.on('error', () => lost(c));
    c.on('end', () => lost(c));
    c.on('notification', (message) => {
      if (c !== client || message.channel !== CHANGES_CHANNEL) return;
      const change = parseChange(message.payload);
      if (change) each((s) => s.change(change.kind, change.id));
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch {
      lost(c);
      return;
    }
    if (c !== client) return; // closed, or failed meanwhile
    listening = true;
    listenedAt = performance.now();
    listens++;
    each((s) => s.reset());
  }

  /** Ask the listening connection for an answer; none in time: replace it. */
  async function ping(): Promise<void> {
    const c = client;
    if (!listening || !c || pinging) return;
    pinging = true;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        c.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer')), pingTimeoutMs);
        }),
      ]);
    } catch {
      lost(c);
    } finally {
      clearTimeout(timer);
      pinging = false;
    }
  }

  let pinger: NodeJS.Timeout | undefined;

  return {
    subscribe(subscriber: ChangeSubscriber): void {
      subscribers.push(subscriber);
      if (!pinger && !closed) {
        pinger = setInterval(() => void ping(), pingMs);
        pinger.unref();
        void open();
      }
    },
    get listening() {
      return listening;
    },
    get listens() {
      return listens;
    },
    get backendPid() {
      const pid = listening ? (client as { processID?: number } | null)?.processID : undefined;
      return typeof pid === 'number' ? pid : null;
    },
    async close(): Promise<void> {
      closed = true;
      clearTimeout(retry);
      clearInterval(pinger);
      const c = client;
      client = null;
      listening = false;
      if (c) end(c);
      // bounded: a connection to a host that stopped answering may never report its end
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([...ending]),
        new Promise((resolve) => {
          timer = setTimeout(resolve, CLOSE_WAIT_MS);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
