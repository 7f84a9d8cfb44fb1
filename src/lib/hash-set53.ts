// A set of hash53 values (lib/key-hash.ts): open addressing with linear probing over a
// Float64Array, grown to twice its size whenever it would be more than half full; 0 marks a free
// slot (a hash of 0 is held in a flag of its own). A Set<number> of such hashes costs far more per
// look-up: a number past 2^31 is a heap number there, hashed and compared as one; here the doubles
// stay unboxed. A hash's first slot is seeded per process (slotOf): hash53 is not, and a sender
// who could choose keys sharing a slot would make every look-up of its source walk them all.

import { randomBytes } from 'node:crypto';

const FIRST_SLOTS = 1024;

/** Mixed with each process's own random number, so that no sender can choose keys that share a slot. */
const SEED = randomBytes(4).readUInt32LE(0);

/**
 * A hash53's first slot in a table of mask + 1 (a power of two, at least 2) slots: the top bits of
 * its low 32 bits, seeded, times an odd number (they depend on all 32, where the low bits of a
 * product depend only on the low bits of the hash).
 */
export function slotOf(hash: number, mask: number): number {
  return Math.imul((hash >>> 0) ^ SEED, 0x9e3779b1) >>> Math.clz32(mask);
}

export class HashSet53 {
  private table: Float64Array;
  private mask: number;
  private count = 0;
  /** whether the hash 0 is held (0 marks free slots in the table) */
  private zero = false;

  constructor(expected = 0) {
    let slots = FIRST_SLOTS;
    while (slots < expected * 2) slots *= 2;
    this.table = new Float64Array(slots);
    this.mask = slots - 1;
  }

  /** How many hashes the set holds. */
  get size(): number {
    return this.count;
  }

  /** Whether `hash` (an integer in [0, 2^53)) is in the set. */
  has(hash: number): boolean {
    if (hash === 0) return this.zero;
    const table = this.table;
    const mask = this.mask;
    let i = slotOf(hash, mask);
    for (;;) {
      const held = table[i]!;
      if (held === hash) return true;
      if (held === 0) return false;
      i = (i + 1) & mask;
    }
  }

  /** Adds `hash`; true when it was not held before. */
  add(hash: number): boolean {
    if (hash === 0) {
      if (this.zero) return false;
      this.zero = true;
      this.count++;
      return true;
    }
    const table = this.table;
    const mask = this.mask;
    let i = slotOf(hash, mask);
    for (;;) {
      const held = table[i]!;
      if (held === hash) return false;
      if (held === 0) break;
      i = (i + 1) & mask;
    }
    table[i] = hash;
    this.count++;
    if (this.count * 2 > table.length) this.grow();
    return true;
  }

  private grow(): void {
    const old = this.table;
    const table = new Float64Array(old.length * 2);
    const mask = table.length - 1;
    for (let j = 0; j < old.length; j++) {
      const hash = old[j]!;
      if (hash === 0) continue;
      let i = slotOf(hash, mask);
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = hash;
    }
    this.table = table;
    this.mask = mask;
  }
}
