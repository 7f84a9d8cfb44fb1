import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LineProtocolError,
  parseLineProtocol,
  parsePrecision,
  type LineSample,
} from '../../src/intake/line-protocol';

const NS = 1_700_000_000_123_456_789n; // 2023-11-14T22:13:20.123456789Z
const MS = 1_700_000_000_123;

function one(text: string, precision?: Parameters<typeof parseLineProtocol>[1]): LineSample {
  const samples = parseLineProtocol(text, precision);
  assert.equal(samples.length, 1, `one sample from ${JSON.stringify(text)}`);
  return samples[0]!;
}

function fails(text: string, pattern: RegExp, line = 1): void {
  assert.throws(
    () => parseLineProtocol(text),
    (err: unknown) => err instanceof LineProtocolError && err.line === line && pattern.test(err.message),
    `expected an error on line ${line} matching ${pattern} for ${JSON.stringify(text)}`,
  );
}

test('a Telegraf cpu line: measurement, sorted tags as written, float fields, ns timestamp', () => {
  const s = one(
    `cpu,cpu=cpu-total,host=pve1 usage_guest=0,usage_idle=97.43589743589743,usage_iowait=0.1282051282051282,usage_system=1.153846153846154,usage_user=1.282051282051282 ${NS}\n`,
  );
  assert.equal(s.measurement, 'cpu');
  assert.deepEqual(s.tags, [
    ['cpu', 'cpu-total'],
    ['host', 'pve1'],
  ]);
  assert.deepEqual(
    s.fields.map(([k]) => k),
    ['usage_guest', 'usage_idle', 'usage_iowait', 'usage_system', 'usage_user'],
  );
  assert.deepEqual(s.fields[1]![1], { type: 'float', value: 97.43589743589743 });
  assert.equal(s.timeMs, MS);
  assert.equal(s.line, 1);
});

test('Telegraf mem, disk and net lines: integers with i, unsigned with u', () => {
  const body = [
    `mem,host=pve1 active=2838315008i,available=13035655168i,available_percent=77.77,total=16760012800i,used=3186348032i,used_percent=19.01 ${NS}`,
    `disk,device=nvme0n1p2,fstype=ext4,host=pve1,mode=rw,path=/ free=80435879936i,inodes_free=6100331i,total=100861726720i,used=15248281600i,used_percent=15.93 ${NS}`,
    `net,host=pve1,interface=vmbr0 bytes_recv=123456789012u,bytes_sent=98765432u,drop_in=0i,err_in=0i ${NS}`,
  ].join('\n');
  const [mem, disk, net] = parseLineProtocol(body);
  assert.deepEqual(mem!.fields[0], ['active', { type: 'integer', value: 2838315008 }]);
  assert.deepEqual(disk!.tags.at(-1), ['path', '/']);
  assert.deepEqual(net!.fields[0], ['bytes_recv', { type: 'unsigned', value: 123456789012 }]);
  assert.deepEqual([mem!.line, disk!.line, net!.line], [1, 2, 3]);
});

test('Proxmox VE lines: string fields with escaped quotes, the object/host/vmid tags', () => {
  const body =
    `system,object=qemu,vmid=100,nodename=pve1,host=web uptime=86400,cpu=0.0123,mem=1073741824,maxmem=2147483648,netin=123456,name="web",tags="prod;\\"db\\"",template=0 ${NS}\n` +
    `cpustat,object=nodes,host=pve1 user=0.12,system=0.03,iowait=0.001,cpus=8 ${NS}\n` +
    `nics,object=nodes,host=pve1,instance=eno1 receive=123456789,transmit=987654321 ${NS}\n`;
  const [sys, cpu, nic] = parseLineProtocol(body);
  assert.deepEqual(sys!.tags, [
    ['object', 'qemu'],
    ['vmid', '100'],
    ['nodename', 'pve1'],
    ['host', 'web'],
  ]);
  assert.deepEqual(Object.fromEntries(sys!.fields)['tags'], { type: 'string', value: 'prod;"db"' });
  assert.deepEqual(Object.fromEntries(sys!.fields)['name'], { type: 'string', value: 'web' });
  assert.equal(cpu!.measurement, 'cpustat');
  assert.deepEqual(nic!.tags.at(-1), ['instance', 'eno1']);
});

test('Home Assistant lines: a unit as the measurement, value plus _str attributes', () => {
  const s = one(
    `°C,domain=sensor,entity_id=living_room_temperature value=21.5,friendly_name_str="Living room temperature",device_class_str="temperature" ${NS}`,
  );
  assert.equal(s.measurement, '°C');
  assert.deepEqual(s.tags, [
    ['domain', 'sensor'],
    ['entity_id', 'living_room_temperature'],
  ]);
  assert.deepEqual(s.fields[0], ['value', { type: 'float', value: 21.5 }]);
  const sw = one(`switch.kitchen,domain=switch,entity_id=kitchen state="on",value=1 ${NS}`);
  assert.equal(sw.measurement, 'switch.kitchen');
});

test('escapes: comma and space in the measurement; comma, equals, space, backslash in tags and field keys', () => {
  const s = one(
    String.raw`my\ meas\,ure=x,tag\ key=a\,b\=c\ d,path=C:\\Temp\x field\=key=1,f\,2="q\"uote\\d" 1`,
  );
  assert.equal(s.measurement, 'my meas,ure=x');
  assert.deepEqual(s.tags, [
    ['tag key', 'a,b=c d'],
    ['path', String.raw`C:\Temp\x`],
  ]);
  assert.deepEqual(s.fields, [
    ['field=key', { type: 'float', value: 1 }],
    ['f,2', { type: 'string', value: String.raw`q"uote\d` }],
  ]);
});

test('booleans in every spelling InfluxDB takes', () => {
  const trues = ['t', 'T', 'true', 'True', 'TRUE'];
  const falses = ['f', 'F', 'false', 'False', 'FALSE'];
  for (const word of trues)
    assert.deepEqual(one(`m b=${word}`).fields[0]![1], { type: 'boolean', value: true });
  for (const word of falses)
    assert.deepEqual(one(`m b=${word}`).fields[0]![1], { type: 'boolean', value: false });
  fails('m b=tRUE', /invalid value of field "b": tRUE/);
  fails('m b=yes', /invalid value of field "b"/);
});

test('numbers: float forms, integer and unsigned ranges, non-finite values kept as such', () => {
  const values = (text: string) => one(`m ${text}`).fields.map(([, v]) => v);
  assert.deepEqual(
    values('a=1,b=-1.5,c=1e3,d=.5,e=1.,f=+2,g=-1.5E-3'),
    [1, -1.5, 1000, 0.5, 1, 2, -0.0015].map((value) => ({ type: 'float', value })),
  );
  assert.deepEqual(values('a=-9223372036854775808i,b=9223372036854775807i'), [
    { type: 'integer', value: -9223372036854775808 },
    { type: 'integer', value: 9223372036854775807 },
  ]);
  assert.deepEqual(values('a=18446744073709551615u,b=0u'), [
    { type: 'unsigned', value: 18446744073709551615 },
    { type: 'unsigned', value: 0 },
  ]);
  const [inf, nan, big] = values('a=Inf,b=NaN,c=1e400');
  assert.equal(inf!.value, Infinity);
  assert.ok(Number.isNaN(nan!.value));
  assert.equal(big!.value, Infinity);
  fails('m a=9223372036854775808i', /integer value of field "a" is out of range/);
  fails('m a=-1u', /invalid unsigned value of field "a"/);
  fails('m a=18446744073709551616u', /unsigned value of field "a" is out of range/);
  fails('m a=1.5i', /invalid integer value/);
  fails('m a=1x', /invalid value of field "a": 1x/);
  fails('m a=--1', /invalid value/);
});

test('timestamps: precision from ns to h, negative values floored, range of int64', () => {
  assert.equal(one(`m a=1 ${NS}`).timeMs, MS);
  assert.equal(one(`m a=1 ${NS}`, { precision: 'ns' }).timeMs, MS);
  assert.equal(one('m a=1 1700000000123456', { precision: 'us' }).timeMs, MS);
  assert.equal(one('m a=1 1700000000123', { precision: 'ms' }).timeMs, MS);
  assert.equal(one('m a=1 1700000000', { precision: 's' }).timeMs, 1_700_000_000_000);
  assert.equal(one('m a=1 2', { precision: 'm' }).timeMs, 120_000);
  assert.equal(one('m a=1 2', { precision: 'h' }).timeMs, 7_200_000);
  assert.equal(one('m a=1 -1').timeMs, -1); // one ns before the epoch is in the millisecond before it
  assert.equal(one('m a=1 -1000000').timeMs, -1);
  assert.equal(one('m a=1 1999999').timeMs, 1); // floored, never rounded up into the next ms
  assert.equal(one('m a=1').timeMs, null);
  assert.equal(one('m a=1   ').timeMs, null);
  fails('m a=1 9223372036854775808', /timestamp is out of range/);
  fails('m a=1 12.5', /invalid timestamp: 12.5/);
  fails('m a=1 1 2', /unexpected text after the timestamp/);
});

test('parsePrecision: the 2.x names, and the 1.x names with n, u, m, h', () => {
  assert.equal(parsePrecision(undefined, 2), 'ns');
  assert.equal(parsePrecision('', 1), 'ns');
  assert.deepEqual(
    ['ns', 'us', 'ms', 's'].map((p) => parsePrecision(p, 2)),
    ['ns', 'us', 'ms', 's'],
  );
  assert.equal(parsePrecision('h', 2), null);
  assert.equal(parsePrecision('n', 2), null);
  assert.deepEqual(
    ['n', 'u', 'ms', 's', 'm', 'h'].map((p) => parsePrecision(p, 1)),
    ['ns', 'us', 'ms', 's', 'm', 'h'],
  );
  assert.equal(parsePrecision('x', 1), null);
});

test('comments, blank lines, leading spaces and \\r\\n line ends; line numbers count every physical line', () => {
  const body = '# a comment\r\n\r\n   \r\n  m,t=a x=1 1000000\r\n# another\r\nm x=2i\r\n\n';
  const samples = parseLineProtocol(body);
  assert.deepEqual(
    samples.map((s) => [s.line, s.measurement, s.timeMs]),
    [
      [4, 'm', 1],
      [6, 'm', null],
    ],
  );
  assert.deepEqual(samples[0]!.tags, [['t', 'a']]);
  assert.deepEqual(parseLineProtocol(''), []);
  assert.deepEqual(parseLineProtocol('\n\n# only a comment'), []);
});

test('a string value may span lines; the next line keeps its number', () => {
  const samples = parseLineProtocol('m s="a\nb\nc",x=1\nm x=2');
  assert.deepEqual(samples[0]!.fields[0], ['s', { type: 'string', value: 'a\nb\nc' }]);
  assert.deepEqual(
    samples.map((s) => s.line),
    [1, 4],
  );
  fails('m s="a\nb\nc",x=1\nm x=2\nbad', /has no "=" and value|missing fields/, 5);
});

test('repeated tag and field keys keep the last value', () => {
  const s = one('m,a=1,a=2 x=1,x=2');
  assert.deepEqual(s.tags, [['a', '2']]);
  assert.deepEqual(s.fields, [['x', { type: 'float', value: 2 }]]);
});

test('malformed lines name the line and the problem', () => {
  fails('m', /missing fields/);
  fails('m,host=a', /missing fields/);
  fails(',t=a x=1', /missing measurement/);
  fails('m,=a x=1', /missing tag key/);
  fails('m,t x=1', /tag "t" has no "=" and value/);
  fails('m,t= x=1', /missing value of tag "t"/);
  fails('m x', /field "x" has no "=" and value/);
  fails('m x=', /missing value of field "x"/);
  fails('m =1', /missing field key/);
  fails('m x=1,', /missing field key/);
  fails('m x="open', /string value of field "x" has no closing quote/);
  fails('m x=1\nm y=2\nm,t=a\\\nz=1', /ends with a backslash/, 3);
  fails('ok x=1\n\nbad line here', /invalid value|has no "="/, 3);
});

test('a line longer than the limit is refused, with its number', () => {
  const long = `m x="${'a'.repeat(2000)}"`;
  assert.throws(
    () => parseLineProtocol(`m x=1\n${long}`, { maxLineLength: 1000 }),
    (err: unknown) => {
      return (
        err instanceof LineProtocolError && err.line === 2 && /longer than 1000 characters/.test(err.message)
      );
    },
  );
  assert.equal(parseLineProtocol(long, { maxLineLength: 3000 }).length, 1);
  assert.throws(
    () => parseLineProtocol(`m,t=${'v'.repeat(5000)} x=1`, { maxLineLength: 1000 }),
    /longer than 1000/,
  );
  assert.throws(
    () => parseLineProtocol(`#${'c'.repeat(5000)}\nm x=1`, { maxLineLength: 1000 }),
    /line 1: line longer/,
  );
});
