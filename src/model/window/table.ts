// The storage under the metric writer's window (model/window/window.ts): columns of numbers instead of an
// object per group and per row. A window lives for a second or more, long enough for its objects
// to be promoted out of V8's young generation; a few large arrays cost the garbage collector
// almost nothing, where a hundred thousand small objects cost it a third of the writer's time.

/**
 * Integer keys (0 <= key < 2^53) to int values, by open addressing: each key and its value side by
 * side in one array, so that a probe reads one cache line, not one in a column of keys and another
 * in a column of values (a window's table of groups is hit by every point, each time in another
 * place of a few megabytes: the probe is its largest cost).
 */
export class SlotTable {
  /** per place: the key, then its value (-1: the place is free) */
  private entries: Float64Array;
  private mask: number;
  /** keys held */
  size = 0;

  constructor(capacity = 1024) {
    this.entries = new Float64Array(2 * capacity).fill(-1);
    this.mask = capacity - 1;
  }

  /** Forgets every key (the array is kept for the next use). */
  reset(): void {
    this.entries.fill(-1);
    this.size = 0;
  }

  /** The value of `key`, or -1. */
  find(key: number): number {
    const entries = this.entries;
    let i = hash(key) & this.mask;
    for (;;) {
      const value = entries[2 * i + 1]!;
      if (value === -1) return -1;
      if (entries[2 * i] === key) return value < 0 ? -1 : value;
      i = (i + 1) & this.mask;
    }
  }

  /** The value of `key`; a missing key gets the next dense value, `size` (`size - 1` afterwards). */
  add(key: number): number {
    const at = this.place(key);
    const value = this.entries[at]!;
    if (value >= 0) return value;
    return (this.entries[at] = this.size - 1);
  }

  /**
   * Where the value of `key` is kept (for `valueAt` and `setValue`), the key taken in with the
   * value -1 when missing. Valid until the next call (the table may grow).
   */
  place(key: number): number {
    if ((this.size + 1) * 2 > this.entries.length / 2) this.grow();
    const entries = this.entries;
    let i = hash(key) & this.mask;
    for (;;) {
      if (entries[2 * i + 1] === -1) {
        // free: the key takes it, its value to be set (-2 until then: taken, no value)
        entries[2 * i] = key;
        entries[2 * i + 1] = -2;
        this.size++;
        return 2 * i + 1;
      }
      if (entries[2 * i] === key) return 2 * i + 1;
      i = (i + 1) & this.mask;
    }
  }

  /** The value kept at a place (`place`), -1 when none was set yet. */
  valueAt(at: number): number {
    const value = this.entries[at]!;
    return value < 0 ? -1 : value;
  }

  setValue(at: number, value: number): void {
    this.entries[at] = value;
  }

  private grow(): void {
    const old = this.entries;
    this.entries = new Float64Array(2 * old.length).fill(-1);
    this.mask = old.length - 1;
    for (let i = 1; i < old.length; i += 2) {
      if (old[i] === -1) continue;
      const key = old[i - 1]!;
      let j = hash(key) & this.mask;
      while (this.entries[2 * j + 1] !== -1) j = (j + 1) & this.mask;
      this.entries[2 * j] = key;
      this.entries[2 * j + 1] = old[i]!;
    }
  }
}

function hash(key: number): number {
  const low = (key % 4_294_967_296) | 0;
  const high = (key / 4_294_967_296) | 0;
  let h = Math.imul(low ^ Math.imul(high, 0x27d4eb2d), 0x9e3779b1);
  h ^= h >>> 15;
  return Math.imul(h, 0x85ebca6b) ^ (h >>> 13);
}

/** A growable column of doubles (values, sums, counts). */
export class DoubleColumn {
  data: Float64Array;
  length = 0;

  constructor(capacity = 1024) {
    this.data = new Float64Array(capacity);
  }

  /** Room for `n` more at the end; returns where they start (zeroed). */
  alloc(n: number): number {
    if (this.length + n > this.data.length) {
      const bigger = new Float64Array(Math.max(this.data.length * 2, this.length + n));
      bigger.set(this.data.subarray(0, this.length));
      this.data = bigger;
    }
    const at = this.length;
    this.length += n;
    this.data.fill(0, at, at + n); // a column used before holds old numbers there
    return at;
  }

  reset(): void {
    this.length = 0;
  }
}
