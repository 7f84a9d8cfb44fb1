// Reads of the embedded store while its writer folds: a fold of thousands of rows cut into
// transactions of a few rows each (chunkMs 0) that stall inside (foldStallMs, as on a slow disk),
// so that the writer answers reads in the middle of transactions that commit right after. A read
// never retries against the fold nor answers 503; it sees every acknowledged point at once,
// exactly once (docs/storage.md "Reads").
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type TestServer,
  embeddedOnly,
} from '../helpers/server';

let server: TestServer;
let as: { token: string; sourceId: string };
before(async () => {
  server = await startTestServer({}, { writer: { chunkMs: 0, foldAfterMs: 500, foldStallMs: 3 } });
  const agent = await createProjectWithToken(server, { granularities: ['1m', '1h', '1d'] });
  as = { token: agent.sourceToken, sourceId: agent.sourceId };
});
after(() => server.stop());

const DAY = Date.UTC(2026, 2, 1);
const BATCHES = 16;
const PER_BATCH = 1000;
const KEYS = 20;

/** Batch `b`: 1,000 points over the day's minutes, 3 leaves each, 20 keys (a fold of thousands of rows). */
function batch(b: number) {
  return Array.from({ length: PER_BATCH }, (_, i) => ({
    key: `k${i % KEYS}`,
    at: new Date(DAY + ((b * 37 + i * 7) % 1440) * 60_000).toISOString(),
    values: { n: 1, amount: { net: 2, tax: 3 } },
  }));
}

interface Sums {
  n: number;
  net: number;
  tax: number;
  buckets: number;
}

/** The sums of a key's day at `granularity` (200 asserted), or the system key's count. */
async function sums(granularity: string, key?: string): Promise<Sums> {
  const to = granularity === '1m' ? DAY + 1439 * 60_000 : granularity === '1h' ? DAY + 23 * 3_600_000 : DAY;
  const query = new URLSearchParams({
    from: new Date(DAY).toISOString(),
    to: new Date(to).toISOString(),
    granularity,
    ...(key ? { key } : {}),
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as);
  assert.equal(res.status, 200, `GET answered ${res.status}: ${res.text}`);
  const out = { n: 0, net: 0, tax: 0, buckets: res.body.data.values.length };
  for (const v of res.body.data.values as Array<Record<string, any>>) {
    out.n += key ? (v.n ?? 0) : (v.count ?? 0);
    out.net += v.amount?.net ?? 0;
    out.tax += v.amount?.tax ?? 0;
  }
  return out;
}

async function foldState(): Promise<{ folding: boolean; folded: number }> {
  const state = server.deps.db
    .prepare('SELECT folding_up_to, folded_up_to FROM metric_fold_state WHERE id = 1')
    .get() as Record<string, number | null>;
  return { folding: state.folding_up_to !== null, folded: state.folded_up_to ?? 0 };
}

test(
  'reads during and right after a long fold answer 200 with every acknowledged point, exactly once',
  embeddedOnly("the embedded store's metric writer (its merges and folds) holds no project in cluster mode"),
  async () => {
    let acked = 0;
    let sent = 0;
    let readsDuringFolds = 0;
    let stop = false;
    // A second client reads all the time: between what was acknowledged before the read and what was sent.
    const reader = (async () => {
      let reads = 0;
      while (!stop) {
        const low = acked;
        const { folding } = await foldState();
        const day = await sums('1m', 'k0');
        const high = sent;
        assert.ok(
          day.n >= low / KEYS && day.n <= high / KEYS,
          `read ${day.n} outside [${low / KEYS}, ${high / KEYS}]`,
        );
        assert.equal(day.net, 2 * day.n);
        if (folding) readsDuringFolds++;
        reads++;
      }
      return reads;
    })();
    try {
      await load();
    } finally {
      stop = true;
    }
    const reads = await reader;
    assert.ok(reads > 0);
    assert.ok(readsDuringFolds > 0, 'some reads ran while a fold was in progress');
    // Right after the load, and once everything is folded: the same sums.
    const all = { n: acked / KEYS, net: (2 * acked) / KEYS, tax: (3 * acked) / KEYS, buckets: 1440 };
    assert.deepEqual(await sums('1m', 'k19'), all);
    await server.deps.metrics.flush();
    assert.deepEqual(await sums('1m', 'k19'), all);
    assert.equal((await sums('1d')).n, BATCHES * PER_BATCH);

    async function load(): Promise<void> {
      for (let b = 0; b < BATCHES; b++) {
        sent += PER_BATCH;
        const res = await request(server, 'POST', '/api/v1/metrics/batch', { points: batch(b) }, as);
        assert.equal(res.status, 201);
        acked += PER_BATCH;
        // Nothing in flight now: every granularity holds exactly what was acknowledged.
        for (const [g, buckets] of [
          ['1m', 1440],
          ['1h', 24],
          ['1d', 1],
        ] as const) {
          for (const key of ['k0', 'k7']) {
            assert.deepEqual(await sums(g, key), {
              n: acked / KEYS,
              net: (2 * acked) / KEYS,
              tax: (3 * acked) / KEYS,
              buckets,
            });
          }
        }
        assert.equal((await sums('1h')).n, acked, 'the system key counts every point');
      }
    }
  },
);
