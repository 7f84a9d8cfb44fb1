// Turns at the service database's write lock between the event loop's connection and the metric
// writer's thread. The writer folds in transactions of a few milliseconds, back to back; SQLite's
// busy handler on the other connection sleeps and retries (1, 2, 5, ... 100 ms), and the gaps
// between the writer's transactions are so short that under load a login or a dashboard save kept
// missing them until its 5 s busy timeout ran out (500). With the gate, a write of the event loop's
// connection says it is waiting (a counter in shared memory) and the writer, before its next fold
// transaction, waits until no such write is left (at most a bound), so the lock changes hands at once.
import type { Db } from './db';

/** How long the writer waits for the other connection's writes before it takes the lock anyway. */
export const GATE_MAX_WAIT_MS = 1_000;

export class WriteGate {
  /** what the writer's thread is handed to open the same gate */
  readonly buffer: SharedArrayBuffer;
  private readonly waiting: Int32Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.buffer = buffer;
    this.waiting = new Int32Array(buffer);
  }

  /** Runs a write of the event loop's connection, the writer stepping aside meanwhile. */
  through<T>(write: () => T): T {
    Atomics.add(this.waiting, 0, 1);
    try {
      return write();
    } finally {
      if (Atomics.sub(this.waiting, 0, 1) === 1) Atomics.notify(this.waiting, 0);
    }
  }

  /** The writer's side: blocks until no write waits (true), or `maxMs` have passed (false). */
  waitClear(maxMs = GATE_MAX_WAIT_MS): boolean {
    const deadline = performance.now() + maxMs;
    for (;;) {
      const waiting = Atomics.load(this.waiting, 0);
      if (waiting === 0) return true;
      const left = deadline - performance.now();
      if (left <= 0) return false;
      Atomics.wait(this.waiting, 0, waiting, left);
    }
  }
}

type Transaction = ReturnType<Db['transaction']>;

const gates = new WeakMap<Db, WriteGate>();

/** The gate of a connection, its writes sent through it from now on (once per connection). */
export function writeGateOf(db: Db): WriteGate {
  let gate = gates.get(db);
  if (!gate) {
    gate = new WriteGate();
    gateWrites(db, gate);
    gates.set(db, gate);
  }
  return gate;
}

/**
 * Sends every write of this connection through the gate: statements that write (`run`), `exec`,
 * and transactions that take the lock at BEGIN (`immediate`, `exclusive`: all of their statements,
 * BEGIN to COMMIT). Reads are untouched: in WAL mode they never wait for the lock, and a deferred
 * transaction (the reads' kind) takes it only with its first write, which is gated itself. Gating
 * reads too would let a busy dashboard hold the writer back.
 */
function gateWrites(db: Db, gate: WriteGate): void {
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    if (statement.reader) return statement;
    const run = statement.run;
    statement.run = (...params: unknown[]) => gate.through(() => run.apply(statement, params as never));
    return statement;
  }) as Db['prepare'];
  const exec = db.exec.bind(db);
  db.exec = (source: string) => gate.through(() => exec(source));
  const transaction = db.transaction.bind(db);
  db.transaction = ((fn: (...args: never[]) => unknown) => {
    const inner = transaction(fn) as Transaction;
    const gated =
      (variant: (...args: unknown[]) => unknown) =>
      (...args: unknown[]) =>
        gate.through(() => variant(...args));
    const outer = ((...args: unknown[]) =>
      (inner as (...a: unknown[]) => unknown)(...args)) as unknown as Transaction;
    Object.defineProperty(outer, 'deferred', { value: inner.deferred });
    Object.defineProperty(outer, 'immediate', { value: gated(inner.immediate as never) });
    Object.defineProperty(outer, 'exclusive', { value: gated(inner.exclusive as never) });
    Object.defineProperty(outer, 'database', { value: db });
    return outer;
  }) as Db['transaction'];
}
