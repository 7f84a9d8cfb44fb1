// StatsD datagrams exactly as the common npm clients build them, to a StatsD listener of the real
// server, read back through GET /api/v1/metrics. No StatsD client is among the project's
// dependencies, so the datagrams are written out here:
// - hot-shots (DogStatsD flavour, the most used Node client): `<prefix><name>:<value>|<type>`
//   then `|@<rate>` when the rate is not 1, then `|#<tags joined by ,>` (globalTags included);
//   with `maxBufferSize` set, several metrics go in one datagram, each followed by `\n`; gaugeDelta
//   writes a `+` before positive deltas and the number's own `-` before negative ones.
// - statsd-client and node-statsd (Etsy flavour): the same without tags, one metric per datagram
//   and no newline.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { parseListeners, startListeners, type Listeners } from '../../src/intake/listeners';

let server: TestServer;
let agent: ProjectAgent;
let listeners: Listeners;

before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
  const parsed = parseListeners([
    {
      protocol: 'statsd',
      transport: 'udp',
      listen: '127.0.0.1:0',
      source: agent.sourceId,
      flush_interval: '300ms',
    },
  ]);
  assert.ok(Array.isArray(parsed), String(parsed));
  listeners = await startListeners(server.deps, parsed);
});
after(async () => {
  await listeners.close();
  await server.stop();
});

function send(datagrams: string[]): Promise<void> {
  const socket = dgram.createSocket('udp4');
  const port = listeners.running[0]!.address.port;
  return new Promise((resolve, reject) => {
    let left = datagrams.length;
    for (const d of datagrams)
      socket.send(d, port, '127.0.0.1', (err) => {
        if (err) reject(err);
        if (--left === 0) {
          socket.close();
          resolve();
        }
      });
  });
}

/** The non-empty 1m buckets of a key over this minute and the next (a flush may cross it). */
async function flushed(key: string, minute: number): Promise<Array<Record<string, any>>> {
  const q = new URLSearchParams({
    key,
    from: new Date(minute).toISOString(),
    to: new Date(minute + 60_000).toISOString(),
    granularity: '1m',
  });
  const deadline = Date.now() + 5000;
  for (;;) {
    const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
      token: agent.sourceToken,
      sourceId: agent.sourceId,
    });
    assert.equal(res.status, 200, res.text);
    const got = (res.body.data.values as Array<Record<string, any>>).filter((v) => Object.keys(v).length > 0);
    if (got.length > 0 || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test("hot-shots' buffered datagram (prefix, global tags, rates, deltas, sets) reads back exactly", async () => {
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const tags = '|#env:lab,host:web1'; // globalTags { env: 'lab', host: 'web1' }
  const lines = [
    `shop.orders:1|c${tags}`, // increment('orders')
    `shop.orders:2|c|@0.5${tags}`, // increment('orders', 2, 0.5)
    `shop.orders:-1|c${tags}`, // decrement('orders')
    `shop.latency:120|ms${tags}`, // timing('latency', 120)
    `shop.latency:80.5|ms${tags}`,
    `shop.size:512|h${tags}`, // histogram('size', 512)
    `shop.stock:7|g${tags}`, // gauge('stock', 7)
    `shop.stock:-2|g${tags}`, // gaugeDelta('stock', -2)
    `shop.stock:+0.5|g${tags}`, // gaugeDelta('stock', 0.5)
    `shop.users:alice|s${tags}`, // set('users', 'alice')
    `shop.users:bob|s${tags}`,
    `shop.users:alice|s${tags}`,
  ];
  await send([lines.map((l) => `${l}\n`).join('')]); // maxBufferSize: one datagram, `\n` after each
  const got = await flushed('shop,env=lab,host=web1', minute);
  assert.equal(got.length, 1, JSON.stringify(got));
  assert.deepEqual(got[0], {
    orders: { count: 4 }, // 1 + 2 / 0.5 - 1
    latency: { sum: 200.5, count: 2 },
    size: { sum: 512, count: 1 },
    stock: { sum: 5.5, count: 1, last: 5.5 },
    users: { unique: 2 },
  });
});

test('statsd-client / node-statsd: one metric per datagram, no tags, no newline', async () => {
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  await send(['app.api.requests:1|c', 'app.api.requests:1|c', 'app.api.time:35|ms', 'app.api.queue:3|g']);
  const got = await flushed('app::api', minute);
  assert.equal(got.length, 1, JSON.stringify(got));
  assert.deepEqual(got[0], {
    requests: { count: 2 },
    time: { sum: 35, count: 1 },
    queue: { sum: 3, count: 1, last: 3 },
  });
});
