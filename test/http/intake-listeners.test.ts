// The TCP and UDP listeners against the real server's write path, read back through the API.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { parseListeners, startListeners, type Listeners } from '../../src/intake/listeners';
import { intakeCountersOf } from '../../src/intake/stats';

let server: TestServer;
let agent: ProjectAgent;
let listeners: Listeners;

const T = 1_769_248_800; // 2026-01-24T10:00:00Z

function config(protocol: string, transport: string, extra: Record<string, unknown> = {}) {
  return { protocol, transport, listen: '127.0.0.1:0', source: agent.sourceId, ...extra };
}

before(async () => {
  server = await startTestServer();
  agent = await createProjectWithToken(server);
  const parsed = parseListeners([
    config('graphite', 'udp'),
    config('graphite', 'tcp'),
    config('influx', 'udp', { precision: 's' }),
    config('statsd', 'udp', { flush_interval: '200ms' }),
  ]);
  assert.ok(Array.isArray(parsed), String(parsed));
  listeners = await startListeners(server.deps, parsed);
});
after(async () => {
  await listeners.close();
  await server.stop();
});

const portOf = (protocol: string, transport: string) =>
  listeners.running.find((l) => l.config.protocol === protocol && l.config.transport === transport)!.address
    .port;

function sendUdp(port: number, text: string): Promise<void> {
  const socket = dgram.createSocket('udp4');
  return new Promise((resolve, reject) =>
    socket.send(text, port, '127.0.0.1', (err) => (socket.close(), err ? reject(err) : resolve())),
  );
}

/** Writes over TCP and ends; resolves once the connection is closed. */
function sendTcp(port: number, text: string): Promise<void> {
  return new Promise((resolve) => {
    const conn = net.connect(port, '127.0.0.1', () => conn.end(text));
    conn.on('error', () => resolve());
    conn.on('close', () => resolve());
  });
}

async function bucket(key: string, at = '2026-01-24T10:00:00Z'): Promise<unknown> {
  const q = new URLSearchParams({ key, from: at, to: at, granularity: '1m' });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: agent.sourceToken,
    sourceId: agent.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data.values[0];
}

async function eventually(key: string, expected: unknown, at?: string): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const got = await bucket(key, at);
    try {
      assert.deepEqual(got, expected);
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

test('Graphite over UDP: a Proxmox VE datagram', async () => {
  await sendUdp(
    portOf('graphite', 'udp'),
    `proxmox.nodes.pve1.cpustat.user 0.5 ${T}\nproxmox.nodes.pve1.cpustat.system 0.25 ${T + 10}\n`,
  );
  await eventually('proxmox::nodes::pve1::cpustat', {
    user: { sum: 0.5, count: 1, last: 0.5 },
    system: { sum: 0.25, count: 1, last: 0.25 },
  });
});

test('Graphite over TCP: lines across packets; garbage closes the connection and is counted', async () => {
  await sendTcp(portOf('graphite', 'tcp'), `truenas.cpu.user 1 ${T}\ntruenas.cpu.user 3 ${T + 20}\n`);
  await eventually('truenas::cpu', { user: { sum: 4, count: 2, last: 3 } });
  const before = intakeCountersOf(server.deps).dropped;
  const garbage = await new Promise<boolean>((resolve) => {
    const conn = net.connect(portOf('graphite', 'tcp'), '127.0.0.1', () =>
      conn.write('this is not graphite at all\n'),
    );
    conn.on('error', () => resolve(true));
    conn.on('close', () => resolve(true));
    setTimeout(() => resolve(false), 3000);
  });
  assert.equal(garbage, true, 'the server closed the connection');
  assert.equal(intakeCountersOf(server.deps).dropped, before + 1);
});

test("line protocol over UDP with the listener's precision; a bad datagram is dropped, the next one works", async () => {
  const port = portOf('influx', 'udp');
  await sendUdp(port, `cpu,host=pve1 usage=10 ${T}\ncpu,host=pve1 usage=oops ${T}`);
  await sendUdp(port, `cpu,host=pve2 usage=20 ${T}`);
  await eventually('cpu,host=pve2', { usage: { sum: 20, count: 1, last: 20 } });
  assert.deepEqual(await bucket('cpu,host=pve1'), {});
});

test('StatsD over UDP: counters, timers and gauges written at the flush', async () => {
  const port = portOf('statsd', 'udp');
  await sendUdp(
    port,
    'shop.orders:1|c\nshop.orders:1|c|@0.5\nshop.latency:120|ms\nshop.latency:80|ms\nshop.stock:7|g',
  );
  // the flush lands in this minute or, rarely, the next: read both
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const q = new URLSearchParams({
    key: 'shop',
    from: new Date(minute).toISOString(),
    to: new Date(minute + 60_000).toISOString(),
    granularity: '1m',
  });
  const deadline = Date.now() + 5000;
  let got: unknown[] = [];
  do {
    await new Promise((r) => setTimeout(r, 100));
    const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
      token: agent.sourceToken,
      sourceId: agent.sourceId,
    });
    got = (res.body.data.values as object[]).filter((v) => Object.keys(v).length > 0);
  } while (got.length === 0 && Date.now() < deadline);
  assert.equal(got.length, 1);
  assert.deepEqual(got[0], {
    orders: { count: 3 },
    latency: { sum: 200, count: 2 },
    stock: { sum: 7, count: 1, last: 7 },
  });
});

test('listener configuration: checked entry by entry', () => {
  const source = '6f1c1b2a-8d3e-4f5a-9b6c-7d8e9f0a1b2c';
  assert.deepEqual(
    parseListeners([{ protocol: 'graphite', transport: 'tcp', listen: '[::1]:2003', source }]),
    [
      {
        protocol: 'graphite',
        transport: 'tcp',
        listen: '[::1]:2003',
        source,
        precision: 'ns',
        flushIntervalMs: 10_000,
        keyPrefix: '',
      },
    ],
  );
  assert.equal(
    parseListeners([{ protocol: 'collectd', transport: 'udp', listen: '127.0.0.1:1', source }]),
    'listener 1: protocol must be graphite, influx or statsd',
  );
  assert.equal(
    parseListeners([{ protocol: 'statsd', transport: 'udp', listen: 'nope', source }]),
    'listener 1: listen must be host:port (e.g. 127.0.0.1:2003)',
  );
  assert.equal(
    parseListeners([{ protocol: 'statsd', transport: 'udp', listen: '127.0.0.1:8125', source: 'x' }]),
    'listener 1: source must be the id of a source',
  );
  assert.equal(
    parseListeners([
      { protocol: 'statsd', transport: 'udp', listen: '127.0.0.1:8125', source, flush_interval: '5' },
    ]),
    'listener 1: flush_interval must be like "10s" (at least 100ms)',
  );
  assert.equal(
    parseListeners([{ protocol: 'statsd', transport: 'udp', listen: '127.0.0.1:8125', source, port: 1 }]),
    'listener 1: unknown key port',
  );
  assert.equal(parseListeners('{'), 'expected a JSON array of listener tables');
  assert.deepEqual(parseListeners('[]'), []);
});

test('listeners from the configuration: started with the server, stopped with it; a port in use stops the start naming intake.listeners', async () => {
  const free = await new Promise<number>((resolve) => {
    const probe = dgram.createSocket('udp4');
    probe.bind(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  const unknownSource = '6f1c1b2a-8d3e-4f5a-9b6c-7d8e9f0a1b2c';
  const env = {
    SERVICE_INTAKE_LISTENERS: JSON.stringify([
      { protocol: 'graphite', transport: 'udp', listen: `127.0.0.1:${free}`, source: unknownSource },
    ]),
  };
  const other = await startTestServer(env);
  try {
    const before = intakeCountersOf(other.deps).dropped;
    await sendUdp(free, `a.b 1 ${T}`);
    const deadline = Date.now() + 5000;
    while (intakeCountersOf(other.deps).dropped === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(
      intakeCountersOf(other.deps).dropped,
      before + 2,
      'the points (track and assert) of a sample for a source that does not exist are dropped and counted',
    );
    await assert.rejects(
      startTestServer(env),
      /intake\.listeners: cannot listen on 127\.0\.0\.1:\d+ \(graphite over udp\): EADDRINUSE/,
    );
  } finally {
    await other.stop();
  }
  // stopped with its server: the port is free again
  const again = await startTestServer(env);
  await again.stop();
  await assert.rejects(
    startTestServer({ SERVICE_INTAKE_LISTENERS: '[{"protocol":"x"}]' }),
    /invalid value for intake\.listeners \(env SERVICE_INTAKE_LISTENERS\): listener 1: protocol must be graphite, influx or statsd/,
  );
});
