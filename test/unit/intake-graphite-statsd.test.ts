import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GraphiteError, graphiteKey, mapGraphite, parseGraphite } from '../../src/intake/graphite';
import { StatsdAggregator, StatsdError, parseStatsd } from '../../src/intake/statsd';

const T = 1_769_248_800; // 2026-01-24T10:00:00Z in seconds
const NOW = T * 1000;
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

test('graphite: Proxmox VE, collectd and Netdata lines', () => {
  const samples = parseGraphite(
    `proxmox.nodes.pve1.cpustat.user 0.12 ${T}\n` +
      `proxmox.nodes.pve1.cpustat.iowait 0.01 ${T}\r\n` +
      `proxmox.qemu.100.cpu 0.25 ${T}\n\n` +
      `nas.cpu-0.cpu-idle 98.5 ${T + 10}\n` +
      `netdata.truenas.system_cpu.user 3.5 ${T}.5\n` +
      `disk.used;server=web01;mount=/ 12 ${T}\n` +
      `uptime 3600 -1\n` +
      `load\t1.5\n`,
  );
  assert.deepEqual(
    samples.map((s) => [s.line, graphiteKey(s.segments, s.tags), s.value, s.timeMs]),
    [
      [1, { key: 'proxmox::nodes::pve1::cpustat', field: 'user' }, 0.12, NOW],
      [2, { key: 'proxmox::nodes::pve1::cpustat', field: 'iowait' }, 0.01, NOW],
      [3, { key: 'proxmox::qemu::100', field: 'cpu' }, 0.25, NOW],
      [5, { key: 'nas::cpu-0', field: 'cpu-idle' }, 98.5, NOW + 10_000],
      [6, { key: 'netdata::truenas::system_cpu', field: 'user' }, 3.5, NOW + 500],
      [7, { key: 'disk,mount=/,server=web01', field: 'used' }, 12, NOW],
      [8, { key: 'uptime', field: 'value' }, 3600, null],
      [9, { key: 'load', field: 'value' }, 1.5, null],
    ],
  );
});

test('graphite: samples of one key at one time share a gauge point pair; non-finite values are skipped', () => {
  const mapped = mapGraphite(
    parseGraphite(
      `pve.node.cpu.user 1 ${T}\npve.node.cpu.system 2 ${T}\npve.node.cpu.user 3 ${T}\npve.node.cpu.idle nan ${T}\npve.node.cpu.user 5 ${T + 60}\nx 1`,
    ),
    { nowMs: NOW + 5_000 },
  );
  assert.equal(mapped.skippedNonFinite, 1);
  assert.deepEqual(plain(mapped.points), [
    {
      key: 'pve::node::cpu',
      at: '2026-01-24T10:00:00.000Z',
      operation: 'track',
      values: { user: { sum: 3, count: 1 }, system: { sum: 2, count: 1 } },
    },
    {
      key: 'pve::node::cpu',
      at: '2026-01-24T10:00:00.000Z',
      operation: 'assert',
      values: { user: { last: 3 }, system: { last: 2 } },
    },
    {
      key: 'pve::node::cpu',
      at: '2026-01-24T10:01:00.000Z',
      operation: 'track',
      values: { user: { sum: 5, count: 1 } },
    },
    {
      key: 'pve::node::cpu',
      at: '2026-01-24T10:01:00.000Z',
      operation: 'assert',
      values: { user: { last: 5 } },
    },
    { key: 'x', at: '2026-01-24T10:00:05.000Z', operation: 'track', values: { value: { sum: 1, count: 1 } } },
    { key: 'x', at: '2026-01-24T10:00:05.000Z', operation: 'assert', values: { value: { last: 1 } } },
  ]);
  const dropped = mapGraphite(parseGraphite(`${'a'.repeat(300)}.b 1 ${T}\nok 1 -5`), { nowMs: NOW });
  assert.equal(dropped.dropped, 2);
  assert.deepEqual(dropped.points, []);
});

test('graphite: malformed lines name the line', () => {
  const fails = (text: string, pattern: RegExp, line: number) =>
    assert.throws(
      () => parseGraphite(text),
      (err: unknown) => err instanceof GraphiteError && err.line === line && pattern.test(err.message),
    );
  fails('a 1 2\nonlyone', /got 1 part/, 2);
  fails('a 1 2 3', /got 4 parts/, 1);
  fails('a x 1', /invalid value: x/, 1);
  fails('a 1 soon', /invalid timestamp: soon/, 1);
  fails('... 1 1', /invalid path/, 1);
  fails('a;tag 1 1', /invalid tag: tag/, 1);
  assert.throws(
    () => parseGraphite(`a 1 1\n${'a'.repeat(100)} 1 1`, 50),
    /line 2: line longer than 50 characters/,
  );
});

test('statsd: every type, sample rates, gauge adjustments, DogStatsD tags', () => {
  const samples = parseStatsd(
    'app.requests:1|c\napp.requests:2|c|@0.5\napp.temp:20|g\napp.temp:+3|g\napp.temp:-1|g\napp.latency:320|ms\napp.users:alice|s\nq.depth:4|g|#env:prod,eu',
  );
  assert.deepEqual(
    samples.map((s) => [s.segments.join('.'), s.type, s.value, s.adjust, s.rate, s.tags]),
    [
      ['app.requests', 'c', 1, false, 1, []],
      ['app.requests', 'c', 2, false, 0.5, []],
      ['app.temp', 'g', 20, false, 1, []],
      ['app.temp', 'g', 3, true, 1, []],
      ['app.temp', 'g', -1, true, 1, []],
      ['app.latency', 'ms', 320, false, 1, []],
      ['app.users', 's', 'alice', false, 1, []],
      [
        'q.depth',
        'g',
        4,
        false,
        1,
        [
          ['env', 'prod'],
          ['eu', 'true'],
        ],
      ],
    ],
  );
});

test('statsd: the aggregator flushes counters scaled by rate, timers as sum/count, gauges tracked and asserted, sets as unique counts', () => {
  const agg = new StatsdAggregator();
  agg.add(
    parseStatsd(
      'app.requests:1|c\napp.requests:2|c|@0.5\napp.temp:20|g\napp.temp:+3|g\napp.temp:-1|g\napp.latency:300|ms\napp.latency:100|ms\napp.users:alice|s\napp.users:bob|s\napp.users:alice|s',
    ),
  );
  assert.deepEqual(plain(agg.flush(NOW)), [
    {
      key: 'app',
      at: '2026-01-24T10:00:00.000Z',
      operation: 'track',
      values: { requests: { count: 5 }, latency: { sum: 400, count: 2 }, temp: { sum: 22, count: 1 } },
    },
    {
      key: 'app',
      at: '2026-01-24T10:00:00.000Z',
      operation: 'assert',
      values: { temp: { last: 22 }, users: { unique: 2 } },
    },
  ]);
  // nothing new: no points; a gauge keeps its value for the next adjustment
  assert.deepEqual(agg.flush(NOW + 10_000), []);
  agg.add(parseStatsd('app.temp:+1|g'));
  assert.deepEqual(
    plain(agg.flush(NOW + 20_000)).map((p: { values: unknown }) => p.values),
    [{ temp: { sum: 23, count: 1 } }, { temp: { last: 23 } }],
  );
});

test('statsd: bounded holdings and refused values', () => {
  const agg = new StatsdAggregator({ maxEntries: 2 });
  agg.add(parseStatsd('a.x:1|c\na.y:1|c\na.z:1|c\na.x:1|c\ns.m:1|s\ns.m:2|s\ns.m:3|s\ns.m:1|s'));
  assert.equal(agg.dropped, 2); // a.z (two counters held already), the third member of s.m
  const huge = new StatsdAggregator();
  huge.add(parseStatsd('big:1e308|c\nbig:1e308|c\ng:1e308|g\ng:+1e308|g'));
  assert.equal(huge.dropped, 2); // the second of each would leave the double range
  assert.deepEqual(
    plain(huge.flush(NOW)).map((p: { key: string; values: unknown }) => [p.key, p.values]),
    [
      ['big', { value: { count: 1e308 } }],
      ['g', { value: { sum: 1e308, count: 1 } }],
      ['g', { value: { last: 1e308 } }],
    ],
  );
  const fails = (text: string, pattern: RegExp) =>
    assert.throws(
      () => parseStatsd(text),
      (err: unknown) => err instanceof StatsdError && pattern.test(err.message),
    );
  fails('a:1', /unknown type ""/);
  fails('a:1|x', /unknown type "x"/);
  fails('a:one|c', /invalid value: one/);
  fails('a:1|c|@2', /invalid sample rate/);
  fails('a:1|c|@0', /invalid sample rate/);
  fails(':1|c', /expected name:value\|type/);
  fails('a b:1|c', /invalid name/);
  fails('a:1e400|g', /value out of range/);
  fails('a:1|c|junk', /unexpected section/);
});
