// intake.max_keys_per_source through the real server (SPEC 12, docs/intake.md "Cardinality
// limit"): new keys past the limit refuse the whole request (400 naming the limit, nothing stored),
// existing keys keep being written, listeners drop and count; one tenant at its limit does not make
// another tenant's writes dearer (measured in the limit's own operations, not in time).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
  clusterMode,
} from '../helpers/server';
import { keyLimitOf } from '../../src/intake/key-limit';
import { intakeCountersOf } from '../../src/intake/stats';
import { parseListeners, startListeners, type Listeners } from '../../src/intake/listeners';
import { ProtoWriter } from '../../src/intake/protobuf';
import { snappyLiteralBlock } from '../../src/intake/snappy';

const LIMIT = 40;
let server: TestServer;
let a: ProjectAgent;
let b: ProjectAgent;
let c: ProjectAgent;
let listeners: Listeners;

const T = 1_769_248_800; // 2026-01-24T10:00:00Z, seconds
const AT = '2026-01-24T10:00:00Z';

before(async () => {
  server = await startTestServer({ SERVICE_INTAKE_MAX_KEYS_PER_SOURCE: String(LIMIT) });
  a = await createProjectWithToken(server);
  b = await createProjectWithToken(server);
  c = await createProjectWithToken(server);
  const parsed = parseListeners([
    { protocol: 'graphite', transport: 'udp', listen: '127.0.0.1:0', source: c.sourceId },
  ]);
  assert.ok(Array.isArray(parsed), String(parsed));
  listeners = await startListeners(server.deps, parsed);
});
after(async () => {
  await listeners.close();
  await server.stop();
});

async function write(who: ProjectAgent, body: string) {
  const res = await fetch(`${server.url}/api/v2/write?precision=s`, {
    method: 'POST',
    headers: { authorization: `Token ${who.sourceToken}` },
    body,
  });
  const text = await res.text();
  return { status: res.status, text, json: text === '' ? undefined : JSON.parse(text) };
}

/** `n` lines of one measurement with distinct `host` tags from `from`, each `v=value`. */
function lines(n: number, from = 0, value = 1, time = T): string {
  return Array.from({ length: n }, (_, i) => `m,host=h${from + i} v=${value} ${time}`).join('\n');
}

async function bucket(who: ProjectAgent, key: string): Promise<unknown> {
  const q = new URLSearchParams({ key, from: AT, to: AT, granularity: '1m' });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: who.sourceToken,
    sourceId: who.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data.values[0];
}

test('new keys past the limit refuse the whole write with 400 naming the limit; existing keys go on', async () => {
  assert.equal((await write(a, lines(LIMIT))).status, 204);
  assert.equal(keyLimitOf(server.deps).keysOf(a.sourceId), LIMIT);

  // one existing key and one new key: refused whole, the existing key's value not stored
  const refused = await write(a, `m,host=h0 v=100 ${T}\nm,host=new1 v=5 ${T}`);
  assert.equal(refused.status, 400, refused.text);
  assert.equal(refused.json.code, 'invalid');
  assert.match(refused.json.message, /intake\.max_keys_per_source/);
  assert.match(
    refused.json.message,
    /holds 40 keys and this write would add 1 new ones \(the first: "m,host=new1"\)/,
  );
  assert.deepEqual(await bucket(a, 'm,host=h0'), { v: { sum: 1, count: 1, last: 1 } });
  assert.deepEqual(await bucket(a, 'm,host=new1'), {});

  // only existing keys: written
  assert.equal((await write(a, lines(LIMIT, 0, 3))).status, 204);
  assert.deepEqual(await bucket(a, 'm,host=h7'), { v: { sum: 4, count: 2, last: 3 } });

  // the 1.x path answers the 1.x body
  const v1 = await fetch(`${server.url}/write?db=x&precision=s&p=${a.sourceToken}`, {
    method: 'POST',
    body: `m,host=new2 v=1 ${T}`,
  });
  assert.equal(v1.status, 400);
  const v1Body = (await v1.json()) as { error: string };
  assert.match(v1Body.error, /intake\.max_keys_per_source/);
  assert.ok(intakeCountersOf(server.deps).overKeyLimit >= 3);
});

test('OTLP and remote write refuse new keys past the limit with their own bodies', async () => {
  const otlp = await fetch(`${server.url}/v1/metrics`, {
    method: 'POST',
    headers: { authorization: `Bearer ${a.sourceToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      resourceMetrics: [
        {
          scopeMetrics: [
            {
              metrics: [
                {
                  name: 'otlp_new',
                  gauge: { dataPoints: [{ asDouble: 1, timeUnixNano: `${T}000000000` }] },
                },
              ],
            },
          ],
        },
      ],
    }),
  });
  assert.equal(otlp.status, 400);
  const otlpBody = (await otlp.json()) as { code: number; message: string };
  assert.equal(otlpBody.code, 3);
  assert.match(otlpBody.message, /intake\.max_keys_per_source/);

  const series = new ProtoWriter()
    .message(1, new ProtoWriter().string(1, '__name__').string(2, 'prom_new'))
    .message(2, new ProtoWriter().double(1, 1).varint(2, T * 1000));
  const body = snappyLiteralBlock(new ProtoWriter().message(1, series).finish());
  const prom = await fetch(`${server.url}/api/v1/write`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${a.sourceToken}`,
      'content-encoding': 'snappy',
      'content-type': 'application/x-protobuf',
    },
    body,
  });
  assert.equal(prom.status, 400);
  assert.match(await prom.text(), /intake\.max_keys_per_source/);
});

test('a listener writes the points of known keys and drops and counts those of new keys past the limit', async () => {
  const port = listeners.running[0]!.address.port;
  const counters = intakeCountersOf(server.deps);
  const send = (text: string) =>
    new Promise<void>((resolve, reject) => {
      const socket = dgram.createSocket('udp4');
      socket.send(text, port, '127.0.0.1', (err) => (socket.close(), err ? reject(err) : resolve()));
    });
  const graphite = (from: number, n: number, value: number) =>
    Array.from({ length: n }, (_, i) => `lab.g${from + i}.v ${value} ${T}`).join('\n') + '\n';
  await send(graphite(0, LIMIT - 2, 1));
  await eventually(() => keyLimitOf(server.deps).keysOf(c.sourceId) === LIMIT - 2);
  const dropped = counters.overKeyLimit;
  // two known keys, then four new ones of which two fit
  await send(`lab.g0.v 2 ${T}\nlab.g1.v 2 ${T}\n` + graphite(100, 4, 7));
  await eventually(() => counters.overKeyLimit === dropped + 4); // two new keys, two points each
  await eventually(async () => JSON.stringify(await bucket(c, 'lab::g101')) !== '{}');
  assert.deepEqual(await bucket(c, 'lab::g0'), { v: { sum: 3, count: 2, last: 2 } });
  assert.deepEqual(await bucket(c, 'lab::g100'), { v: { sum: 7, count: 1, last: 7 } });
  assert.deepEqual(await bucket(c, 'lab::g101'), { v: { sum: 7, count: 1, last: 7 } });
  assert.deepEqual(await bucket(c, 'lab::g102'), {});
  assert.deepEqual(await bucket(c, 'lab::g103'), {});
  assert.equal(keyLimitOf(server.deps).keysOf(c.sourceId), LIMIT);
});

test('keys written before the first intake write (here through the Trifle API) count towards the limit', async () => {
  const d = await createProjectWithToken(server);
  const points = Array.from({ length: LIMIT }, (_, i) => ({
    key: `api${i}`,
    at: AT,
    values: { n: 1 },
  }));
  const res = await request(
    server,
    'POST',
    '/api/v1/metrics/batch',
    { points },
    {
      token: d.sourceToken,
      sourceId: d.sourceId,
    },
  );
  assert.equal(res.status, 201, res.text);
  await server.deps.metrics.flush();
  // folded into the embedded store's series; in cluster mode committed to the cluster at the 201
  if (!clusterMode)
    await eventually(
      () =>
        (
          server.deps.db
            .prepare('SELECT COUNT(DISTINCT key) AS n FROM metric_series WHERE source_id = ? AND key LIKE ?')
            .get(d.sourceId, 'api%') as { n: number }
        ).n === LIMIT,
    );
  const refused = await write(d, `m,host=x v=1 ${T}`);
  assert.equal(refused.status, 400, refused.text);
  assert.equal(keyLimitOf(server.deps).keysOf(d.sourceId), LIMIT);
});

test('a tenant at its limit does not make another tenant’s writes dearer', async () => {
  const limit = keyLimitOf(server.deps);
  // b's write cost in the limit's operations before a hammers its limit
  const cost = async (who: ProjectAgent, body: string, status = 204) => {
    const before = limit.operationsOf(who.sourceId);
    assert.equal((await write(who, body)).status, status);
    return limit.operationsOf(who.sourceId) - before;
  };
  assert.equal(await cost(b, lines(10, 0, 1)), 10); // first write: b's (empty) store read, then 10 lookups
  const quiet = await cost(b, lines(10, 0, 2));
  assert.equal(quiet, 10);

  // a sits at its limit and sends new keys, refused, alongside b's writes
  const aBefore = limit.keysOf(a.sourceId);
  const bWrites = async () => [await cost(b, lines(10, 0, 3)), await cost(b, lines(10, 0, 4))];
  const [refusals, bCosts] = await Promise.all([
    Promise.all(Array.from({ length: 20 }, (_, i) => write(a, lines(30, 1000 + i * 30)))),
    bWrites(),
  ]);
  for (const r of refusals) assert.equal(r.status, 400);
  assert.deepEqual(bCosts, [quiet, quiet]); // b pays the same: one lookup per key of its own
  assert.equal(limit.keysOf(a.sourceId), aBefore); // refused keys are not counted
  // a's own writes to existing keys cost one lookup per key too, not per key it holds
  assert.equal(await cost(a, lines(5, 0, 9)), 5);
  assert.deepEqual(await bucket(b, 'm,host=h3'), { v: { sum: 10, count: 4, last: 4 } });
});

async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
