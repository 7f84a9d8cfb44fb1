// The single executable's memory settings on Linux (docs/operations.md, "Memory"), through its
// memory addon (memory/memory.c).
//
// The allocator, with glibc. Under sustained ingest every thread that allocates (event loop,
// metric writer, checkpointer) gets an arena that keeps the memory it freed, and glibc keeps large
// freed blocks for reuse: the resident size grows 30-50 MB beyond what is in use. The executable
// caps the arenas at two and fixes the mmap threshold (large blocks go back to the system when
// freed) with mallopt(3) before the server starts its threads, and once a second hands the free
// pages of every arena back (malloc_trim(3), 1-4 ms of the event loop under load). Outside the
// executable there is no addon; GLIBC_TUNABLES in the environment sets the first two.
//
// Its own file. Start-up reads much of the 130 MB executable (Node's code, ICU's data, the
// embedded script and assets, the V8 snapshot of each thread) and those pages stay resident, 70-80
// MB of an idle server's RSS, though serving touches 15-40 MB of them. Once the server is up, the
// addon hands back the pages of the executable's read-only mappings that only this process maps
// (madvise MADV_PAGEOUT, on a thread of the pool); what serving needs is read in again as it is
// touched. The kernel does so only for a file the process could write (its owner, or root): an
// executable installed by root and run by another user keeps its pages.
import { readFileSync } from 'node:fs';

export const ARENA_MAX = 2;
export const MMAP_THRESHOLD = 128 * 1024;

/** The settings as the start-up log line names them. */
export const allocatorSettings = () => `glibc arena_max=${ARENA_MAX} mmap_threshold=${MMAP_THRESHOLD}`;

type MemoryAddon = {
  tune(arenaMax: number, mmapThreshold: number): boolean;
  trim(): boolean;
  releaseExecutable(): Promise<number>;
};

const isAddon = (addon: unknown): addon is MemoryAddon =>
  typeof addon === 'object' &&
  addon !== null &&
  ['tune', 'trim', 'releaseExecutable'].every((name) => typeof (addon as Record<string, unknown>)[name] === 'function');

/**
 * Applies the settings unless the operator chose glibc's through GLIBC_TUNABLES (any value, an
 * empty one included, keeps them as glibc set them). Returns whether they were applied.
 */
export function tuneAllocator(addon: unknown, env: Readonly<Record<string, string | undefined>>): boolean {
  if (env.GLIBC_TUNABLES !== undefined || !isAddon(addon)) return false;
  return addon.tune(ARENA_MAX, MMAP_THRESHOLD);
}

/** Hands free memory back every `ms` for as long as the process runs; returns the stop. */
export function trimAllocatorEvery(addon: unknown, ms: number): () => void {
  if (!isAddon(addon)) return () => undefined;
  const timer = setInterval(() => addon.trim(), ms);
  timer.unref();
  return () => clearInterval(timer);
}

/** The resident pages of files mapped by this process (RssFile), in bytes; null where unknown. */
export function residentFileBytes(status = () => readFileSync('/proc/self/status', 'utf8')): number | null {
  try {
    const kb = /^RssFile:\s+(\d+) kB$/m.exec(status())?.[1];
    return kb === undefined ? null : Number(kb) * 1024;
  } catch {
    return null; // not Linux
  }
}

export interface ExecutableRelease {
  /** bytes of the executable's mappings advised */
  advised: number;
  /** RssFile before and after, null where the system does not tell */
  residentBefore: number | null;
  residentAfter: number | null;
}

/** Hands back the executable's resident pages (see the top of this file); null without the addon. */
export async function releaseExecutablePages(addon: unknown, resident = residentFileBytes): Promise<ExecutableRelease | null> {
  if (!isAddon(addon)) return null;
  const residentBefore = resident();
  const advised = await addon.releaseExecutable();
  return { advised, residentBefore, residentAfter: resident() };
}
