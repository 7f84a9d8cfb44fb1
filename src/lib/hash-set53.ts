// A set of hash53 values (lib/key-hash.ts): open addressing with linear probing over a
// Float64Array, the slot taken from a hash's low bits (the hashes are uniform), grown to twice its
// size whenever it would be more than half full. A Set<number> of such hashes costs far more per
// look-up: a number past 2^31 is a heap number there, hashed and compared as one. This one keeps
// the doubles unboxed in the table; 0 marks a free slot (a hash of 0 is held in a flag of its own).

const FIRST_SLOTS = 1024;

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
    let i = (hash >>> 0) & mask;
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
    let i = (hash >>> 0) & mask;
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
      let i = (hash >>> 0) & mask;
      while (table[i] !== 0) i = (i + 1) & mask;
      table[i] = hash;
    }
    this.table = table;
    this.mask = mask;
  }
}
