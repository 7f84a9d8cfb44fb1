// The single executable's memory settings (src/sea/memory.ts): when they are applied. The addon
// itself (src/sea/memory/memory.c) runs in the executable's smoke test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ARENA_MAX,
  MMAP_THRESHOLD,
  allocatorSettings,
  trimAllocatorEvery,
  tuneAllocator,
} from '../../src/sea/memory';

function recordingAddon(answer = true) {
  const calls: Array<[string, ...number[]]> = [];
  return {
    calls,
    tune: (arenaMax: number, threshold: number) => (calls.push(['tune', arenaMax, threshold]), answer),
    trim: () => (calls.push(['trim']), true),
  };
}

test('the settings are applied through the addon when the environment names none', () => {
  const addon = recordingAddon();
  assert.equal(tuneAllocator(addon, { PATH: '/usr/bin' }), true);
  assert.deepEqual(addon.calls, [['tune', ARENA_MAX, MMAP_THRESHOLD]]);
  assert.equal(allocatorSettings(), 'glibc arena_max=2 mmap_threshold=131072');
});

test("GLIBC_TUNABLES in the environment, even empty, keeps the operator's allocator settings", () => {
  for (const value of ['', 'glibc.malloc.arena_max=8']) {
    const addon = recordingAddon();
    assert.equal(tuneAllocator(addon, { GLIBC_TUNABLES: value }), false);
    assert.deepEqual(addon.calls, []);
  }
});

test('without the addon (npm start) or where mallopt refuses, nothing is claimed', () => {
  assert.equal(tuneAllocator(undefined, {}), false);
  assert.equal(tuneAllocator({ tune: 'no' }, {}), false);
  assert.equal(tuneAllocator(recordingAddon(false), {}), false);
});

test('the trim runs on its interval until stopped, and not at all without the addon', async () => {
  const addon = recordingAddon();
  const stop = trimAllocatorEvery(addon, 5);
  await new Promise((resolve) => setTimeout(resolve, 60));
  stop();
  const trims = addon.calls.length;
  assert.ok(trims >= 2, `trimmed ${trims} times in 60 ms`);
  await new Promise((resolve) => setTimeout(resolve, 30));
  assert.equal(addon.calls.length, trims);
  trimAllocatorEvery(undefined, 5)(); // a no-op stop
});
