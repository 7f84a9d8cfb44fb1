import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ProtoWriter } from '../../src/intake/protobuf';
import { mapRemoteWrite, mapRemoteWriteWire, mapRemoteWriteWireSliced } from '../../src/intake/remote-write';
import { parseBatch } from '../../src/domain/metrics/ingest/points';
import { decodePoints, wirePointCount } from '../../src/model/point-wire';
import { POINTS_PER_WIRE } from '../../src/intake/line-wire';

type Series = { labels: Array<[string, string]>; samples: Array<[number, number]> };

function body(series: Series[]): Buffer {
  const w = new ProtoWriter();
  for (const s of series) {
    const ts = new ProtoWriter();
    for (const [k, v] of s.labels) ts.message(1, new ProtoWriter().string(1, k).string(2, v));
    for (const [value, at] of s.samples) ts.message(2, new ProtoWriter().double(1, value).varint(2, at));
    w.message(1, ts);
  }
  return Buffer.from(w.finish());
}

/** What the points way gives once the batch endpoint has validated them, or its error. */
function viaBatch(bytes: Buffer, keyPrefix?: string) {
  try {
    const mapped = mapRemoteWrite(bytes, { keyPrefix });
    const points = [];
    for (let from = 0; from < mapped.points.length; from += 10_000)
      points.push(...parseBatch({ points: mapped.points.slice(from, from + 10_000) }));
    return { ...mapped, points };
  } catch (err) {
    return err as Error;
  }
}

function same(bytes: Buffer, keyPrefix?: string): void {
  const expected = viaBatch(bytes, keyPrefix);
  let wire;
  try {
    wire = mapRemoteWriteWire(bytes, { keyPrefix });
  } catch (err) {
    assert.ok(expected instanceof Error, `the wire way refused what the points way takes: ${String(err)}`);
    assert.equal((err as Error).message, expected.message);
    return;
  }
  assert.ok(
    !(expected instanceof Error),
    `the wire way took what the points way refuses: ${String(expected)}`,
  );
  const points = wire.wires.flatMap((w) => decodePoints(w));
  assert.deepEqual(
    points.map((p) => ({ ...p, paths: [...p.paths] })),
    expected.points.map((p) => ({ ...p, paths: [...p.paths] })),
  );
  assert.equal(wire.points, expected.points.length);
  assert.equal(
    wire.wires.reduce((n, w) => n + wirePointCount(w), 0),
    expected.points.length,
  );
  for (const w of wire.wires) assert.ok(wirePointCount(w) <= POINTS_PER_WIRE);
  assert.deepEqual([wire.samples, wire.skippedNonFinite], [expected.samples, expected.skippedNonFinite]);
}

const T = Date.UTC(2026, 0, 24, 10);

test('remote write to wire: the same points as through point objects and the batch validation', async () => {
  same(
    body([
      {
        labels: [
          ['__name__', 'node_load1'],
          ['instance', 'pve1:9100'],
          ['job', 'node'],
        ],
        samples: [
          [0.5, T],
          [1.5, T + 15_000],
        ],
      },
      {
        labels: [
          ['__name__', 'node_cpu_seconds_total'],
          ['cpu', '0'],
          ['mode', 'idle'],
        ],
        samples: [[1234.5, T]],
      },
      {
        labels: [
          ['__name__', 'http_request_duration_seconds_bucket'],
          ['le', '+Inf'],
        ],
        samples: [
          [7, T],
          [Number.NaN, T + 1],
        ],
      },
      {
        labels: [
          ['__name__', 'up'],
          ['job', ''],
        ],
        samples: [
          [1, T],
          [Number.POSITIVE_INFINITY, T],
        ],
      },
    ]),
  );
  same(body([{ labels: [['__name__', 'up']], samples: [[1, T]] }]), 'lab::');
  // refused the same way: no name, a time out of range
  same(body([{ labels: [['job', 'x']], samples: [[1, T]] }]));
  same(body([{ labels: [['__name__', 'up']], samples: [[1, 253_402_300_800_000]] }]));
  // more points than a wire holds: gauges (two points) and readings (one) across wires
  const many: Series[] = Array.from({ length: 3_000 }, (_, i) => ({
    labels: [
      ['__name__', i % 3 === 0 ? 'c_total' : 'g'],
      ['i', `${i % 700}`],
    ],
    samples: [
      [i, T + i],
      [i + 0.5, T + i + 1],
    ],
  }));
  same(body(many));
  const sliced = await mapRemoteWriteWireSliced(body(many), {}, 512);
  assert.deepEqual(sliced, mapRemoteWriteWire(body(many)));
});

test('remote write to wire: random requests give the same points', () => {
  const label = fc.tuple(
    fc.constantFrom('job', 'instance', 'a', 'b', 'le', '__name__'),
    fc.constantFrom('x', 'y', '', 'é', 'a b'),
  );
  const name = fc.constantFrom('up', 'node_load1', 'x_total', 'h_bucket', 's_sum', 's_count', '', '\u200b');
  const value = fc.oneof(
    fc.double(),
    fc.integer().map((v) => v),
    fc.constant(-0),
  );
  const at = fc.oneof(fc.integer({ min: 0, max: 2_000_000_000_000 }), fc.constant(T));
  const series = fc.record({
    name: fc.option(name, { nil: null }),
    labels: fc.array(label, { maxLength: 3 }),
    samples: fc.array(fc.tuple(value, at), { maxLength: 4 }),
  });
  fc.assert(
    fc.property(fc.array(series, { maxLength: 12 }), fc.constantFrom(undefined, 'p::'), (list, prefix) => {
      const bytes = body(
        list.map((s) => ({
          labels: s.name === null ? s.labels : [['__name__', s.name] as [string, string], ...s.labels],
          samples: s.samples,
        })),
      );
      same(bytes, prefix);
    }),
    { numRuns: 2000 },
  );
});

test('remote write to wire: series known by their labels read the same, whatever order labels and samples come in', () => {
  const label = (k: string, v: string) => new ProtoWriter().string(1, k).string(2, v);
  const sample = (value: number, at: number) => new ProtoWriter().double(1, value).varint(2, at);
  // the same series with its labels first, in another order, and with a label after its sample
  const first = new ProtoWriter()
    .message(1, label('__name__', 'up'))
    .message(1, label('job', 'a'))
    .message(2, sample(1, T));
  const reordered = new ProtoWriter()
    .message(1, label('job', 'a'))
    .message(1, label('__name__', 'up'))
    .message(2, sample(2, T + 1));
  const late = new ProtoWriter()
    .message(1, label('__name__', 'up'))
    .message(2, sample(3, T + 2))
    .message(1, label('job', 'b'));
  const request = () =>
    Buffer.from(
      new ProtoWriter().message(1, first).message(1, reordered).message(1, late).message(1, first).finish(),
    );
  for (let i = 0; i < 3; i++) same(request()); // the second and third find the first's series by their labels
  const wire = mapRemoteWriteWire(request()).wires[0]!;
  assert.deepEqual(wire.keys, ['up,job=a', 'up,job=b']);
});
