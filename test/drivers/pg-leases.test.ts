// The jobs' lease (src/storage/pg/leases.ts, src/ops/jobs.ts, docs/cluster.md "Jobs run once"):
// three keepers, each with its own pool as three nodes would have, on a scratch database of the
// local PostgreSQL with a short lease. Each node reaches the database through a TCP proxy of its
// own, so one node can lose the database while the others keep it. The jobs they run count their
// starts and runs: a start while another node's jobs run is an overlap. Skipped without PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SERVERS } from './network';
import {
  pgSkip,
  proxyToDatabase,
  scratchPgStore,
  type DatabaseProxy,
  type ScratchStore,
} from '../helpers/pg-store';
import { createPgStore, type PgStore } from '../../src/storage/pg/client';
import { createPgLeases, holdsLease, JOBS_LEASE } from '../../src/storage/pg/leases';
import { createJobKeeper, jobsLeaseOn, type JobKeeper, type Jobs } from '../../src/ops/jobs';
import { createLogger } from '../../src/lib/log';

const skip = pgSkip();
const log = createLogger('silent');
/** the test's lease: renewed every 200 ms, jobs stopped 160 ms before it would run out */
const TTL = 800;
const RENEW = TTL / 3;
const MARGIN = TTL / 5;
/** the counting job runs every PERIOD ms while its node holds the lease */
const PERIOD = 50;
/** what a loaded machine may add to a timer or a statement */
const SLACK = 400;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What the nodes' jobs did, across the nodes. */
class Board {
  /** nodes whose jobs are running */
  active = 0;
  /** starts of a node's jobs while another node's ran */
  overlaps = 0;
  runs: Array<{ node: string; at: number }> = [];
}

interface Node {
  name: string;
  keeper: JobKeeper;
  store: PgStore;
  proxy: DatabaseProxy;
  /** performance.now() of each start and stop of its jobs */
  started: number[];
  stopped: number[];
}

function countingJobs(board: Board, node: Pick<Node, 'name' | 'started' | 'stopped'>): Jobs {
  let timer: NodeJS.Timeout | null = null;
  let on = false;
  const run = () => {
    timer = setTimeout(() => {
      board.runs.push({ node: node.name, at: performance.now() });
      run();
    }, PERIOD);
  };
  return {
    start() {
      assert.equal(on, false, `${node.name}: started twice`);
      if (board.active > 0) board.overlaps++;
      board.active++;
      on = true;
      node.started.push(performance.now());
      run();
    },
    async stop() {
      assert.equal(on, true, `${node.name}: stopped while not running`);
      if (timer) clearTimeout(timer);
      board.active--;
      on = false;
      node.stopped.push(performance.now());
    },
  };
}

async function startNode(name: string, database: string, board: Board, ttl = TTL): Promise<Node> {
  const proxy = await proxyToDatabase();
  const url = `postgres://${SERVERS.postgres.user}@127.0.0.1:${proxy.port}/${database}`;
  const store = createPgStore(url, {
    max: 2,
    connectTimeoutMs: ttl / 3,
    statementTimeoutMs: ttl / 3,
    applicationName: `lease-test-${name}`,
  });
  const node = { name, store, proxy, started: [] as number[], stopped: [] as number[] };
  const keeper = createJobKeeper({
    lease: jobsLeaseOn(store, () => store.close()),
    ttlMs: ttl,
    jobs: countingJobs(board, node),
    log,
    holder: name,
  });
  keeper.start();
  return { ...node, keeper };
}

const holders = (nodes: Node[]) => nodes.filter((n) => n.keeper.held);

async function waitFor<T>(what: string, ms: number, probe: () => T | undefined): Promise<T> {
  const until = performance.now() + ms;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (performance.now() > until) assert.fail(`${what}: not within ${ms} ms`);
    await sleep(5);
  }
}

/** Samples the nodes every 10 ms for `ms`: how many moments had no holder, and more than one. */
async function sample(
  nodes: Node[],
  ms: number,
): Promise<{ samples: number; none: number; several: number }> {
  const out = { samples: 0, none: 0, several: 0 };
  const until = performance.now() + ms;
  while (performance.now() < until) {
    const n = holders(nodes).length;
    out.samples++;
    if (n === 0) out.none++;
    if (n > 1) out.several++;
    await sleep(10);
  }
  return out;
}

/** Consecutive runs of the counting job closer than a period (a period run twice). */
function doubleRuns(board: Board): string[] {
  const found: string[] = [];
  const runs = [...board.runs].sort((a, b) => a.at - b.at);
  for (let i = 1; i < runs.length; i++) {
    const [a, b] = [runs[i - 1]!, runs[i]!];
    // the same node's timer may fire a little early by this clock; two nodes are a takeover apart
    const least = a.node === b.node ? PERIOD - 5 : PERIOD;
    if (b.at - a.at < least) found.push(`${a.node}@${a.at.toFixed(0)} ${b.node}@${b.at.toFixed(0)}`);
  }
  return found;
}

/** The lease's remaining ms by the database, read right after `sentAt` (performance.now()). */
async function expiresBy(admin: PgStore): Promise<{ holder: string; at: number }> {
  const sentAt = performance.now();
  const row = await createPgLeases(admin).read(JOBS_LEASE);
  assert.ok(row, 'a lease row');
  // sentAt is before the database read its clock: sentAt + remaining is never after the expiry
  return { holder: row.holder, at: sentAt + (row.expiresAt - row.now) };
}

describe('the jobs lease on PostgreSQL', { skip }, () => {
  let scratch: ScratchStore;
  let database = '';
  const nodes: Node[] = [];
  before(async () => {
    scratch = await scratchPgStore();
    database = new URL(scratch.url).pathname.slice(1);
  });
  after(async () => {
    for (const n of nodes) {
      await n.keeper.close();
      n.proxy.cut();
    }
    await scratch?.drop();
  });
  const trio = async (board: Board, ttl = TTL) => {
    const three = [
      await startNode('a', database, board, ttl),
      await startNode('b', database, board, ttl),
      await startNode('c', database, board, ttl),
    ];
    nodes.push(...three);
    return three;
  };
  const stopAll = async (three: Node[]) => {
    for (const n of three) await n.keeper.close();
  };

  test('three nodes: one holds the lease at a time, and each period the job runs once', async (t) => {
    const board = new Board();
    const three = await trio(board);
    await waitFor('a first holder', SLACK, () => holders(three)[0]);
    const seen = await sample(three, 3000);
    await stopAll(three);
    t.diagnostic(
      `samples ${seen.samples}, none held ${seen.none}, several ${seen.several}; runs ${board.runs.length}; ` +
        `takes ${three.map((n) => n.keeper.stats.acquired).join('/')}`,
    );
    assert.equal(seen.several, 0, 'moments with two holders');
    assert.equal(board.overlaps, 0, 'jobs started while another node ran them');
    assert.deepEqual(doubleRuns(board), []);
    // and the jobs did run: a holder nearly all the time, the job about every period
    assert.ok(seen.none <= seen.samples * 0.2, `no holder in ${seen.none} of ${seen.samples} samples`);
    assert.ok(board.runs.length >= (0.5 * 3000) / PERIOD, `${board.runs.length} runs in 3 s`);
    assert.ok(
      three.every((n) => n.keeper.stats.failures === 0),
      'no renewal failed',
    );
  });

  test('the database cut from the holder: its jobs stop before the lease expires, another takes over', async (t) => {
    const board = new Board();
    const three = await trio(board);
    const first = await waitFor('a first holder', SLACK, () => holders(three)[0]);
    await sleep(RENEW * 2); // a few renewals
    const cutAt = performance.now();
    first.proxy.cut(); // its connections are dropped and new ones refused
    const expiry = await expiresBy(scratch.store);
    assert.equal(expiry.holder, first.name);
    const next = await waitFor('another holder', TTL + RENEW + SLACK, () =>
      holders(three).find((n) => n !== first),
    );
    const takenAfter = performance.now() - cutAt;
    await waitFor('the cut node to stop its jobs', SLACK, () =>
      first.stopped.length > 0 ? true : undefined,
    );
    const stoppedAt = first.stopped[0]!;
    await stopAll(three);
    t.diagnostic(
      `jobs stopped ${(stoppedAt - cutAt).toFixed(0)} ms after the cut, ${(expiry.at - stoppedAt).toFixed(0)} ms ` +
        `before the expiry; taken over ${takenAfter.toFixed(0)} ms after the cut`,
    );
    assert.ok(
      stoppedAt < expiry.at,
      `stopped ${(expiry.at - stoppedAt).toFixed(0)} ms before the expiry (negative: after)`,
    );
    // what the database still granted it was at most a lease from the cut
    assert.ok(stoppedAt - cutAt <= TTL - MARGIN + SLACK / 4, `stopped ${stoppedAt - cutAt} ms after the cut`);
    assert.ok(takenAfter >= expiry.at - cutAt - 5, 'not taken over before the expiry');
    assert.ok(takenAfter <= TTL + RENEW + SLACK, `taken over ${takenAfter.toFixed(0)} ms after the cut`);
    assert.notEqual(next, first);
    assert.equal(board.overlaps, 0);
    assert.deepEqual(doubleRuns(board), []);
    assert.ok(first.keeper.stats.failures > 0 && first.keeper.stats.lost === 1);
  });

  test('the database stalls for the holder (no answer, no error): its jobs stop before the expiry, it goes on trying, and holds again once it answers', async (t) => {
    const board = new Board();
    const three = await trio(board);
    const first = await waitFor('a first holder', SLACK, () => holders(three)[0]);
    await sleep(RENEW * 2);
    const stalledAt = performance.now();
    first.proxy.stall();
    const expiry = await expiresBy(scratch.store);
    assert.equal(expiry.holder, first.name);
    await waitFor('another holder', TTL + RENEW + SLACK, () => holders(three).find((n) => n !== first));
    const takenAfter = performance.now() - stalledAt;
    await waitFor('the stalled node to stop its jobs', SLACK, () =>
      first.stopped.length > 0 ? true : undefined,
    );
    const stoppedAt = first.stopped[0]!;
    await sleep(TTL);
    // its attempts got no answer, yet it went on making them (each one given up after an interval)
    const failures = first.keeper.stats.failures;
    first.proxy.resume();
    for (const n of three) if (n !== first) await n.keeper.close();
    await waitFor('the node, its database back, to hold the lease', 2 * RENEW + SLACK, () =>
      first.keeper.held ? true : undefined,
    );
    await stopAll(three);
    t.diagnostic(
      `jobs stopped ${(stoppedAt - stalledAt).toFixed(0)} ms after the stall, ${(expiry.at - stoppedAt).toFixed(0)} ms ` +
        `before the expiry; taken over ${takenAfter.toFixed(0)} ms after it; ${failures} attempts without an answer`,
    );
    assert.ok(stoppedAt < expiry.at, `stopped ${(expiry.at - stoppedAt).toFixed(0)} ms before the expiry`);
    assert.ok(failures >= 2, `${failures} attempts given up during the stall`);
    assert.equal(board.overlaps, 0);
    assert.deepEqual(doubleRuns(board), []);
  });

  test('the holder killed (no release, its connections terminated, its pool gone): another holds within a lease and a renewal', async (t) => {
    const board = new Board();
    const three = await trio(board);
    const first = await waitFor('a first holder', SLACK, () => holders(three)[0]);
    await sleep(RENEW * 2);
    const killedAt = performance.now();
    // as a SIGKILL leaves it: no DELETE of its row; the database drops its sessions
    await scratch.store.run(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1`,
      [`lease-test-${first.name}`],
    );
    void first.store.pool.end().catch(() => undefined);
    first.proxy.cut();
    await waitFor('another holder', TTL + RENEW + SLACK, () => holders(three).find((n) => n !== first));
    const takenAfter = performance.now() - killedAt;
    await stopAll(three);
    t.diagnostic(`taken over ${takenAfter.toFixed(0)} ms after the kill`);
    assert.ok(takenAfter <= TTL + RENEW + SLACK, `taken over ${takenAfter.toFixed(0)} ms after the kill`);
    assert.ok(
      takenAfter >= TTL - RENEW - MARGIN,
      `taken over after ${takenAfter.toFixed(0)} ms: before the lease ran out?`,
    );
    assert.equal(board.overlaps, 0);
    assert.deepEqual(doubleRuns(board), []);
  });

  test('a clean stop releases the lease: another node takes over at its next attempt, not at the expiry', async (t) => {
    const board = new Board();
    const long = 3000; // renewals every second: a release is seen at the next, an expiry 2-3 s later
    const three = await trio(board, long);
    const first = await waitFor('a first holder', SLACK, () => holders(three)[0]);
    await sleep(long / 3 + 100);
    const stoppedAt = performance.now();
    await first.keeper.close();
    assert.equal(first.stopped.length, 1, 'its jobs stopped');
    const row = await createPgLeases(scratch.store).read(JOBS_LEASE);
    assert.ok(row === undefined || row.holder !== first.name, 'its row is gone');
    await waitFor('another holder', long / 3 + SLACK, () => holders(three).find((n) => n !== first));
    const takenAfter = performance.now() - stoppedAt;
    await stopAll(three);
    t.diagnostic(`taken over ${takenAfter.toFixed(0)} ms after the clean stop (lease ${long} ms)`);
    assert.ok(takenAfter < long / 3 + SLACK, `taken over ${takenAfter.toFixed(0)} ms after the stop`);
    assert.equal(board.overlaps, 0);
    assert.equal(
      (await createPgLeases(scratch.store).read(JOBS_LEASE)) ?? null,
      null,
      'no row after all stopped',
    );
  });

  test('the fence: a commit of a holder that lost its lease writes nothing; one in flight holds the takeover back', async () => {
    const leases = createPgLeases(scratch.store);
    const other = createPgStore(scratch.url, { max: 2 });
    try {
      const notify = (store: PgStore, holder: string, key: string) =>
        store.tx(async (sql) => {
          if (!(await holdsLease(sql, JOBS_LEASE, holder))) return false;
          await sql.run(
            `INSERT INTO alert_outbox (idempotency_key, organization_id, monitor_id, channel_id,
               notification, next_attempt_at, created_at)
             VALUES ($1, 'org', 'monitor', 'channel', '{}', 0, 0) ON CONFLICT (idempotency_key) DO NOTHING`,
            [key],
          );
          return true;
        });
      const queued = async () =>
        (
          await scratch.store.rows<{ idempotency_key: string }>(
            'SELECT idempotency_key FROM alert_outbox ORDER BY id',
          )
        ).map((r) => r.idempotency_key);

      // A holds, is paused past its lease; B takes over and queues the period's notification.
      assert.ok(await leases.acquire(JOBS_LEASE, 'A', 200));
      assert.equal(await leases.acquire(JOBS_LEASE, 'B', 200), null, 'B waits while A holds');
      assert.equal(await notify(scratch.store, 'A', 'a-1'), true);
      await sleep(250);
      assert.ok(await leases.acquire(JOBS_LEASE, 'B', 5_000), 'B takes the expired lease');
      assert.equal(await notify(other, 'B', 'b-2'), true);
      // A wakes up and commits the round it had started: its notification (a key of its own
      // round's time) is refused, so the period is notified once.
      assert.equal(await notify(scratch.store, 'A', 'a-2'), false);
      assert.deepEqual(await queued(), ['a-1', 'b-2']);

      // B's commit is in flight when its lease runs out: C's takeover waits for that commit, and
      // reads what it wrote once it holds the lease.
      await leases.release(JOBS_LEASE, 'B');
      assert.ok(await leases.acquire(JOBS_LEASE, 'B', 200));
      const events: string[] = [];
      let commit!: () => void;
      const held = new Promise<void>((resolve) => (commit = resolve));
      const inFlight = other.tx(async (sql) => {
        assert.equal(await holdsLease(sql, JOBS_LEASE, 'B'), true);
        await sql.run(
          `INSERT INTO alert_outbox (idempotency_key, organization_id, monitor_id, channel_id,
             notification, next_attempt_at, created_at) VALUES ('b-3', 'org', 'monitor', 'channel', '{}', 0, 0)`,
        );
        await held;
        events.push('B committed');
      });
      await sleep(300); // B's lease has expired by the database's clock; its transaction is open
      const takeover = leases.acquire(JOBS_LEASE, 'C', 5_000).then((grant) => {
        events.push('C took over');
        return grant;
      });
      await sleep(200);
      const waited = [...events];
      commit(); // before any assertion, so that a failing one does not leave the transaction open
      await inFlight;
      assert.deepEqual(waited, [], 'C waits for B’s transaction');
      assert.ok(await takeover);
      assert.deepEqual(events, ['B committed', 'C took over']);
      assert.deepEqual(await queued(), ['a-1', 'b-2', 'b-3']);
      assert.equal(await notify(other, 'B', 'b-4'), false, 'B no longer holds it');
      await leases.release(JOBS_LEASE, 'C');
    } finally {
      await other.close();
    }
  });
});

describe('the jobs keeper on one node', () => {
  test('no database: the lease is always held, the jobs start at once and stop at close', async () => {
    const calls: string[] = [];
    const keeper = createJobKeeper({
      lease: null,
      ttlMs: 30_000,
      log,
      jobs: { start: () => void calls.push('start'), stop: async () => void calls.push('stop') },
    });
    keeper.start();
    assert.deepEqual(calls, ['start']); // synchronously, as server.ts started them before
    assert.equal(keeper.held, true);
    await keeper.close();
    assert.deepEqual(calls, ['start', 'stop']);
    assert.equal(keeper.held, false);
  });
});
