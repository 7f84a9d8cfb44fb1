// A read right after a line-protocol write sees it before the writer folds it. The embedded
// writer's client answers a read of a key from the stored rows alone when nothing was appended to
// the key's slot since the last fold (drivers/embedded/writer-client.ts); a body the direct reader
// takes (intake/line-direct.ts) marks its keys' slots by the reader's hashes, any other body and
// every read by hashing the key: both must name the same slot, or the read would miss the write.
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
  // A window gathers for 3 s at least: the reads after the second writes come before their fold.
  server = await startTestServer({}, { writer: { foldAfterMs: 3000 } });
  const agent = await createProjectWithToken(server, { granularities: ['1m', '1h'] });
  as = { token: agent.sourceToken, sourceId: agent.sourceId };
});
after(() => server.stop());

const T0 = Date.UTC(2026, 0, 24, 10, 0, 0);
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;
const KEYS = 24;

/** Lines of KEYS series at minute `minute`; `unsorted` puts the tags out of order (the parser's way, no hashes). */
function body(prefix: string, minute: number, value: number, unsorted: boolean): string {
  return Array.from({ length: KEYS }, (_, i) =>
    unsorted
      ? `disk,path=/p${i},host=${prefix}${i} used=${value + i} ${ns(T0 + minute * 60_000)}`
      : `cpu,host=${prefix}${i} idle=${value + i} ${ns(T0 + minute * 60_000)}`,
  ).join('\n');
}

async function write(text: string): Promise<void> {
  const res = await fetch(`${server.url}/api/v2/write`, {
    method: 'POST',
    headers: { authorization: `Token ${as.token}` },
    body: text,
  });
  assert.equal(res.status, 204, await res.text());
}

/** The `last` of a field in each minute of the hour from T0 that has one. */
async function lasts(key: string, field: string): Promise<number[]> {
  const q = new URLSearchParams({
    key,
    from: new Date(T0).toISOString(),
    to: new Date(T0 + 59 * 60_000).toISOString(),
    granularity: '1m',
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, as);
  assert.equal(res.status, 200, res.text);
  return (res.body.data.values as Array<Record<string, { last?: number }>>)
    .map((v) => v[field]?.last)
    .filter((v): v is number => v !== undefined);
}

function folded(): number {
  const row = server.deps.db.prepare('SELECT folded_up_to FROM metric_fold_state WHERE id = 1').get() as {
    folded_up_to: number;
  };
  return row.folded_up_to;
}

test(
  'a key written by a direct or a parsed body is read back before its fold, whichever way its slot was found',
  embeddedOnly("the embedded writer's slots and folds (a cluster project's write is read from PostgreSQL)"),
  async () => {
    // Minute 0 of every key, folded: from then on a read trusts the slots.
    await write(body('a', 0, 100, false));
    await write(body('b', 0, 100, true));
    const deadline = Date.now() + 20_000;
    while (folded() < 2) {
      assert.ok(Date.now() < deadline, 'the first writes were not folded');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 100)); // the client hears of the fold
    // Minute 1, read at once: the window holds it, the stored rows do not yet.
    await write(body('a', 1, 200, false));
    await write(body('b', 1, 200, true));
    for (let i = 0; i < KEYS; i++) {
      assert.deepEqual(await lasts(`cpu,host=a${i}`, 'idle'), [100 + i, 200 + i], `cpu,host=a${i}`);
      assert.deepEqual(await lasts(`disk,host=b${i},path=/p${i}`, 'used'), [100 + i, 200 + i], `disk b${i}`);
    }
    assert.ok(folded() < 4, 'the second writes were folded before the reads ended: nothing was tested');
  },
);
