// Large intake bodies read in slices (src/intake/slices.ts): the sliced parsers give the same
// samples, points and errors as the one-pass ones, and let timers run between slices.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  LineProtocolError,
  parseLineProtocol,
  parseLineProtocolSliced,
} from '../../src/intake/line-protocol';
import { mapLineSamples, mapLineSamplesSliced } from '../../src/intake/mapping';
import { mapRemoteWrite, mapRemoteWriteSliced } from '../../src/intake/remote-write';
import { ProtoWriter } from '../../src/intake/protobuf';

const T = 1_769_248_800_000_000_000n;

function body(lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    if (i % 97 === 0) out.push('# a comment', '');
    if (i % 131 === 0) out.push(`note,host=h${i % 7} text="two\nlines",v=${i} ${T + BigInt(i)}`);
    out.push(
      `cpu,cpu=cpu${i % 9},host=h${i % 50} usage_idle=${i / 7},usage_user=${i}i,up=t ${T + BigInt(i)}`,
    );
  }
  return out.join('\n');
}

test('sliced line protocol: the same samples and points as one pass, whatever the slice size', async () => {
  const text = body(5000);
  const once = parseLineProtocol(text);
  for (const slice of [1, 100, 4096, 65_536]) {
    const sliced = await parseLineProtocolSliced(text, {}, slice);
    assert.deepEqual(sliced, once, `slice ${slice}`);
  }
  const nowMs = Date.UTC(2026, 0, 24);
  assert.deepEqual(await mapLineSamplesSliced(once, { nowMs }), mapLineSamples(once, { nowMs }));
});

test('sliced line protocol: the same error, naming the same line', async () => {
  const text = `${body(3000)}\ncpu,host=x usage=oops ${T}\n${body(10)}`;
  let expected = '';
  try {
    parseLineProtocol(text);
  } catch (err) {
    assert.ok(err instanceof LineProtocolError);
    expected = err.message;
  }
  assert.match(expected, /^line \d+: /);
  await assert.rejects(parseLineProtocolSliced(text, {}, 1000), (err: unknown) => {
    assert.ok(err instanceof LineProtocolError);
    assert.equal(err.message, expected);
    return true;
  });
});

test('sliced line protocol lets a timer run between slices', async () => {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 0);
  await new Promise((r) => setTimeout(r, 5));
  const before = ticks;
  await parseLineProtocolSliced(body(20_000), {}, 16_384);
  clearInterval(timer);
  assert.ok(ticks > before, 'the timer ran while the body was parsed');
});

test('sliced remote write: the same points and the same error as one pass', async () => {
  const w = new ProtoWriter();
  for (let i = 0; i < 3000; i++) {
    const ts = new ProtoWriter()
      .message(1, new ProtoWriter().string(1, '__name__').string(2, i % 2 ? 'node_load1' : 'http_total'))
      .message(1, new ProtoWriter().string(1, 'instance').string(2, `h${i % 40}`))
      .message(2, new ProtoWriter().double(1, i * 0.5).varint(2, 1_769_248_800_000 + i));
    w.message(1, ts);
  }
  const good = w.finish();
  assert.deepEqual(await mapRemoteWriteSliced(good, {}, 512), mapRemoteWrite(good));
  const bad = Buffer.concat([
    good,
    new ProtoWriter().message(1, new ProtoWriter().message(2, new ProtoWriter().double(1, 1))).finish(),
  ]);
  assert.throws(() => mapRemoteWrite(bad), /timeseries\[3000\] has no __name__ label/);
  await assert.rejects(mapRemoteWriteSliced(bad, {}, 512), /timeseries\[3000\] has no __name__ label/);
});
