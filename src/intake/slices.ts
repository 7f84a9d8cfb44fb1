// Large intake bodies are parsed and mapped in bounded slices, the event loop free between them
// (docs/intake.md "Large bodies"): a 10 MB body then delays other requests by one slice at a time,
// not by its whole parse. Bodies up to SLICED_ABOVE take the synchronous path, unchanged.

/** Bodies larger than this (bytes) are parsed and mapped in slices. */
export const SLICED_ABOVE = 256 * 1024;
/** Bytes (or characters) of a body handled between two turns of the event loop. */
export const SLICE_BYTES = 64 * 1024;
/** Samples mapped to points between two turns. */
export const SLICE_SAMPLES = 500;

/** Lets the event loop run what is waiting (other requests, timers) before going on. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
