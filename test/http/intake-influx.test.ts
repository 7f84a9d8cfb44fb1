// The InfluxDB-compatible endpoints through the real server: the requests Proxmox VE, the Python
// influxdb client (Home Assistant) and Telegraf build, read back through GET /api/v1/metrics.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import {
  createProjectWithToken,
  request,
  startTestServer,
  type ProjectAgent,
  type TestServer,
} from '../helpers/server';

let server: TestServer;
let agent: ProjectAgent;

const T0 = Date.UTC(2026, 0, 24, 10, 0, 0); // 2026-01-24T10:00:00Z
const ns = (ms: number) => `${BigInt(ms) * 1_000_000n}`;

before(async () => {
  server = await startTestServer({ SERVICE_MAX_BODY_BYTES: '262144' });
  agent = await createProjectWithToken(server);
});
after(() => server.stop());

interface Sent {
  status: number;
  text: string;
  json: any;
  headers: Headers;
}

async function send(
  method: string,
  path: string,
  body?: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<Sent> {
  const res = await fetch(`${server.url}${path}`, { method, headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, headers: res.headers };
}

const tokenHeader = (token = agent.sourceToken) => ({ authorization: `Token ${token}` });
const basic = (user: string, password: string) => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});

/** The buckets of one key over the hour from T0, 1m granularity. */
async function series(key: string, who: ProjectAgent = agent): Promise<Array<{ at: string; values: any }>> {
  const q = new URLSearchParams({
    key,
    from: '2026-01-24T10:00:00Z',
    to: '2026-01-24T10:59:00Z',
    granularity: '1m',
  });
  const res = await request(server, 'GET', `/api/v1/metrics?${q}`, undefined, {
    token: who.sourceToken,
    sourceId: who.sourceId,
  });
  assert.equal(res.status, 200, res.text);
  const { at, values } = res.body.data as { at: string[]; values: unknown[] };
  return at
    .map((a, i) => ({ at: a, values: values[i] }))
    .filter((b) => Object.keys(b.values as object).length > 0);
}

test('Proxmox VE: its v2 write (Token, org and bucket, ns timestamps, no precision) is stored as gauges per series key', async () => {
  const body =
    `cpustat,object=nodes,host=pve1 avg1=0.5,avg5=0.25,cpus=8,user=0.12,iowait=0.01 ${ns(T0 + 5_000)}\n` +
    `cpustat,object=nodes,host=pve1 avg1=1.5,avg5=0.75,cpus=8,user=0.2,iowait=0.03 ${ns(T0 + 15_000)}\n` +
    `system,object=qemu,vmid=100,nodename=pve1,host=web uptime=3600,cpu=0.25,mem=1073741824,name="web",template=0 ${ns(T0 + 5_000)}\n` +
    `nics,object=nodes,host=pve1,instance=eno1 receive=1000,transmit=2000 ${ns(T0 + 65_000)}\n`;
  const res = await send('POST', '/api/v2/write?org=proxmox&bucket=proxmox', body, tokenHeader());
  assert.equal(res.status, 204, res.text);
  assert.equal(res.text, '');

  const cpu = await series('cpustat,host=pve1,object=nodes');
  assert.deepEqual(cpu, [
    {
      at: '2026-01-24T10:00:00Z',
      values: {
        avg1: { sum: 2, count: 2, last: 1.5 },
        avg5: { sum: 1, count: 2, last: 0.75 },
        cpus: { sum: 16, count: 2, last: 8 },
        user: { sum: 0.32, count: 2, last: 0.2 },
        iowait: { sum: 0.04, count: 2, last: 0.03 },
      },
    },
  ]);
  const vm = await series('system,host=web,nodename=pve1,object=qemu,vmid=100');
  assert.deepEqual(vm[0]!.values, {
    uptime: { sum: 3600, count: 1, last: 3600 },
    cpu: { sum: 0.25, count: 1, last: 0.25 },
    mem: { sum: 1073741824, count: 1, last: 1073741824 },
    template: { sum: 0, count: 1, last: 0 },
  });
  const nic = await series('nics,host=pve1,instance=eno1,object=nodes');
  assert.deepEqual(nic, [
    {
      at: '2026-01-24T10:01:00Z',
      values: { receive: { sum: 1000, count: 1, last: 1000 }, transmit: { sum: 2000, count: 1, last: 2000 } },
    },
  ]);
});

test('Proxmox VE: its connection test GET /health with the Token header', async () => {
  const res = await send('GET', '/health', undefined, tokenHeader());
  assert.equal(res.status, 200);
  assert.equal(res.json.status, 'pass');
  assert.equal(res.json.message, 'ready for queries and writes');
  assert.equal(typeof res.json.name, 'string');
  assert.equal(typeof res.json.version, 'string');
  assert.equal((await send('HEAD', '/health')).status, 200);
});

test('Home Assistant through the Python influxdb client: Basic auth on /write?db=home_assistant, the empty test write, then points', async () => {
  const headers = {
    ...basic('homeassistant', agent.sourceToken),
    'content-type': 'application/octet-stream',
    accept: 'text/plain',
  };
  const empty = await send('POST', '/write?db=home_assistant', '', headers);
  assert.equal(empty.status, 204, empty.text);
  const lines =
    [
      `°C,domain=sensor,entity_id=living_room_temperature value=21.5,friendly_name_str="Living room temperature" ${ns(T0 + 1_000)}`,
      `°C,domain=sensor,entity_id=living_room_temperature value=22.5,friendly_name_str="Living room temperature" ${ns(T0 + 31_000)}`,
      `switch.kitchen,domain=switch,entity_id=kitchen state="on",value=1 ${ns(T0 + 2_000)}`,
    ].join('\n') + '\n';
  const res = await send('POST', '/write?db=home_assistant', lines, headers);
  assert.equal(res.status, 204, res.text);
  assert.deepEqual(await series('°C,domain=sensor,entity_id=living_room_temperature'), [
    { at: '2026-01-24T10:00:00Z', values: { value: { sum: 44, count: 2, last: 22.5 } } },
  ]);
  assert.deepEqual((await series('switch.kitchen,domain=switch,entity_id=kitchen'))[0]!.values, {
    value: { sum: 1, count: 1, last: 1 },
  });
});

test('Telegraf v1: CREATE DATABASE on POST /query, then a gzip write with Basic auth', async () => {
  const created = await send(
    'POST',
    '/query',
    new URLSearchParams({ q: 'CREATE DATABASE "telegraf"' }).toString(),
    {
      ...basic('telegraf', agent.sourceToken),
      'content-type': 'application/x-www-form-urlencoded',
    },
  );
  assert.equal(created.status, 200, created.text);
  assert.deepEqual(created.json, { results: [{ statement_id: 0 }] });
  const body = gzipSync(
    `cpu,cpu=cpu-total,host=nas usage_idle=90,usage_user=10 ${T0 / 1000 + 120}\n` +
      `mem,host=nas used=100i,total=400i,available_percent=75 ${T0 / 1000 + 120}\n` +
      `disk,device=sda1,fstype=ext4,host=nas,mode=rw,path=/ used_percent=12.5,free=1000u ${T0 / 1000 + 120}\n` +
      `net,host=nas,interface=eth0 bytes_recv=123456789i,bytes_sent=1234i,up=true ${T0 / 1000 + 120}\n`,
  );
  const res = await send('POST', '/write?db=telegraf&rp=autogen&precision=s', body, {
    ...basic('telegraf', agent.sourceToken),
    'content-encoding': 'gzip',
    'content-type': 'text/plain; charset=utf-8',
  });
  assert.equal(res.status, 204, res.text);
  assert.deepEqual(await series('cpu,cpu=cpu-total,host=nas'), [
    {
      at: '2026-01-24T10:02:00Z',
      values: { usage_idle: { sum: 90, count: 1, last: 90 }, usage_user: { sum: 10, count: 1, last: 10 } },
    },
  ]);
  assert.deepEqual((await series('mem,host=nas'))[0]!.values.used, { sum: 100, count: 1, last: 100 });
  assert.deepEqual((await series('disk,device=sda1,fstype=ext4,host=nas,mode=rw,path=/'))[0]!.values.free, {
    sum: 1000,
    count: 1,
    last: 1000,
  });
  assert.deepEqual((await series('net,host=nas,interface=eth0'))[0]!.values.up, {
    sum: 1,
    count: 1,
    last: 1,
  });
});

test('credentials: Token, Bearer, Basic password and p= work; none, unknown, read-only and user tokens do not', async () => {
  const line = (n: number) => `auth,via=x v=${n} ${ns(T0 + 240_000)}`;
  assert.equal(
    (await send('POST', '/api/v2/write', line(1), { authorization: `Bearer ${agent.sourceToken}` })).status,
    204,
  );
  assert.equal((await send('POST', `/write?db=x&u=any&p=${agent.sourceToken}`, line(2))).status, 204);
  assert.equal(
    (await send('POST', '/write?db=x', line(4), { authorization: `Token user:${agent.sourceToken}` })).status,
    204,
  );
  assert.deepEqual((await series('auth,via=x'))[0]!.values, { v: { sum: 7, count: 3, last: 4 } });

  const none = await send('POST', '/api/v2/write', line(9));
  assert.equal(none.status, 401);
  assert.equal(none.json.code, 'unauthorized');
  assert.match(none.json.message, /source token/);
  const unknown = await send('POST', '/write?db=x', line(9), basic('u', 'svc_sat_' + 'A'.repeat(43)));
  assert.equal(unknown.status, 401);
  assert.equal(unknown.json.error, unknown.json.message); // 1.x clients read `error`

  const readOnly = await request(
    server,
    'POST',
    '/api/v1/bootstrap/source-tokens',
    { source_type: 'project', source_id: agent.sourceId, write: false },
    { token: agent.userToken },
  );
  const forbidden = await send('POST', '/api/v2/write', line(9), tokenHeader(readOnly.body.data.token.value));
  assert.equal(forbidden.status, 403);
  assert.deepEqual(forbidden.json, {
    code: 'forbidden',
    message: 'Forbidden: the source token has no write permission',
  });
  const user = await send('POST', '/api/v2/write', line(9), tokenHeader(agent.userToken));
  assert.equal(user.status, 403);
  assert.deepEqual((await series('auth,via=x'))[0]!.values.v, { sum: 7, count: 3, last: 4 });
  // an empty body still needs credentials (Home Assistant's connection test must fail on a bad token)
  assert.equal((await send('POST', '/write?db=home_assistant', '', basic('u', 'wrong'))).status, 401);
});

test('a bad line refuses the whole body, naming the line, and stores nothing of it', async () => {
  const body = `bad,n=1 v=1 ${ns(T0 + 300_000)}\nbad,n=2 v=2 ${ns(T0 + 300_000)}\nbad,n=3 v=oops ${ns(T0 + 300_000)}\n`;
  const res = await send('POST', '/api/v2/write?bucket=b&org=o', body, tokenHeader());
  assert.equal(res.status, 400);
  assert.deepEqual(res.json, { code: 'invalid', message: 'line 3: invalid value of field "v": oops' });
  assert.deepEqual(await series('bad,n=1'), []);

  const late = await send(
    'POST',
    '/api/v2/write?precision=s',
    `late v=1 ${T0 / 1000}\nlate v=1 ${ns(T0)}\n`,
    tokenHeader(),
  );
  assert.equal(late.status, 400);
  assert.match(late.json.message, /^line 2: timestamp is outside the accepted range/);
  assert.deepEqual(await series('late'), []);

  const precision = await send('POST', '/api/v2/write?precision=h', 'p v=1', tokenHeader());
  assert.equal(precision.status, 400);
  assert.equal(precision.json.message, 'precision must be one of ns, us, ms, s');
  assert.equal(
    (await send('POST', '/write?precision=h', `p v=1 ${T0 / 3_600_000}`, tokenHeader())).status,
    204,
  );
  assert.equal(
    (await send('POST', '/api/v2/write?precision=s&precision=ms', 'p v=1', tokenHeader())).status,
    400,
  );
});

test('bodies: gzip inflated under the body limit (a bomb is 413), bad gzip 400, other encodings 415', async () => {
  const bomb = gzipSync(Buffer.alloc(10 * 1024 * 1024, 0x20));
  const big = await send('POST', '/api/v2/write', bomb, { ...tokenHeader(), 'content-encoding': 'gzip' });
  assert.equal(big.status, 413);
  assert.equal(big.json.code, 'request too large');
  assert.match(big.json.message, /262144 bytes/);
  const plainBig = await send('POST', '/api/v2/write', `m v=1\n${' '.repeat(300_000)}`, tokenHeader());
  assert.equal(plainBig.status, 413);
  const notGzip = await send('POST', '/api/v2/write', 'm v=1', {
    ...tokenHeader(),
    'content-encoding': 'gzip',
  });
  assert.equal(notGzip.status, 400);
  assert.equal(notGzip.json.code, 'invalid');
  const br = await send('POST', '/api/v2/write', 'm v=1', { ...tokenHeader(), 'content-encoding': 'br' });
  assert.equal(br.status, 415);
  assert.equal(br.json.code, 'unsupported media type');
});

test('a body of more points than one batch holds (6,000 lines, 12,000 points) is stored whole', async () => {
  const lines = Array.from(
    { length: 6000 },
    (_, i) => `many,h=h${i % 3} v=${i} ${ns(T0 + 360_000 + i)}`,
  ).join('\n');
  const res = await send('POST', '/api/v2/write', lines, tokenHeader());
  assert.equal(res.status, 204, res.text);
  const h0 = await series('many,h=h0');
  assert.equal(h0.length, 1);
  // 0 + 3 + ... + 5997: 2,000 samples; the last is 5997
  assert.deepEqual(h0[0]!.values, { v: { sum: 5997000, count: 2000, last: 5997 } });
});

test('probes: /ping 204 with X-Influxdb-Version, /query answers CREATE DATABASE and SHOW DATABASES only', async () => {
  for (const method of ['GET', 'HEAD']) {
    const ping = await send(method, '/ping');
    assert.equal(ping.status, 204);
    assert.ok(ping.headers.get('x-influxdb-version'));
  }
  const show = await send('GET', `/query?q=${encodeURIComponent('SHOW DATABASES')}`);
  assert.deepEqual(show.json, { results: [{ statement_id: 0 }] });
  const two = await send('POST', `/query?q=${encodeURIComponent('CREATE DATABASE home; show databases')}`);
  assert.deepEqual(two.json, { results: [{ statement_id: 0 }, { statement_id: 1 }] });
  const select = await send('GET', `/query?q=${encodeURIComponent('SELECT * FROM cpu')}`);
  assert.equal(select.status, 400);
  assert.match(select.json.error, /Trifle API: GET \/api\/v1\/metrics/);
  assert.equal((await send('GET', '/query', undefined, basic('u', 'wrong'))).status, 401);
  const wrong = await send('GET', '/api/v2/write');
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get('allow'), 'POST');
  // the service's own API is untouched
  assert.equal((await request(server, 'GET', '/api/v1/health')).body.status, 'ok');
});

test('GET /metrics counts what the intake read and skipped', async () => {
  const count = async (series: string) => {
    const text = (await send('GET', '/metrics')).text;
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    assert.ok(line, `${series} in ${text.slice(-800)}`);
    return Number(line.split(' ')[1]);
  };
  const [samples, strings, nonFinite, points] = await Promise.all([
    count('service_intake_samples_total{format="influx"}'),
    count('service_intake_skipped_total{reason="string"}'),
    count('service_intake_skipped_total{reason="non_finite"}'),
    count('service_intake_points_total'),
  ]);
  const res = await send(
    'POST',
    '/api/v2/write',
    `counted,h=1 a=1,s="x",t="y",n=NaN ${ns(T0)}\ncounted,h=2 s="only a string" ${ns(T0)}`,
    tokenHeader(),
  );
  assert.equal(res.status, 204, res.text);
  assert.equal(await count('service_intake_samples_total{format="influx"}'), samples + 2);
  assert.equal(await count('service_intake_skipped_total{reason="string"}'), strings + 3);
  assert.equal(await count('service_intake_skipped_total{reason="non_finite"}'), nonFinite + 1);
  assert.equal(await count('service_intake_points_total'), points + 2);
});
