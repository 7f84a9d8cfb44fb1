// A bucket with no stored row that a read finds in more than one place: a track the metric writer
// has merged into its window (not folded: folds wait 10 s here), then an assert and a track it has
// not merged yet (each merge stalls). The read adds the window's change and the unmerged ones as
// numbers (embedded/store.ts followedBy): the assert replaces what came before it, the track after
// it adds, in every granularity, exactly as the folded row says once the writer catches up.
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
  server = await startTestServer({}, { writer: { mergeStallMs: 150, foldAfterMs: 10_000, chunkMs: 1 } });
  const agent = await createProjectWithToken(server, { granularities: ['1m', '1h'] });
  as = { token: agent.sourceToken, sourceId: agent.sourceId };
});
after(() => server.stop());

const AT = '2026-05-01T10:30:00Z';
const post = async (values: Record<string, unknown>, operation: string) => {
  const res = await request(server, 'POST', '/api/v1/metrics', { key: 'k', at: AT, values, operation }, as);
  assert.equal(res.status, 201, res.text);
};
const read = async (granularity: string) => {
  const query = new URLSearchParams({
    key: 'k',
    from: '2026-05-01T10:00:00Z',
    to: '2026-05-01T10:30:00Z',
    granularity,
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${query}`, undefined, as);
  assert.equal(res.status, 200, res.text);
  return res.body.data.values.at(-1) as Record<string, number>;
};

test(
  'a window change then unmerged changes of a bucket without a stored row: the assert replaces, the track adds',
  embeddedOnly("the embedded store's metric writer (its merges and folds) holds no project in cluster mode"),
  async () => {
    await post({ n: 1, m: 5 }, 'track');
    await new Promise((resolve) => setTimeout(resolve, 400)); // merged into the window, not folded
    await post({ n: 10 }, 'assert');
    await post({ n: 2, m: 1 }, 'track');
    for (const granularity of ['1m', '1h'])
      assert.deepEqual(await read(granularity), { n: 12, m: 6 }, granularity);
    await server.deps.metrics.flush();
    for (const granularity of ['1m', '1h'])
      assert.deepEqual(await read(granularity), { n: 12, m: 6 }, `${granularity}, folded`);
  },
);
