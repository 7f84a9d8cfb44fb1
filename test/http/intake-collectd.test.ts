// collectd from Debian (collectd-core 5.12) writing to the intake's listeners as a NAS or a
// homelab box does: write_graphite over TCP and over UDP, and write_influxdb_udp (line protocol,
// millisecond timestamps), each to a listener bound to its own source. collectd runs in the
// foreground with a one-second interval and its `table` plugin reading a file of known values; the
// values are read back exactly through GET /api/v1/metrics. Skips when collectd is not installed
// (.ci/run installs collectd-core).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';
import { parseListeners, startListeners, type Listeners } from '../../src/intake/listeners';

const COLLECTD = process.env.COLLECTD_BIN ?? '/usr/sbin/collectd';
const PLUGINS = '/usr/lib/collectd';
const probe = spawnSync(COLLECTD, ['-h'], { encoding: 'utf8' });
const skip =
  probe.error === undefined
    ? false
    : `collectd not found at ${COLLECTD} (apt-get install collectd-core; .ci/run does)`;

let server: TestServer;
const agents: Record<'tcp' | 'udp' | 'influx', ProjectAgent> = {} as never;
let listeners: Listeners;

before(async () => {
  if (skip) return;
  server = await startTestServer();
  for (const name of ['tcp', 'udp', 'influx'] as const) agents[name] = await createProjectWithToken(server);
  const parsed = parseListeners([
    { protocol: 'graphite', transport: 'tcp', listen: '127.0.0.1:0', source: agents.tcp.sourceId },
    { protocol: 'graphite', transport: 'udp', listen: '127.0.0.1:0', source: agents.udp.sourceId },
    {
      protocol: 'influx',
      transport: 'udp',
      listen: '127.0.0.1:0',
      source: agents.influx.sourceId,
      precision: 'ms', // write_influxdb_udp sends milliseconds
    },
  ]);
  assert.ok(Array.isArray(parsed), String(parsed));
  listeners = await startListeners(server.deps, parsed);
});
after(async () => {
  if (skip) return;
  await listeners.close();
  await server.stop();
});

/** Every non-empty 1m bucket of a key over the last five minutes. */
async function buckets(who: ProjectAgent, key: string): Promise<Array<Record<string, any>>> {
  const now = Date.now();
  const q = new URLSearchParams({
    key,
    from: new Date(now - 5 * 60_000).toISOString(),
    to: new Date(now + 60_000).toISOString(),
    granularity: '1m',
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: who.sourceToken,
    sourceId: who.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return (res.body.data.values as Array<Record<string, any>>).filter((v) => Object.keys(v).length > 0);
}

/**
 * Samples of one field over the buckets: each bucket's sum is exactly value × count and last the value.
 * A bucket may lack the field: collectd stamps each value when it dispatches it, so two values read
 * together can fall on either side of a minute's edge.
 */
function checkGauge(found: Array<Record<string, any>>, field: string, value: number): number {
  let count = 0;
  for (const b of found) {
    if (b[field] === undefined) continue;
    assert.deepEqual(Object.keys(b[field]).sort(), ['count', 'last', 'sum']);
    assert.equal(b[field].last, value);
    assert.equal(b[field].sum, value * b[field].count);
    count += b[field].count;
  }
  return count;
}

test('collectd write_graphite (TCP and UDP) and write_influxdb_udp read back exactly', { skip }, async () => {
  const port = (protocol: string, transport: string) =>
    listeners.running.find((l) => l.config.protocol === protocol && l.config.transport === transport)!.address
      .port;
  const dir = mkdtempSync(join(tmpdir(), 'collectd-'));
  writeFileSync(join(dir, 'values'), 'room 21.5\nnas 40.25\n');
  writeFileSync(
    join(dir, 'collectd.conf'),
    `Hostname "nas.lan"
FQDNLookup false
Interval 1
BaseDir "${dir}"
PIDFile "${dir}/collectd.pid"
PluginDir "${PLUGINS}"
TypesDB "/usr/share/collectd/types.db"
LoadPlugin logfile
<Plugin logfile>
  LogLevel warning
  File STDERR
</Plugin>
LoadPlugin table
LoadPlugin write_graphite
LoadPlugin write_influxdb_udp
<Plugin table>
  <Table "${dir}/values">
    Instance "lab"
    Separator " "
    <Result>
      Type gauge
      InstancePrefix "temp"
      InstancesFrom 0
      ValuesFrom 1
    </Result>
  </Table>
</Plugin>
<Plugin write_graphite>
  <Node "tcp">
    Host "127.0.0.1"
    Port "${port('graphite', 'tcp')}"
    Protocol "tcp"
  </Node>
  <Node "udp">
    Host "127.0.0.1"
    Port "${port('graphite', 'udp')}"
    Protocol "udp"
  </Node>
</Plugin>
<Plugin write_influxdb_udp>
  <Server "127.0.0.1" "${port('influx', 'udp')}">
  </Server>
</Plugin>
`,
  );
  const child = spawn(COLLECTD, ['-f', '-C', join(dir, 'collectd.conf')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  // graphite: host (dots escaped as _) . plugin-instance . type-type_instance → key and field
  const graphiteKey = 'nas_lan::table-lab';
  // write_influxdb_udp: measurement = plugin, tags host, instance, type, type_instance; field value
  const influxKey = (what: string) => `table,host=nas.lan,instance=lab,type=gauge,type_instance=temp-${what}`;
  try {
    const deadline = Date.now() + 30_000;
    const arrived = async () => {
      const tcp = await buckets(agents.tcp, graphiteKey);
      const udp = await buckets(agents.udp, graphiteKey);
      const influx = await buckets(agents.influx, influxKey('room'));
      const count = (found: Array<Record<string, any>>, field: string) =>
        found.reduce((n, b) => n + (b[field]?.count ?? 0), 0);
      return (
        count(tcp, 'gauge-temp-nas') >= 2 && count(udp, 'gauge-temp-nas') >= 2 && count(influx, 'value') >= 2
      );
    };
    while (!(await arrived())) {
      if (Date.now() > deadline || child.exitCode !== null)
        assert.fail(`collectd's values did not arrive within 30 s; its log: ${stderr.slice(0, 2000)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    for (const who of [agents.tcp, agents.udp]) {
      const found = await buckets(who, graphiteKey);
      const rooms = checkGauge(found, 'gauge-temp-room', 21.5);
      const nases = checkGauge(found, 'gauge-temp-nas', 40.25);
      assert.ok(rooms >= 2 && nases >= 2);
      for (const b of found)
        for (const field of Object.keys(b))
          assert.ok(['gauge-temp-nas', 'gauge-temp-room'].includes(field), field);
    }
    assert.ok(checkGauge(await buckets(agents.influx, influxKey('room')), 'value', 21.5) >= 2);
    assert.ok(checkGauge(await buckets(agents.influx, influxKey('nas')), 'value', 40.25) >= 1);
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
});
