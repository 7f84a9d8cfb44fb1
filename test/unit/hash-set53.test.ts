// The hash53 set of the intake's key limit against a Set<number> of the same hashes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HashSet53, slotOf } from '../../src/lib/hash-set53';
import { hash53 } from '../../src/lib/key-hash';

test('holds what a Set<number> holds, through growth, with 0 and colliding low bits', () => {
  const set = new HashSet53();
  const reference = new Set<number>();
  let state = 7;
  const random = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state;
  };
  const candidates: number[] = [0, 1, 2 ** 53 - 1, 2 ** 32, 2 ** 33, 2 ** 32 + 1, 1024, 2048];
  for (let i = 0; i < 20_000; i++) candidates.push(hash53(`key${random() % 30_000}`));
  for (let i = 0; i < 2_000; i++) candidates.push((random() % 64) * 2 ** 32 + 5); // same low bits
  for (const h of candidates) {
    assert.equal(set.has(h), reference.has(h));
    assert.equal(set.add(h), !reference.has(h));
    reference.add(h);
    assert.equal(set.size, reference.size);
  }
  for (const h of reference) assert.ok(set.has(h));
  for (let i = 0; i < 5_000; i++) {
    const h = hash53(`other${i}`);
    assert.equal(set.has(h), reference.has(h));
  }
  assert.equal(new HashSet53(100_000).size, 0);
});

test('hashes that share their low bits start at different slots', () => {
  const mask = 4095;
  const starts = new Set<number>();
  for (let k = 0; k < 4096; k++) starts.add(slotOf(k * 4096 + 7, mask)); // the same low 12 bits
  assert.ok(starts.size > 2000, `${starts.size} slots`);
  for (let k = 0; k < 4096; k++) assert.ok(slotOf(k * 4096 + 7, mask) <= mask);
});
