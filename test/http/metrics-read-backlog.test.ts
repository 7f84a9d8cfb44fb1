// Reads right after a burst, while the metric writer is far behind it: every merge stalls
// (mergeStallMs, answering reads meanwhile), so the burst's appends are acknowledged (logged) long
// before they are merged. A read must not wait for that backlog: it merges its own series'
// unmerged appends itself (embedded/store.ts). What it answers must hold every point acknowledged
// before it, exactly once, in every granularity, with tracks and asserts in their order, and for
// the system key: the same values the series has once the writer has merged and folded it all.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';

const STALL_MS = 60;
const BURST = 30;

let server: TestServer;
let as: { token: string; sourceId: string };
before(async () => {
  server = await startTestServer({}, { writer: { mergeStallMs: STALL_MS, foldAfterMs: 100, chunkMs: 1 } });
  const agent = await createProjectWithToken(server, { granularities: ['1m', '1h', '1d'] });
  as = { token: agent.sourceToken, sourceId: agent.sourceId };
});
after(() => server.stop());

const DAY = Date.UTC(2026, 4, 1);
const at = (minute: number) => new Date(DAY + minute * 60_000).toISOString();

/**
 * Batch `b`: tracks of two keys over two days of minutes (some untracked), and on k.a's leaf
 * `level`: a track, then an assert, then a track in one minute (101 + b there), and an assert of
 * the minute the batch before tracked (so tracks and asserts follow each other across batches).
 */
function batch(b: number) {
  const points: Array<Record<string, unknown>> = [];
  for (let i = 0; i < 120; i++) {
    points.push({
      key: i % 3 === 0 ? 'k.b' : 'k.a',
      at: at((b * 97 + i * 31) % 2880),
      values: { n: 1, amount: { net: b + i, tax: 0.5 } },
      ...(i % 10 === 0 ? { untracked: true } : {}),
    });
  }
  const minute = (b * 53) % 2880;
  points.push({ key: 'k.a', at: at(minute), values: { level: 5 } });
  points.push({ key: 'k.a', at: at(minute), values: { level: 100 }, operation: 'assert' });
  points.push({ key: 'k.a', at: at(minute), values: { level: 1 + b } });
  if (b > 0)
    points.push({ key: 'k.a', at: at(((b - 1) * 53) % 2880), values: { level: 7 }, operation: 'assert' });
  return points;
}

const SERIES: Array<{ key?: string; granularity: string; to: number }> = [];
for (const granularity of ['1m', '1h', '1d']) {
  const to = granularity === '1m' ? 2879 * 60_000 : granularity === '1h' ? 47 * 3_600_000 : 86_400_000;
  for (const key of ['k.a', 'k.b', undefined]) SERIES.push({ key, granularity, to: DAY + to });
}
const nameOf = (s: (typeof SERIES)[number]) => `${s.key ?? '(system key)'} at ${s.granularity}`;

async function read(s: (typeof SERIES)[number]): Promise<unknown[]> {
  const query = new URLSearchParams({
    from: new Date(DAY).toISOString(),
    to: new Date(s.to).toISOString(),
    granularity: s.granularity,
    ...(s.key ? { key: s.key } : {}),
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as);
  assert.equal(res.status, 200, `GET ${nameOf(s)} answered ${res.status}: ${res.text}`);
  return res.body.data.values as unknown[];
}

async function post(points: unknown[]): Promise<void> {
  const res = await request(server, 'POST', '/api/v1/metrics/batch', { points }, as);
  assert.equal(res.status, 201, res.text);
}

test(
  'reads right after a burst the writer is far behind hold every acknowledged point exactly once',
  embeddedOnly("the embedded store's metric writer (its merges and folds) holds no project in cluster mode"),
  async () => {
    // Some of it folded first: the reads then add unmerged points to stored rows.
    for (let b = 0; b < 4; b++) await post(batch(b));
    await server.deps.metrics.flush();

    // The burst: acknowledged once logged, merged STALL_MS apart.
    for (let b = 4; b < 4 + BURST; b++) await post(batch(b));
    const acknowledged = performance.now();

    // Every read from now on must see the final values: nothing is written after the burst.
    const first = await read(SERIES[0]!);
    const firstMs = performance.now() - acknowledged;
    const seen: Array<[number, unknown[]]> = [[0, first]];
    let draining = true;
    const reader = (async () => {
      for (let i = 1; draining || i <= SERIES.length; i++)
        seen.push([i % SERIES.length, await read(SERIES[i % SERIES.length]!)]);
    })();
    const flushStarted = performance.now();
    await server.deps.metrics.flush();
    const flushMs = performance.now() - flushStarted;
    draining = false;
    await reader;

    // The backlog was real: the writer still had most of the burst to merge when the first read answered.
    assert.ok(
      flushMs > 5 * STALL_MS,
      `the writer drained in ${flushMs.toFixed(0)} ms: no backlog to read under`,
    );
    assert.ok(
      firstMs < (BURST * STALL_MS) / 2,
      `the first read took ${firstMs.toFixed(0)} ms: it waited for the writer's backlog`,
    );

    const final = await Promise.all(SERIES.map(read));
    for (const [i, values] of seen)
      assert.deepEqual(values, final[i], `${nameOf(SERIES[i]!)} read under the backlog`);
    assert.ok(seen.length > SERIES.length, 'every series read at least once under the backlog');

    // And the final values are right: the sums of every point, the assert-then-track leaf.
    const sum = (values: unknown[], pick: (v: any) => number | undefined) =>
      values.reduce<number>((n, v) => n + (pick(v) ?? 0), 0);
    const total = 4 + BURST;
    let n = 0;
    let net = 0;
    let untracked = 0;
    const perKey = new Map<string, number>();
    for (let b = 0; b < total; b++) {
      for (const p of batch(b)) {
        const values = p.values as { n?: number; amount?: { net: number } };
        n += values.n ?? 0;
        net += values.amount?.net ?? 0;
        if (p.untracked) untracked++;
        else perKey.set(p.key as string, (perKey.get(p.key as string) ?? 0) + 1);
      }
    }
    const points = [...perKey.values()].reduce((a, b) => a + b, 0) + untracked;
    for (let g = 0; g < 3; g++) {
      const [a, bKey, system] = [final[3 * g]!, final[3 * g + 1]!, final[3 * g + 2]!];
      assert.equal(sum(a, (v) => v.n) + sum(bKey, (v) => v.n), n);
      assert.equal(sum(a, (v) => v.amount?.net) + sum(bKey, (v) => v.amount?.net), net);
      assert.equal(
        sum(system, (v) => v.count),
        points,
      );
      assert.equal(
        sum(system, (v) => v.keys?.k?.a),
        perKey.get('k.a'),
      );
      assert.equal(
        sum(system, (v) => v.keys?.__untracked__),
        untracked,
      );
    }
    // the last batch's own minute: track 5, assert 100, track 1 + b; no later assert touches it
    const last = total - 1;
    const minute = (last * 53) % 2880;
    assert.equal((final[0]![minute] as any).level, 101 + last);
    // the minute before it: asserted 7 by the last batch, after its own track-assert-track
    assert.equal((final[0]![((last - 1) * 53) % 2880] as any).level, 7);
  },
);
