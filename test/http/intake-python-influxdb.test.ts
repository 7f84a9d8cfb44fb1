// The Python `influxdb` client (Debian's python3-influxdb, the library Home Assistant's InfluxDB
// integration uses with `api_version: 1`) doing what Home Assistant does against the real server:
// the empty test write, SHOW DATABASES, then write_points with its point shape; read back through
// GET /api/v1/metrics. Skips with a message when the module is not importable.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';

const PYTHON = process.env.PYTHON_INFLUXDB ?? '/usr/bin/python3';
const probe = spawnSync(PYTHON, ['-c', 'import influxdb'], { encoding: 'utf8' });
const skip =
  probe.status === 0
    ? false
    : `${PYTHON} cannot import influxdb (apt-get install python3-influxdb; .ci/run does)`;

let server: TestServer;
let agent: ProjectAgent;

before(async () => {
  if (skip) return;
  server = await startTestServer();
  agent = await createProjectWithToken(server);
});
after(() => server?.stop());

const SCRIPT = `
import sys, datetime
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError
host, port, password = sys.argv[1], int(sys.argv[2]), sys.argv[3]
client = InfluxDBClient(host, port, 'homeassistant', password, database='home_assistant', timeout=10)
try:
    client.write_points([])                      # Home Assistant's connection test
    client.query('SHOW DATABASES;')
    at = datetime.datetime(2026, 1, 24, 10, 0, 5, tzinfo=datetime.timezone.utc)
    client.write_points([
        {'measurement': '°C', 'tags': {'domain': 'sensor', 'entity_id': 'living_room_temperature'}, 'time': at,
         'fields': {'value': 21.5, 'friendly_name_str': 'Living room temperature'}},
        {'measurement': 'switch.kitchen', 'tags': {'domain': 'switch', 'entity_id': 'kitchen'}, 'time': at,
         'fields': {'state': 'on', 'value': 1}},
    ])
    print('ok')
except InfluxDBClientError as e:
    print('error', e.code)
`;

/** Runs the script without blocking the event loop (the server answers from this process). */
function run(password: string): Promise<{ out: string; err: string }> {
  const url = new URL(server.url);
  return new Promise((resolve) => {
    execFile(
      PYTHON,
      ['-c', SCRIPT, url.hostname, url.port, password],
      { encoding: 'utf8', timeout: 30_000 },
      (_error, stdout, stderr) => resolve({ out: stdout.trim(), err: stderr }),
    );
  });
}

async function bucket(key: string): Promise<unknown> {
  const q = new URLSearchParams({
    key,
    from: '2026-01-24T10:00:00Z',
    to: '2026-01-24T10:00:00Z',
    granularity: '1m',
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: agent.sourceToken,
    sourceId: agent.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data.values[0];
}

test(
  'python influxdb client as Home Assistant uses it: test write, SHOW DATABASES, write_points',
  { skip },
  async () => {
    const { out, err } = await run(agent.sourceToken);
    assert.equal(out, 'ok', err);
    assert.deepEqual(await bucket('°C,domain=sensor,entity_id=living_room_temperature'), {
      value: { sum: 21.5, count: 1, last: 21.5 },
    });
    assert.deepEqual(await bucket('switch.kitchen,domain=switch,entity_id=kitchen'), {
      value: { sum: 1, count: 1, last: 1 },
    });
  },
);

test('python influxdb client with a wrong token fails its connection test with 401', { skip }, async () => {
  const { out, err } = await run('tsk_wrong');
  assert.equal(out, 'error 401', err);
});
