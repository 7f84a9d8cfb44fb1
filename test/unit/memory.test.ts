// The single executable's memory settings (src/sea/memory.ts): when they are applied. The addon
// itself (src/sea/memory/memory.c) runs in the executable's smoke test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ARENA_MAX,
  MMAP_THRESHOLD,
  allocatorSettings,
  releaseExecutablePages,
  residentFileBytes,
  trimAllocatorEvery,
  tuneAllocator,
} from '../../src/sea/memory';

function recordingAddon(answer = true) {
  const calls: Array<[string, ...number[]]> = [];
  return {
    calls,
    tune: (arenaMax: number, threshold: number) => (calls.push(['tune', arenaMax, threshold]), answer),
    trim: () => (calls.push(['trim']), true),
    releaseExecutable: () => (calls.push(['releaseExecutable']), Promise.resolve(120 * 1024 * 1024)),
  };
}

test('the settings are applied through the addon when the environment names none', () => {
  const addon = recordingAddon();
  assert.equal(tuneAllocator(addon, { PATH: '/usr/bin' }), true);
  assert.deepEqual(addon.calls, [['tune', ARENA_MAX, MMAP_THRESHOLD]]);
  assert.equal(allocatorSettings(), 'glibc arena_max=2 mmap_threshold=131072');
});

test('GLIBC_TUNABLES in the environment, even empty, keeps the operator\'s allocator settings', () => {
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

test('the executable release reports what it advised and the resident file pages around it', async () => {
  const addon = recordingAddon();
  const readings = [80 * 1024 * 1024, 20 * 1024 * 1024];
  const released = await releaseExecutablePages(addon, () => readings.shift()!);
  assert.deepEqual(addon.calls, [['releaseExecutable']]);
  assert.deepEqual(released, { advised: 120 * 1024 * 1024, residentBefore: 80 * 1024 * 1024, residentAfter: 20 * 1024 * 1024 });
  assert.equal(await releaseExecutablePages(undefined), null); // npm start: no addon, nothing claimed
  assert.equal(await releaseExecutablePages({ tune: () => true, trim: () => true }), null); // an addon without it
});

test('the resident file pages are read from the RssFile line, and unknown elsewhere', () => {
  const status = 'Name:\tservice\nVmRSS:\t  136392 kB\nRssAnon:\t   58856 kB\nRssFile:\t   77536 kB\nRssShmem:\t       0 kB\n';
  assert.equal(residentFileBytes(() => status), 77536 * 1024);
  assert.equal(residentFileBytes(() => 'VmRSS:\t 1 kB\n'), null);
  assert.equal(residentFileBytes(() => { throw new Error('ENOENT'); }), null);
  if (process.platform === 'linux') assert.ok(residentFileBytes()! > 0, 'this process maps node itself');
});
