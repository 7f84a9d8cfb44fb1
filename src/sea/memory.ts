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
// The executable's own file pages (Node's code, ICU's data, the embedded script and assets) are
// left to the kernel: they count in RSS but are no private memory; the kernel reads them in when
// touched and drops the clean ones by itself when memory runs short (docs/operations.md, "Memory").
export const ARENA_MAX = 2;
export const MMAP_THRESHOLD = 128 * 1024;

/** The settings as the start-up log line names them. */
export const allocatorSettings = () => `glibc arena_max=${ARENA_MAX} mmap_threshold=${MMAP_THRESHOLD}`;

type MemoryAddon = {
  tune(arenaMax: number, mmapThreshold: number): boolean;
  trim(): boolean;
};

const isAddon = (addon: unknown): addon is MemoryAddon =>
  typeof addon === 'object' &&
  addon !== null &&
  ['tune', 'trim'].every((name) => typeof (addon as Record<string, unknown>)[name] === 'function');

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
