// Shared helpers for the granularity tests: inputs and outputs as RFC 3339 strings, so every
// expectation in the tests is a literal written by hand.

import assert from 'node:assert/strict';
import {
  bucketRange,
  floorToBucket,
  formatBucket,
  nextBucket,
  parseGranularity,
  type Calendar,
  type Granularity,
} from '../../src/model/time/granularity';
import { parseTimestamp } from '../../src/shared/time';

export const cal = (timeZone: string, beginningOfWeek = 1): Calendar => ({ timeZone, beginningOfWeek });
export const UTC = cal('UTC');

export function gran(text: string): Granularity {
  const g = parseGranularity(text);
  assert.ok(g, `granularity ${text}`);
  return g;
}

export function ms(text: string): number {
  const value = parseTimestamp(text);
  assert.notEqual(value, null, `timestamp ${text}`);
  return value as number;
}

/** Formatted start of the bucket holding `at`. */
export const floorOf = (at: string, g: string, c: Calendar = UTC) =>
  formatBucket(floorToBucket(ms(at), gran(g), c), c.timeZone);

/** Formatted start of the bucket after the one holding `at`. */
export const nextOf = (at: string, g: string, c: Calendar = UTC) =>
  formatBucket(nextBucket(ms(at), gran(g), c), c.timeZone);

/** Formatted bucket starts from..to. */
export function rangeOf(from: string, to: string, g: string, c: Calendar = UTC, max = 10_000): string[] {
  const starts = bucketRange(ms(from), ms(to), gran(g), c, max);
  assert.ok(starts, `range ${from}..${to} ${g} exceeded ${max}`);
  return starts.map((start) => formatBucket(start, c.timeZone));
}

/** Deterministic PRNG (mulberry32) for the randomised agreement tests. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = Math.imul(state ^ (state >>> 15), 1 | state);
    x ^= x + Math.imul(x ^ (x >>> 7), 61 | x);
    return ((x ^ (x >>> 14)) >>> 0) / 4_294_967_296;
  };
}
