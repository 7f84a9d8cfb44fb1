// Cluster mode with three nodes (SPEC 14, issue 25 point 2, docs/cluster.md): three service processes
// on one PostgreSQL (`storage.url`), each with its own data directory and the same secrets key,
// behind a small round-robin proxy in this process (node's http module; a node whose connection is
// refused is skipped, as a load balancer does). Through the proxy: an account, a project and its
// token; then writers send single points and batches to the same keys and buckets through all three
// nodes at once while the node running the background jobs is SIGKILLed (another takes the jobs'
// lease over) and started again on its data directory, and while every PostgreSQL connection of the
// nodes is cut (`pg_terminate_backend`, with writes waiting on a lock so that some are surely cut). Every acknowledged (2xx) write must be stored exactly once: each
// request carries a ledger leaf of its own (1 when it is there once; absent or 1 for a request that
// was not acknowledged), and every leaf of every key and of the system key, per bucket and per
// granularity of the project, lies between the acknowledged sum and the acknowledged plus the
// unacknowledged sum (equal when nothing failed). No answer is ever a 500; the cut answers 503 and
// every node writes again by itself afterwards. Then sign-in, sessions, dashboards, share links and
// monitors are made through one node and used through the others, and a share link and a source
// token revoked through one node are refused by the others once their 2 s caches have passed.
// Skipped with a message when no PostgreSQL answers on 127.0.0.1:5432 (test/drivers/network.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startService, type ServiceProcess } from '../helpers/process';
import { pgSkip, pgUrl } from '../helpers/pg-store';
import { SERVERS, freePort, scratchDatabase } from '../drivers/network';
import { request, uniqueEmail, type Reply } from '../helpers/server';
import { monitorBody } from '../helpers/monitors';

// Its nodes are in cluster mode whatever the run: once is enough, in `npm test`, not again in the
// cluster-mode pass of the HTTP tests (TEST_STORAGE=postgres, `npm run test:pg`).
const skip =
  process.env.TEST_STORAGE === 'postgres' ? 'cluster-nodes: runs in the first pass (npm test)' : pgSkip();
const NODES = 3;
/** the jobs' lease (cluster.lease_ms): short, so that a killed holder is replaced within seconds */
const LEASE_MS = 3000;
const WRITERS = 5;
const GRANULARITIES = ['1m', '1h', '1d', '1mo'];
const HOT = 'hot';
const WARM = ['warm::a', 'warm::b', 'warm::c'];
const SYSTEM_KEY = '__system__key__';
const CSRF = { 'x-service-csrf': '1' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Node {
  index: number;
  port: number;
  dataDir: string;
  proc: ServiceProcess | null;
  url: string;
  /** what its processes wrote to stderr (log level warn), each life's in turn */
  logs: string[];
}

/** What the proxy saw of one request: the node that answered (or -1) and how. */
interface Outcome {
  status: number;
  node: number;
  error?: string;
}

/**
 * The round-robin proxy: each request goes to the next node; a refused connection (a node that is
 * down) moves on to the next one, since nothing reached it; any other failure (a reset, a node
 * killed while it held the request) answers 502 with `x-test-error`, and the request counts as not
 * acknowledged. The answering node is named in `x-test-node`.
 */
async function startProxy(nodes: Node[]) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    const first = next++; // this request's turn; a refused node passes it to the following one
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(Buffer.concat(chunks), 0));
    let failed = false;
    const fail = (node: number, code: string) => {
      if (failed) return; // an upstream error and its abort: one answer
      failed = true;
      if (res.headersSent) return res.destroy();
      res.writeHead(502, {
        'content-type': 'application/json',
        'x-test-node': String(node),
        'x-test-error': code,
      });
      res.end(JSON.stringify({ errors: { detail: `proxy: ${code}` } }));
    };
    const forward = (body: Buffer, tries: number) => {
      if (tries >= nodes.length) return fail(-1, 'ECONNREFUSED');
      const node = nodes[(first + tries) % nodes.length]!;
      const headers = {
        ...req.headers,
        host: `127.0.0.1:${node.port}`,
        'content-length': String(body.length),
      };
      delete headers.connection;
      delete headers['transfer-encoding'];
      const up = http.request(
        { host: '127.0.0.1', port: node.port, method: req.method, path: req.url, headers, agent },
        (upRes) => {
          const out: http.OutgoingHttpHeaders = { ...upRes.headers, 'x-test-node': String(node.index) };
          for (const h of ['connection', 'keep-alive', 'transfer-encoding']) delete out[h];
          const body: Buffer[] = [];
          upRes.on('data', (c: Buffer) => body.push(c));
          upRes.on('end', () => {
            res.writeHead(upRes.statusCode ?? 502, out);
            res.end(Buffer.concat(body));
          });
          upRes.on('error', (err: NodeJS.ErrnoException) => fail(node.index, err.code ?? err.message));
          upRes.on('aborted', () => fail(node.index, 'ABORTED'));
        },
      );
      up.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code === 'ECONNREFUSED' && !res.headersSent) return forward(body, tries + 1);
        fail(node.index, err.code ?? err.message);
      });
      up.end(body);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      agent.destroy();
    },
  };
}

/** One point as sent, to compute what must be stored. */
interface Point {
  key: string;
  at: string;
  values: Record<string, number | Record<string, number>>;
}

/** A write request as sent and answered. */
interface Sent {
  writer: number;
  seq: number;
  ledger: string;
  points: Point[];
  startedAt: number;
  endedAt: number;
  outcome: Outcome;
}

/** Leaf paths (dots) of a nested values object. */
function leaves(values: unknown, prefix = '', out = new Map<string, number>()): Map<string, number> {
  for (const [k, v] of Object.entries(values as Record<string, unknown>)) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === 'object') leaves(v, p, out);
    else out.set(p, (out.get(p) ?? 0) + (v as number));
  }
  return out;
}

/** The UTC start of the bucket of `at` (the project is in UTC) for the granularities used here. */
function bucketStart(at: number, granularity: string): number {
  const d = new Date(at);
  switch (granularity) {
    case '1m':
      return Math.floor(at / 60_000) * 60_000;
    case '1h':
      return Math.floor(at / 3_600_000) * 3_600_000;
    case '1d':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    case '1mo':
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  }
  throw new Error(granularity);
}

/** Sums per key, granularity, bucket and leaf path. */
class Tally {
  readonly sums = new Map<string, number>();
  add(key: string, granularity: string, bucket: number, leaf: string, n: number) {
    const id = `${key}\u0000${granularity}\u0000${bucket}\u0000${leaf}`;
    this.sums.set(id, (this.sums.get(id) ?? 0) + n);
  }
  addPoint(p: Point) {
    const at = Date.parse(p.at);
    for (const g of GRANULARITIES) {
      const b = bucketStart(at, g);
      for (const [leaf, n] of leaves(p.values)) this.add(p.key, g, b, leaf, n);
      this.add(SYSTEM_KEY, g, b, 'count', 1);
      this.add(SYSTEM_KEY, g, b, `keys.${p.key}`, 1);
    }
  }
  get(id: string) {
    return this.sums.get(id) ?? 0;
  }
}

describe('three nodes on one PostgreSQL (cluster mode)', { skip }, () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let storageUrl: string;
  const nodes: Node[] = [];
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const secretKey = randomBytes(32).toString('hex');
  const account = { email: uniqueEmail('cluster'), password: 'correct horse battery' };
  let userToken: string;
  let sourceId: string;
  let sourceToken: string;
  /** tests that ran to their end */
  let passed = 0;
  /** what a node logged (warn and above) in every life so far, line by line */
  const logLines = (node: Node) =>
    [...node.logs, node.proc?.stderr() ?? '']
      .join('')
      .split('\n')
      .filter((l) => l !== '');
  /** every answer's status seen in this file, by the node that answered */
  const statuses: Array<{ status: number; node: number; what: string }> = [];

  async function startNode(node: Node) {
    node.proc = await startService(['serve', '--port', String(node.port), '--data', node.dataDir], {
      SERVICE_STORAGE_URL: storageUrl,
      SERVICE_SECRET_KEY: secretKey,
      SERVICE_CLUSTER_LEASE_MS: String(LEASE_MS),
      SERVICE_LOG_LEVEL: 'warn',
    });
    node.url = node.proc.url;
  }

  async function stopNode(node: Node, signal: NodeJS.Signals) {
    const proc = node.proc;
    if (!proc) return;
    node.proc = null;
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), 10_000);
    await proc.exited;
    clearTimeout(timer);
    node.logs.push(proc.stderr());
  }

  /** A request to one node (or the proxy), its status recorded; a 500 anywhere fails the file. */
  async function call(
    target: { url: string },
    method: string,
    urlPath: string,
    body?: unknown,
    opts: Parameters<typeof request>[4] = {},
  ): Promise<Reply> {
    const res = await request(target, method, urlPath, body, opts);
    const node = Number(res.headers.get('x-test-node') ?? nodes.findIndex((n) => n.url === target.url));
    statuses.push({ status: res.status, node, what: `${method} ${urlPath}` });
    assert.ok(
      res.status < 500 || res.status === 503 || res.status === 502,
      `${method} ${urlPath}: ${res.status} ${res.text}`,
    );
    return res;
  }

  before(async () => {
    db = await scratchDatabase('postgres');
    storageUrl = pgUrl(db.name);
    for (let i = 0; i < NODES; i++)
      nodes.push({
        index: i,
        port: await freePort(),
        dataDir: mkdtempSync(path.join(os.tmpdir(), `svc-node${i}-`)),
        proc: null,
        url: '',
        logs: [],
      });
    // All three at once: their migrations meet on the advisory lock.
    await Promise.all(nodes.map(startNode));
    proxy = await startProxy(nodes);

    const signup = await call(proxy, 'POST', '/api/v1/bootstrap/signup', {
      ...account,
      organization_name: 'Cluster',
    });
    assert.equal(signup.status, 201, signup.text);
    userToken = signup.body.data.token.value;
    const project = await call(
      proxy,
      'POST',
      '/api/v1/bootstrap/projects',
      { name: 'Three nodes', granularities: GRANULARITIES, time_zone: 'UTC' },
      { token: userToken },
    );
    assert.equal(project.status, 201, project.text);
    sourceId = project.body.data.source.id;
    const token = await call(
      proxy,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: sourceId },
      { token: userToken },
    );
    assert.equal(token.status, 201, token.text);
    sourceToken = token.body.data.token.value;
  });

  after(async () => {
    await proxy?.close();
    await Promise.all(nodes.map((n) => stopNode(n, 'SIGTERM')));
    // The nodes' logs help only when something failed: then they go to stderr (the last lines).
    if (passed < 2)
      for (const n of nodes)
        console.error(`node ${n.index} (port ${n.port}):\n${logLines(n).slice(-60).join('\n')}`);
    for (const n of nodes) rmSync(n.dataDir, { recursive: true, force: true });
    await db?.drop();
  });

  test('writes through three nodes, one SIGKILLed and restarted, the database connections cut: every acknowledged point once', async (t) => {
    const started = Date.now();
    // Points fall into the last minutes (several 1m buckets; 1h/1d/1mo mostly one or two).
    const base = Math.floor(started / 60_000) * 60_000 - 6 * 60_000;
    const sent: Sent[] = [];
    let stop = false;
    let seed = 7;
    /** an integer in 0..n-1 (mulberry32: the same writes on every run) */
    const random = (n: number) => {
      seed = (seed + 0x6d2b79f5) | 0;
      let r = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
      return Math.floor((((r ^ (r >>> 14)) >>> 0) / 4294967296) * n);
    };
    const auth = { token: sourceToken, sourceId };

    async function writer(w: number) {
      for (let seq = 0; !stop; seq++) {
        const at = () => new Date(base + random(5 * 60_000)).toISOString();
        const ledger = `w${w}s${seq}`;
        const hot: Point = {
          key: HOT,
          at: at(),
          values: { count: 1, amount: 1 + random(100), req: { [ledger]: 1 } },
        };
        const single = random(2) === 0;
        const points = [hot];
        if (!single) {
          if (random(2)) points.push({ key: HOT, at: at(), values: { count: 1, amount: 1 + random(100) } });
          for (const key of WARM)
            if (random(3))
              points.push({
                key,
                at: at(),
                values: { count: 1, amount: 1 + random(1000), deep: { n: random(7) } },
              });
        }
        const entry: Sent = {
          writer: w,
          seq,
          ledger,
          points,
          startedAt: Date.now(),
          endedAt: 0,
          outcome: { status: 0, node: -1 },
        };
        sent.push(entry);
        try {
          const res = single
            ? await request(proxy, 'POST', '/api/v1/metrics', hot, auth)
            : await request(proxy, 'POST', '/api/v1/metrics/batch', { points }, auth);
          entry.outcome = {
            status: res.status,
            node: Number(res.headers.get('x-test-node') ?? -1),
            error:
              res.headers.get('x-test-error') ?? (res.status >= 300 ? res.text.slice(0, 200) : undefined),
          };
        } catch (err) {
          entry.outcome = { status: 0, node: -1, error: String(err) };
        }
        entry.endedAt = Date.now();
        if (entry.outcome.status === 503) await sleep(50); // Retry-After, shortened
      }
    }

    const acked = () => sent.filter((s) => s.outcome.status >= 200 && s.outcome.status < 300);
    const ackedOn = (node: number, since: number) =>
      acked().filter((s) => s.outcome.node === node && s.startedAt >= since).length;
    /** waits until every node has acknowledged `n` writes started after `since` */
    async function everyNodeWrites(since: number, n: number, what: string) {
      const deadline = Date.now() + 20_000;
      while (nodes.some((node) => ackedOn(node.index, since) < n)) {
        if (Date.now() > deadline)
          assert.fail(
            `${what}: acknowledged per node ${nodes.map((node) => ackedOn(node.index, since)).join('/')}`,
          );
        await sleep(100);
      }
    }

    /** the live nodes that say they run the background jobs (GET /metrics) */
    async function holders(): Promise<number[]> {
      const held = await Promise.all(
        nodes.map(async (node) => {
          if (!node.proc) return false;
          const res = await fetch(`${node.url}/metrics`).catch(() => null);
          return res?.status === 200 && /^service_jobs_lease_held 1$/m.test(await res.text());
        }),
      );
      return nodes.filter((_, i) => held[i]).map((n) => n.index);
    }
    /** waits until exactly one live node runs the jobs (at most two leases) and names it */
    async function oneHolder(what: string): Promise<number> {
      const deadline = Date.now() + 2 * LEASE_MS;
      for (;;) {
        const now = await holders();
        if (now.length === 1) return now[0]!;
        assert.ok(Date.now() < deadline, `${what}: nodes running the jobs: ${now.join(',') || 'none'}`);
        await sleep(50);
      }
    }

    const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
    try {
      await everyNodeWrites(started, 5, 'before the kill');
      await sleep(Math.max(0, started + 2000 - Date.now()));

      // SIGKILL mid-load the node that runs the background jobs (holds their lease); the proxy
      // skips it while it is down, and another node takes the jobs over within 4/3 of a lease
      // (docs/cluster.md "Jobs run once"); then start it again on its data directory.
      const holder = await oneHolder('before the kill');
      const victim = nodes[holder]!;
      const killedAt = Date.now();
      victim.proc!.child.kill('SIGKILL');
      const exit = await victim.proc!.exited;
      assert.equal(exit.signal, 'SIGKILL');
      victim.logs.push(victim.proc!.stderr());
      victim.proc = null;
      const takeover = oneHolder('after the kill').then((node) => ({ node, ms: Date.now() - killedAt }));
      takeover.catch(() => undefined); // awaited below, after the restart: no unhandled rejection meanwhile
      await sleep(1000);
      await startNode(victim);
      const restartedAt = Date.now();
      await everyNodeWrites(restartedAt, 5, 'after the restart');
      const taken = await takeover;
      assert.ok(taken.ms <= (LEASE_MS * 4) / 3 + 1500, `the jobs taken over ${taken.ms} ms after the kill`);

      // The connection cut: writes held on a lock of the project's bucket table (every write takes
      // it), so that some are cut inside their transaction, then every backend of the nodes ended.
      const admin = new pg.Client({ ...SERVERS.postgres, database: db.name });
      await admin.connect();
      let cutAt = 0;
      let cut = 0;
      try {
        const schemas = await admin.query(
          "SELECT table_schema FROM information_schema.tables WHERE table_name = 'trifle_stats' AND table_schema LIKE 'svc_project_%'",
        );
        assert.equal(schemas.rows.length, 1, 'the project keeps its buckets in the storage.url database');
        const table = `"${schemas.rows[0].table_schema}".trifle_stats`;
        await admin.query('BEGIN');
        await admin.query(`LOCK TABLE ${table} IN SHARE ROW EXCLUSIVE MODE`);
        const waitDeadline = Date.now() + 10_000;
        for (;;) {
          const waiting = await admin.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()",
            [db.name],
          );
          if (waiting.rows[0].n >= 2 || Date.now() > waitDeadline) break;
          await sleep(50);
        }
        cutAt = Date.now();
        const ended = await admin.query(
          'SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()) AS t',
          [db.name],
        );
        cut = ended.rows[0].n;
        await admin.query('ROLLBACK');
      } finally {
        await admin.end();
      }
      assert.ok(cut > 0, 'the nodes had connections to end');
      await everyNodeWrites(Date.now(), 5, 'after the connection cut');
      const holderAfterCut = await oneHolder('after the connection cut');
      const cutAnswers = sent.filter((s) => s.startedAt < cutAt && s.endedAt >= cutAt);
      assert.ok(
        cutAnswers.some((s) => s.outcome.status === 503),
        `a write cut in its transaction answers 503: ${cutAnswers.map((s) => s.outcome.status).join(',')}`,
      );
      t.diagnostic(
        `killed node ${victim.index} (the jobs' holder) at +${killedAt - started} ms, jobs on node ${taken.node} ` +
          `${taken.ms} ms later, restarted at +${restartedAt - started} ms; jobs on node ${holderAfterCut} after the cut; ` +
          `cut ${cut} backends at +${cutAt - started} ms, in flight then: ${cutAnswers.map((s) => s.outcome.status).join(',')}`,
      );
    } finally {
      stop = true;
      await Promise.all(writers);
    }

    // What must be there: the acknowledged writes; what may be: the others.
    const must = new Tally();
    const may = new Tally();
    const byStatus = new Map<string, number>();
    for (const s of sent) {
      const ok = s.outcome.status >= 200 && s.outcome.status < 300;
      for (const p of s.points) (ok ? must : may).addPoint(p);
      const label = ok
        ? String(s.outcome.status)
        : `${s.outcome.status}${s.outcome.status === 502 || s.outcome.status === 0 ? ` ${s.outcome.error}` : ''}`;
      byStatus.set(label, (byStatus.get(label) ?? 0) + 1);
    }
    const wrong = sent.filter((s) => ![0, 201, 502, 503].includes(s.outcome.status));
    assert.deepEqual(
      wrong.map((s) => `${s.outcome.status} ${s.outcome.error}`),
      [],
      'every write is acknowledged (201), refused as unavailable (503) or cut (502, none)',
    );
    const perNode = nodes.map(
      (n) =>
        `node ${n.index}: ${sent.filter((s) => s.outcome.node === n.index && s.outcome.status === 201).length} acknowledged, ` +
        `${sent.filter((s) => s.outcome.node === n.index && s.outcome.status !== 201).length} failed`,
    );
    t.diagnostic(
      `${sent.length} writes (${sent.reduce((n, s) => n + s.points.length, 0)} points): ` +
        `${acked().length} acknowledged (${acked().reduce((n, s) => n + s.points.length, 0)} points), ` +
        `${sent.length - acked().length} not; ${[...byStatus].map(([k, v]) => `${k}: ${v}`).join(', ')}; ${perNode.join('; ')}; ` +
        `503 answers: ${[...new Set(sent.filter((s) => s.outcome.status === 503).map((s) => s.outcome.error))].join(' | ')}`,
    );

    // Read back through the proxy (so through every node): each key and the system key, every
    // granularity, every bucket of the range.
    const times = sent.flatMap((s) => s.points.map((p) => Date.parse(p.at)));
    const from = new Date(Math.min(...times)).toISOString();
    const to = new Date(Math.max(...times)).toISOString();
    const ledgerSeen = new Map<string, number>();
    let checked = 0;
    for (const key of [HOT, ...WARM, SYSTEM_KEY])
      for (const granularity of GRANULARITIES) {
        const q = new URLSearchParams({ from, to, granularity });
        if (key !== SYSTEM_KEY) q.set('key', key);
        let res = await call(proxy, 'GET', `/api/v1/metrics?${q}`, undefined, auth);
        for (let i = 0; i < 5 && res.status === 503; i++)
          res = await call(proxy, 'GET', `/api/v1/metrics?${q}`, undefined, auth);
        assert.equal(res.status, 200, res.text);
        const { at, values } = res.body.data as { at: string[]; values: object[] };
        const seen = new Set<string>();
        at.forEach((bucketAt, i) => {
          const bucket = Date.parse(bucketAt);
          for (const [leaf, stored] of leaves(values[i]!)) {
            const id = `${key}\u0000${granularity}\u0000${bucket}\u0000${leaf}`;
            seen.add(id);
            if (leaf.startsWith('req.')) {
              const name = leaf.slice(4);
              ledgerSeen.set(
                `${granularity} ${name}`,
                (ledgerSeen.get(`${granularity} ${name}`) ?? 0) + stored,
              );
              continue;
            }
            const low = must.get(id);
            const high = low + may.get(id);
            assert.ok(
              stored >= low && stored <= high,
              `${key} ${granularity} ${bucketAt} ${leaf}: ${stored} stored, ${low} acknowledged, ${high - low} more sent`,
            );
            checked++;
          }
        });
        // Nothing acknowledged is missing from the answer.
        for (const [id, n] of must.sums) {
          const [k, g, b, leaf] = id.split('\u0000');
          if (k !== key || g !== granularity || leaf!.startsWith('req.')) continue;
          assert.ok(
            seen.has(id) || n === 0,
            `${key} ${granularity} ${new Date(Number(b)).toISOString()} ${leaf}: missing, ${n} acknowledged`,
          );
        }
      }
    // The ledger: every acknowledged request exactly once in every granularity, every other one at
    // most once, and nothing that was not sent.
    const ledgers = new Map(sent.map((s) => [s.ledger, s]));
    const landed: string[] = [];
    for (const granularity of GRANULARITIES)
      for (const s of sent) {
        const n = ledgerSeen.get(`${granularity} ${s.ledger}`) ?? 0;
        const ok = s.outcome.status === 201;
        assert.ok(
          ok ? n === 1 : n === 0 || n === 1,
          `${s.ledger} (${s.outcome.status}) stored ${n} times at ${granularity}`,
        );
        if (!ok && n === 1 && granularity === GRANULARITIES[0])
          landed.push(`${s.ledger} ${s.outcome.status} ${s.outcome.error ?? ''} node ${s.outcome.node}`);
      }
    for (const name of ledgerSeen.keys())
      assert.ok(ledgers.has(name.split(' ')[1]!), `unknown ledger leaf ${name}`);
    t.diagnostic(
      `${checked} stored leaves checked; ${landed.length} writes not acknowledged were stored all the same` +
        `${landed.length ? `: ${landed.join('; ')}` : ''}; log lines (warn) per node ${nodes.map((n) => logLines(n).length).join('/')}`,
    );
    passed++;
  });

  test('sign-in, sessions, dashboards, share links and monitors made through one node work through the others', async () => {
    const [a, b, c] = nodes as [Node, Node, Node];
    // Sign-in (a bearer token) through one node, used through another; a wrong password is 401.
    const login = await call(c, 'POST', '/api/v1/bootstrap/login', account);
    assert.equal(login.status, 201, login.text);
    const token = login.body.data.token.value as string;
    const me = await call(a, 'GET', '/api/v1/bootstrap/me', undefined, { token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.data.user.email, account.email);
    const wrong = await call(b, 'POST', '/api/v1/bootstrap/login', {
      ...account,
      password: 'not the password',
    });
    assert.equal(wrong.status, 401, wrong.text);

    // A cookie session opened on one node is the session on the others, and ends everywhere.
    const session = await call(a, 'POST', '/api/v1/session', account, { headers: CSRF });
    assert.equal(session.status, 201, session.text);
    const cookie = {
      cookie: session.headers
        .getSetCookie()
        .find((h) => h.startsWith('svc_session='))!
        .split(';')[0]!,
    };
    assert.equal((await call(b, 'GET', '/api/v1/session', undefined, { headers: cookie })).status, 200);
    assert.equal(
      (await call(c, 'DELETE', '/api/v1/session', undefined, { headers: { ...cookie, ...CSRF } })).status,
      200,
    );
    assert.equal((await call(a, 'GET', '/api/v1/session', undefined, { headers: cookie })).status, 401);

    // Dashboards: made on a, read on b, changed on c, a stale version refused on a.
    const made = await call(
      a,
      'POST',
      '/api/v1/dashboards',
      {
        name: 'Hot',
        key: HOT,
        source: { type: 'project', id: sourceId },
        payload: { grid: [{ id: 'n', type: 'kpi', path: 'count', function: 'sum' }] },
      },
      { token },
    );
    assert.equal(made.status, 201, made.text);
    const id = made.body.data.id as string;
    const read = await call(b, 'GET', `/api/v1/dashboards/${id}`, undefined, { token });
    assert.equal(read.status, 200, read.text);
    assert.deepEqual(read.body.data, made.body.data);
    const etag = read.headers.get('etag')!;
    assert.ok(etag, 'an ETag');
    const renamed = await call(
      c,
      'PUT',
      `/api/v1/dashboards/${id}`,
      { name: 'Hotter' },
      { token, headers: { 'if-match': etag } },
    );
    assert.equal(renamed.status, 200, renamed.text);
    const stale = await call(
      a,
      'PUT',
      `/api/v1/dashboards/${id}`,
      { name: 'Stale' },
      { token, headers: { 'if-match': etag } },
    );
    assert.equal(stale.status, 409, stale.text);
    const listed = await call(a, 'GET', '/api/v1/dashboards', undefined, { token });
    assert.deepEqual(
      listed.body.data.map((d: { id: string; name: string }) => [d.id, d.name]),
      [[id, 'Hotter']],
    );

    // A share link made on b opens on c and reads the dashboard's key on a, without signing in.
    const link = await call(b, 'POST', `/api/v1/dashboards/${id}/shares`, undefined, { token });
    assert.equal(link.status, 201, link.text);
    const shown = await call(c, 'GET', `/api/v1/shared/${link.body.data.token}`);
    assert.equal(shown.status, 200, shown.text);
    assert.equal(shown.body.data.dashboard.name, 'Hotter');
    const now = Date.now();
    const range = new URLSearchParams({
      from: new Date(now - 3_600_000).toISOString(),
      to: new Date(now).toISOString(),
      granularity: '1h',
    });
    const series = await call(a, 'GET', `/api/v1/shared/${link.body.data.token}/metrics?${range}`);
    assert.equal(series.status, 200, series.text);
    const total = (series.body.data.values as Array<{ count?: number }>).reduce(
      (n, v) => n + (v.count ?? 0),
      0,
    );
    assert.ok(total > 0, `the shared series holds the written points: ${series.text.slice(0, 200)}`);

    // Revoked on one node, gone on the others within the nodes' 2 s caches (docs/cluster.md): a
    // share link, and a source token each node has just used (so cached).
    const spare = await call(
      b,
      'POST',
      '/api/v1/bootstrap/source-tokens',
      { source_type: 'project', source_id: sourceId },
      { token },
    );
    assert.equal(spare.status, 201, spare.text);
    const spareAuth = { token: spare.body.data.token.value as string, sourceId };
    const metrics = `/api/v1/metrics?${range}`;
    for (const node of nodes)
      assert.equal((await call(node, 'GET', metrics, undefined, spareAuth)).status, 200, 'the token works');
    const unshare = await call(
      c,
      'DELETE',
      `/api/v1/dashboards/${id}/shares/${link.body.data.id}`,
      undefined,
      { token },
    );
    assert.equal(unshare.status, 200, unshare.text);
    const revoke = await call(
      c,
      'DELETE',
      `/api/v1/bootstrap/source-tokens/${spare.body.data.token.id}`,
      undefined,
      { token },
    );
    assert.equal(revoke.status, 200, revoke.text);
    const revokedAt = Date.now();
    assert.equal((await call(c, 'GET', metrics, undefined, spareAuth)).status, 401, 'at once on its node');
    await sleep(Math.max(0, revokedAt + 2_100 - Date.now()));
    for (const node of [a, b]) {
      assert.equal(
        (await call(node, 'GET', metrics, undefined, spareAuth)).status,
        401,
        `node ${node.index}`,
      );
      assert.equal((await call(node, 'GET', `/api/v1/shared/${link.body.data.token}`)).status, 404);
    }

    // Monitors: made on c, listed on a, read on b.
    const monitor = await call(
      c,
      'POST',
      '/api/v1/monitors',
      monitorBody(sourceId, { alert_metric_key: HOT, alert_metric_path: 'count' }),
      { token },
    );
    assert.equal(monitor.status, 201, monitor.text);
    const monitors = await call(a, 'GET', '/api/v1/monitors', undefined, { token });
    assert.equal(monitors.status, 200, monitors.text);
    assert.deepEqual(
      monitors.body.data.map((m: { id: string }) => m.id),
      [monitor.body.data.id],
    );
    const one = await call(b, 'GET', `/api/v1/monitors/${monitor.body.data.id}`, undefined, { token });
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.data.alert_metric_key, HOT);

    assert.deepEqual(
      statuses.filter((s) => s.status >= 500 && s.status !== 503),
      [],
      'no answer of any node was a server error',
    );
    // Nor did any node log an error (a request failed with a 500, a job or a rejection unhandled).
    assert.deepEqual(
      nodes.flatMap((n) => logLines(n).filter((l) => !/^\{.*"level":"(warn|info|debug)"/.test(l))),
      [],
      'the nodes logged warnings at most',
    );
    passed++;
  });
});
