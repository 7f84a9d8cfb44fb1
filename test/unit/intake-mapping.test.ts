import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseLineProtocol } from '../../src/intake/line-protocol';
import { MappingError, mapLineSamples, seriesKey } from '../../src/intake/mapping';

const NOW = Date.UTC(2026, 0, 24, 10, 0, 0);
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));
const map = (text: string, keyPrefix?: string) =>
  mapLineSamples(parseLineProtocol(text), { nowMs: NOW, keyPrefix });

test('series key: measurement and tags sorted by key, with InfluxDB escapes', () => {
  assert.equal(
    seriesKey('cpu', [
      ['host', 'pve1'],
      ['cpu', 'cpu-total'],
    ]),
    'cpu,cpu=cpu-total,host=pve1',
  );
  assert.equal(seriesKey('mem', []), 'mem');
  assert.equal(seriesKey('a b,c', [['k=1', 'v ,=\\x']]), 'a\\ b\\,c,k\\=1=v\\ \\,\\=\\\\x');
  assert.equal(
    seriesKey('m', [
      ['b', '1'],
      ['B', '2'],
      ['a', '3'],
    ]),
    'm,B=2,a=3,b=1',
  );
});

test('a Telegraf cpu line: one track point of {sum, count} and one assert point of last per field', () => {
  const mapped = map('cpu,host=pve1,cpu=cpu-total usage_idle=97.5,usage_user=1.25 1769248800000000000\n');
  assert.equal(mapped.samples, 1);
  assert.deepEqual(plain(mapped.points), [
    {
      key: 'cpu,cpu=cpu-total,host=pve1',
      at: '2026-01-24T10:00:00.000Z',
      operation: 'track',
      values: { usage_idle: { sum: 97.5, count: 1 }, usage_user: { sum: 1.25, count: 1 } },
    },
    {
      key: 'cpu,cpu=cpu-total,host=pve1',
      at: '2026-01-24T10:00:00.000Z',
      operation: 'assert',
      values: { usage_idle: { last: 97.5 }, usage_user: { last: 1.25 } },
    },
  ]);
});

test('integers, unsigned and booleans are gauges too (booleans 1/0); strings and non-finite values are skipped and counted', () => {
  const mapped = map(
    'system,object=qemu,host=web,vmid=100 mem=1073741824i,netin=5u,running=true,paused=F,name="web",tags="a;b",bad=NaN,big=1e400 1769248800000000000',
  );
  assert.equal(mapped.skippedStrings, 2);
  assert.equal(mapped.skippedNonFinite, 2);
  assert.deepEqual(plain(mapped.points[0]!.values), {
    mem: { sum: 1073741824, count: 1 },
    netin: { sum: 5, count: 1 },
    running: { sum: 1, count: 1 },
    paused: { sum: 0, count: 1 },
  });
  assert.equal(mapped.points[0]!.key, 'system,host=web,object=qemu,vmid=100');
});

test('a line with only string fields gives no point (not an error); no timestamp means now', () => {
  const mapped = map('ha,entity_id=door state="open"\nha,entity_id=door value=1');
  assert.equal(mapped.samples, 2);
  assert.equal(mapped.skippedStrings, 1);
  assert.deepEqual(
    mapped.points.map((p) => [p.operation, p.at]),
    [
      ['track', '2026-01-24T10:00:00.000Z'],
      ['assert', '2026-01-24T10:00:00.000Z'],
    ],
  );
});

test('dots in field names become underscores (a dot would nest the stored path); the key prefix goes first', () => {
  const mapped = map('m a.b=1,c=2', 'lab::');
  assert.equal(mapped.points[0]!.key, 'lab::m');
  assert.deepEqual(Object.keys(mapped.points[0]!.values), ['a_b', 'c']);
  assert.deepEqual(plain(map('m a.b=1,a_b=2').points[1]!.values), { a_b: { last: 2 } });
});

test('a field named __proto__ or constructor is an ordinary field', () => {
  const mapped = map('m __proto__=1,constructor=2');
  assert.deepEqual(
    plain(mapped.points[0]!.values),
    JSON.parse('{"__proto__":{"sum":1,"count":1},"constructor":{"sum":2,"count":1}}'),
  );
  assert.deepEqual(Object.keys(mapped.points[0]!.values), ['__proto__', 'constructor']);
});

test('more than 500 fields in a line are split over several point pairs (1,000 leaves per point at most)', () => {
  const fields = Array.from({ length: 1200 }, (_, i) => `f${i}=${i}`).join(',');
  const mapped = map(`m ${fields} 0`);
  assert.deepEqual(
    mapped.points.map((p) => [p.operation, Object.keys(p.values).length]),
    [
      ['track', 500],
      ['assert', 500],
      ['track', 500],
      ['assert', 500],
      ['track', 200],
      ['assert', 200],
    ],
  );
});

test('times outside 1970..9999 and keys the write path refuses fail naming the line', () => {
  const fails = (text: string, pattern: RegExp, line: number) =>
    assert.throws(
      () => map(text),
      (err: unknown) => err instanceof MappingError && err.line === line && pattern.test(err.message),
    );
  fails('m x=1 0\nm x=1 -1', /line 2: timestamp is outside the accepted range/, 2);
  // seconds sent where nanoseconds are expected are fine (1970); nanoseconds read as seconds are not
  assert.equal(
    mapLineSamples(parseLineProtocol('m x=1 1769248800', { precision: 'ns' }), { nowMs: NOW }).points[0]!.at,
    '1970-01-01T00:00:01.769Z',
  );
  assert.throws(
    () => mapLineSamples(parseLineProtocol('m x=1 1769248800000000000', { precision: 's' }), { nowMs: NOW }),
    /outside the accepted range/,
  );
  fails(`m,t=${'v'.repeat(260)} x=1`, /longer than 255 characters/, 1);
  fails('__system__key__ x=1', /system key/, 1);
  // a key of 255 characters (code points) is fine
  assert.equal(map(`${'é'.repeat(255)} x=1`).points.length, 2);
});
