// wirePointCount against the points decodePoints gives, on wires mixing plain points, pairs and
// pairs' lists used by assert points, with and without assertFrom.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ASSERT_FLAG,
  KEY_UNIT,
  LIST_UNIT,
  UNTRACKED_FLAG,
  decodePoints,
  wirePointCount,
} from '../../src/model/point-wire';
import type { WirePoints } from '../../src/model/wire';

test('wirePointCount counts a pair as two and everything else as one', () => {
  let state = 11;
  const random = (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  for (let round = 0; round < 300; round++) {
    const lists = 1 + random(5);
    const pathLists = Array.from({ length: lists }, (_, l) =>
      Array.from({ length: 1 + random(4) }, (_, p) => `f${l}.${p}`),
    );
    const assertFrom =
      random(4) === 0
        ? undefined
        : pathLists.map((paths) => [-1, 0, paths.length, random(paths.length + 1)][random(4)]!);
    const keys = Array.from({ length: 1 + random(300) }, (_, k) => `k${k}`);
    const count = random(200);
    const meta = new Float64Array(count * 2);
    let leaves = 0;
    for (let i = 0; i < count; i++) {
      const list = random(lists);
      const flags = (random(3) === 0 ? ASSERT_FLAG : 0) | (random(5) === 0 ? UNTRACKED_FLAG : 0);
      meta[2 * i] = 1_700_000_000_000 + i;
      meta[2 * i + 1] = random(keys.length) * KEY_UNIT + list * LIST_UNIT + flags;
      leaves += pathLists[list]!.length;
    }
    const wire: WirePoints = { keys, pathLists, meta, values: new Float64Array(leaves) };
    if (assertFrom !== undefined) wire.assertFrom = assertFrom;
    assert.equal(wirePointCount(wire), decodePoints(wire).length);
  }
});
