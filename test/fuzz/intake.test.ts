// Property tests of the intake parsers: whatever the input, they return or throw their own parse
// error (never anything else), they read back what a correct writer wrote, and their time stays
// linear in the input (adversarial bodies of a megabyte parse in well under a second).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { LineProtocolError, parseLineProtocol, type FieldValue } from '../../src/intake/line-protocol';
import { GraphiteError, mapGraphite, parseGraphite } from '../../src/intake/graphite';
import { StatsdAggregator, StatsdError, parseStatsd } from '../../src/intake/statsd';
import { MappingError, mapLineSamples } from '../../src/intake/mapping';
import { OtlpError, mapOtlpJson } from '../../src/intake/otlp';
import { SnappyError, snappyLiteralBlock, snappyUncompress } from '../../src/intake/snappy';
import { RemoteWriteError, mapRemoteWrite } from '../../src/intake/remote-write';
import { ProtoWriter } from '../../src/intake/protobuf';
import { decodeOtlpProtobuf } from '../../src/intake/otlp-proto';

const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const RUNS = Number(process.env.FUZZ_RUNS ?? 3000);

// Characters that matter to the line protocol, mixed with ordinary ones.
const lpChar = fc.constantFrom(...' ,="\\\n\r\t#abcxyz019.-+eEiutfTF°é'.split(''));
const lpText = fc.array(lpChar, { maxLength: 120 }).map((chars) => chars.join(''));

function onlyOwnErrors(run: () => unknown): void {
  try {
    run();
  } catch (err) {
    if (!(
      err instanceof LineProtocolError ||
      err instanceof GraphiteError ||
      err instanceof StatsdError ||
      err instanceof MappingError ||
      err instanceof OtlpError
    ))
      throw err;
  }
}

test('line protocol: any text parses or fails with a LineProtocolError', () => {
  fc.assert(
    fc.property(
      fc.oneof(lpText, fc.string({ maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 100 })),
      (text) => {
        onlyOwnErrors(() => mapLineSamples(parseLineProtocol(text), { nowMs: 0 }));
        onlyOwnErrors(() => parseLineProtocol(text, { precision: 's', maxLineLength: 16 }));
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
});

test('line protocol: mutations of a valid body parse or fail with a LineProtocolError', () => {
  const base =
    'cpu,cpu=cpu-total,host=pve1 usage_idle=97.4,usage_user=1.2,n=5i,u=3u,ok=true,s="a\\"b" 1700000000000000000\n';
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.nat(base.length), fc.nat(3), lpChar), { minLength: 1, maxLength: 6 }),
      (edits) => {
        let text = base;
        for (const [at, kind, ch] of edits) {
          const i = at % (text.length + 1);
          text =
            kind === 0
              ? text.slice(0, i) + text.slice(i + 1)
              : kind === 1
                ? text.slice(0, i) + ch + text.slice(i)
                : text.slice(0, i) + ch + text.slice(i + 1);
        }
        onlyOwnErrors(() => parseLineProtocol(text));
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
});

// A writer that escapes as InfluxDB's clients do, for the round trip.
const escapeMeasurement = (s: string) => s.replace(/\\/g, '\\\\').replace(/([, ])/g, '\\$1');
const escapeTag = (s: string) => s.replace(/\\/g, '\\\\').replace(/([,= ])/g, '\\$1');
const escapeString = (s: string) => s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
const identifier = fc
  .string({ unit: fc.constantFrom(...'ab ,=\\"x°1.'.split('')), minLength: 1, maxLength: 8 })
  // a leading # would make a comment of the line; identifiers do not start or end with the characters
  // line ends and blanks are made of
  .filter((s) => !s.startsWith('#'));
const fieldValue: fc.Arbitrary<FieldValue> = fc.oneof(
  fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .map((value) => ({ type: 'float' as const, value: Object.is(value, -0) ? 0 : value })),
  fc.integer().map((value) => ({ type: 'integer' as const, value })),
  fc.nat().map((value) => ({ type: 'unsigned' as const, value })),
  fc.boolean().map((value) => ({ type: 'boolean' as const, value })),
  fc.string({ maxLength: 10 }).map((value) => ({ type: 'string' as const, value })),
);
function writeValue(v: FieldValue): string {
  switch (v.type) {
    case 'float':
      return String(v.value);
    case 'integer':
      return `${v.value}i`;
    case 'unsigned':
      return `${v.value}u`;
    case 'boolean':
      return v.value ? 'true' : 'F';
    case 'string':
      return `"${escapeString(v.value)}"`;
  }
}

test('line protocol: what a correct writer escapes reads back exactly', () => {
  const sample = fc.record({
    measurement: identifier,
    tags: fc.uniqueArray(fc.tuple(identifier, identifier), { maxLength: 3, selector: ([k]) => k }),
    fields: fc.uniqueArray(fc.tuple(identifier, fieldValue), {
      minLength: 1,
      maxLength: 3,
      selector: ([k]) => k,
    }),
    time: fc.option(fc.integer({ min: -1e12, max: 1e12 })),
  });
  fc.assert(
    fc.property(fc.array(sample, { minLength: 1, maxLength: 4 }), (samples) => {
      const text = samples
        .map((s) => {
          const tags = s.tags.map(([k, v]) => `,${escapeTag(k)}=${escapeTag(v)}`).join('');
          const fields = s.fields.map(([k, v]) => `${escapeTag(k)}=${writeValue(v)}`).join(',');
          return `${escapeMeasurement(s.measurement)}${tags} ${fields}${s.time === null ? '' : ` ${s.time}`}`;
        })
        .join('\n');
      const parsed = parseLineProtocol(text, { precision: 'ms' });
      assert.deepEqual(
        parsed.map((p) => ({ measurement: p.measurement, tags: p.tags, fields: p.fields, time: p.timeMs })),
        samples.map((s) => ({ measurement: s.measurement, tags: s.tags, fields: s.fields, time: s.time })),
      );
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test('line protocol: adversarial megabyte bodies parse in linear time', () => {
  const MB = 1024 * 1024;
  const bodies = [
    '\\'.repeat(MB),
    `m ${'x="'.repeat(MB / 3)}`,
    `m x="${'\\"'.repeat(MB / 2)}"`,
    `m${',t=v'.repeat(MB / 4)} x=1`,
    `m ${'x=1,'.repeat(MB / 4)}x=1`,
    'm x=1 1\n'.repeat(MB / 8),
    '\n'.repeat(MB),
    '#\r\n'.repeat(MB / 3),
    ` ${' '.repeat(MB)}`,
    `m,t=${'\\ '.repeat(MB / 2)} x=1`,
  ];
  for (const body of bodies) {
    const started = performance.now();
    onlyOwnErrors(() => parseLineProtocol(body, { maxLineLength: 2 * MB }));
    onlyOwnErrors(() => parseLineProtocol(body));
    const ms = performance.now() - started;
    // quadratic work on a megabyte would take hours; the bound only allows for a busy machine
    assert.ok(ms < 8000, `${JSON.stringify(body.slice(0, 20))}... took ${ms.toFixed(0)} ms`);
  }
});

const gsChar = fc.constantFrom(...' .:|@#,;=+-\n\r\tabcxyz0129eE'.split(''));
const gsText = fc.oneof(
  fc.array(gsChar, { maxLength: 120 }).map((chars) => chars.join('')),
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 100 }),
);

test("graphite and statsd: any text parses (and maps, and aggregates) or fails with the parser's own error", () => {
  fc.assert(
    fc.property(gsText, (text) => {
      onlyOwnErrors(() => mapGraphite(parseGraphite(text), { nowMs: 1_769_248_800_000 }));
      onlyOwnErrors(() => {
        const agg = new StatsdAggregator({ maxEntries: 4 });
        agg.add(parseStatsd(text));
        for (const point of agg.flush(1_769_248_800_000)) {
          for (const leaves of Object.values(point.values)) {
            for (const v of Object.values(leaves as Record<string, number>)) assert.ok(Number.isFinite(v));
          }
        }
      });
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test('graphite and statsd: adversarial megabyte bodies parse in linear time', () => {
  const MB = 1024 * 1024;
  const bodies = [
    'a.b.c 1 1\n'.repeat(MB / 10),
    `${'.'.repeat(MB)} 1 1`,
    ';'.repeat(MB),
    'a:1|c\n'.repeat(MB / 6),
    `a:1|s|#${',t'.repeat(MB / 2)}`,
    '\n'.repeat(MB),
    `a:${'|'.repeat(MB)}`,
  ];
  for (const body of bodies) {
    const started = performance.now();
    onlyOwnErrors(() => mapGraphite(parseGraphite(body, 2 * MB), { nowMs: 0 }));
    onlyOwnErrors(() => new StatsdAggregator().add(parseStatsd(body, 2 * MB)));
    const ms = performance.now() - started;
    assert.ok(ms < 8000, `${JSON.stringify(body.slice(0, 20))}... took ${ms.toFixed(0)} ms`);
  }
});

test('otlp json: any JSON value, and exports with wrongly typed members, map or fail with an OtlpError', () => {
  const anyValue = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.string({ maxLength: 5 }),
    fc.double(),
    fc.integer(),
    fc.boolean(),
    fc.constant([]),
    fc.constant({}),
  );
  const dataPoint = fc.record(
    {
      attributes: fc.oneof(
        anyValue,
        fc.array(
          fc.record({
            key: anyValue,
            value: fc.oneof(
              anyValue,
              fc.record({ stringValue: anyValue, intValue: anyValue, doubleValue: anyValue }),
            ),
          }),
          { maxLength: 2 },
        ),
      ),
      timeUnixNano: fc.oneof(anyValue, fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String)),
      asDouble: anyValue,
      asInt: anyValue,
      count: anyValue,
      sum: anyValue,
    },
    { requiredKeys: [] },
  );
  const data = fc.record(
    {
      aggregationTemporality: fc.oneof(anyValue, fc.constantFrom(1, 2)),
      dataPoints: fc.oneof(anyValue, fc.array(fc.oneof(dataPoint, anyValue), { maxLength: 3 })),
    },
    { requiredKeys: [] },
  );
  const metric = fc.record(
    { name: anyValue, gauge: fc.oneof(data, anyValue), sum: data, histogram: data, summary: data },
    { requiredKeys: [] },
  );
  const exportRequest = fc.record(
    {
      resourceMetrics: fc.oneof(
        anyValue,
        fc.array(
          fc.record(
            {
              resource: fc.oneof(anyValue, fc.record({ attributes: anyValue })),
              scopeMetrics: fc.oneof(
                anyValue,
                fc.array(
                  fc.record(
                    { metrics: fc.oneof(anyValue, fc.array(fc.oneof(metric, anyValue), { maxLength: 3 })) },
                    { requiredKeys: [] },
                  ),
                  { maxLength: 2 },
                ),
              ),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
      ),
    },
    { requiredKeys: [] },
  );
  fc.assert(
    fc.property(fc.oneof(fc.jsonValue(), exportRequest), (body) => {
      onlyOwnErrors(() => {
        for (const point of mapOtlpJson(body, { nowMs: 1_769_248_800_000 }).points) {
          assert.ok(point.key.length > 0);
          assert.ok(!Number.isNaN(Date.parse(point.at)));
        }
      });
    }),
    { seed: SEED, numRuns: RUNS },
  );
});

test('remote write: random and mutated snappy/protobuf bodies end only in their own errors; literal blocks round-trip', () => {
  const tooLarge = new Error('too large');
  const valid = (() => {
    const ts = new ProtoWriter()
      .message(1, new ProtoWriter().string(1, '__name__').string(2, 'm'))
      .message(2, new ProtoWriter().double(1, 1.5).varint(2, 1769248800000));
    return new ProtoWriter().message(1, ts).message(1, ts).finish();
  })();
  const own = (err: unknown) =>
    err instanceof SnappyError || err instanceof RemoteWriteError || err === tooLarge;
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }),
        fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean()).map(([at, byte, cut]) => {
          const b = Buffer.from(snappyLiteralBlock(valid));
          const i = at % b.length;
          if (cut) return b.subarray(0, i);
          b[i] = byte;
          return b;
        }),
      ),
      (bytes) => {
        try {
          mapRemoteWrite(snappyUncompress(Buffer.from(bytes), 1 << 20, () => tooLarge));
        } catch (err) {
          if (!own(err)) throw err;
        }
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 200_000 }), (bytes) => {
      assert.deepEqual(
        snappyUncompress(snappyLiteralBlock(bytes), 1 << 20, () => tooLarge),
        Buffer.from(bytes),
      );
    }),
    { seed: SEED, numRuns: 50 },
  );
  assert.equal(mapRemoteWrite(valid).points.length, 4);
});

test('otlp protobuf: random and mutated bodies decode and map or fail with an OtlpError', () => {
  const dp = new ProtoWriter()
    .fixed64(3, 1769248800000 * 1_000_000)
    .double(4, 1.5)
    .message(7, new ProtoWriter().string(1, 'k').message(2, new ProtoWriter().string(1, 'v')));
  const hist = new ProtoWriter()
    .fixed64(3, 1769248800000 * 1_000_000)
    .fixed64(4, 3)
    .double(5, 2.5)
    .bytes(6, Buffer.alloc(16, 1))
    .bytes(7, Buffer.alloc(8));
  const metrics = new ProtoWriter()
    .message(2, new ProtoWriter().string(1, 'g').message(5, new ProtoWriter().message(1, dp)))
    .message(2, new ProtoWriter().string(1, 'h').message(9, new ProtoWriter().message(1, hist).varint(2, 1)));
  const valid = new ProtoWriter().message(1, new ProtoWriter().message(2, metrics)).finish();
  assert.equal(mapOtlpJson(decodeOtlpProtobuf(valid), { nowMs: 0 }).points.length, 3);
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 300 }),
        fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 }), fc.boolean()).map(([at, byte, cut]) => {
          const b = Buffer.from(valid);
          const i = at % b.length;
          if (cut) return b.subarray(0, i);
          b[i] = byte;
          return b;
        }),
      ),
      (bytes) => {
        onlyOwnOtlp(() => mapOtlpJson(decodeOtlpProtobuf(Buffer.from(bytes)), { nowMs: 0 }));
      },
    ),
    { seed: SEED, numRuns: RUNS },
  );
});

function onlyOwnOtlp(run: () => unknown): void {
  try {
    run();
  } catch (err) {
    if (!(err instanceof OtlpError)) throw err;
  }
}

test('through the real server: random bodies on every intake endpoint never answer 5xx, and the server stays healthy', async () => {
  const { startTestServer, createProjectWithToken } = await import('../helpers/server');
  const server = await startTestServer();
  try {
    const agent = await createProjectWithToken(server);
    const paths = ['/api/v2/write?precision=s', '/write?db=x', '/v1/metrics', '/query'];
    const bodies = fc.sample(
      fc.oneof(lpText, gsText, fc.json({ maxDepth: 4 }), fc.string({ unit: 'binary', maxLength: 200 })),
      { seed: SEED, numRuns: 400 },
    );
    for (let i = 0; i < bodies.length; i++) {
      const path = paths[i % paths.length]!;
      const res = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Token ${agent.sourceToken}`,
          'content-type': path === '/v1/metrics' ? 'application/json' : 'text/plain',
        },
        body: bodies[i],
      });
      await res.arrayBuffer();
      assert.ok(res.status < 500, `${path} ${JSON.stringify(bodies[i]).slice(0, 200)} -> ${res.status}`);
    }
    const ok = await fetch(`${server.url}/api/v2/write`, {
      method: 'POST',
      headers: { authorization: `Token ${agent.sourceToken}` },
      body: 'after v=1',
    });
    assert.equal(ok.status, 204);
  } finally {
    await server.stop();
  }
});
