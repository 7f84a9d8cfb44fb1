// The storage under the metric writer's window (model/window/window.ts): columns of numbers instead of an
// object per group and per row. A window lives for a second or more, long enough for its objects
// to be promoted out of V8's young generation; a few large arrays cost the garbage collector
// almost nothing, where a hundred thousand small objects cost it a third of the writer's time.

/** Integer keys (0 <= key < 2^53) to dense slots 0..size-1, by open addressing. */
export class SlotTable {
  private keys: Float64Array;
  private slots: Int32Array;
  private mask: number;
  size = 0;

  constructor(capacity = 1024) {
    this.keys = new Float64Array(capacity);
    this.slots = new Int32Array(capacity).fill(-1);
    this.mask = capacity - 1;
  }

  /** Forgets every key (the arrays are kept for the next use). */
  reset(): void {
    this.slots.fill(-1);
    this.size = 0;
  }

  /** The slot of `key`, or -1. */
  find(key: number): number {
    let i = hash(key) & this.mask;
    for (;;) {
      const slot = this.slots[i]!;
      if (slot < 0 || this.keys[i] === key) return slot;
      i = (i + 1) & this.mask;
    }
  }

  /** The slot of `key`; a missing key gets the next slot (`size - 1` afterwards). */
  add(key: number): number {
    if ((this.size + 1) * 2 > this.slots.length) this.grow();
    let i = hash(key) & this.mask;
    for (;;) {
      const slot = this.slots[i]!;
      if (slot < 0) {
        this.keys[i] = key;
        this.slots[i] = this.size;
        return this.size++;
      }
      if (this.keys[i] === key) return slot;
      i = (i + 1) & this.mask;
    }
  }

  private grow(): void {
    const { keys, slots } = this;
    this.keys = new Float64Array(keys.length * 2);
    this.slots = new Int32Array(slots.length * 2).fill(-1);
    this.mask = this.slots.length - 1;
    for (let i = 0; i < slots.length; i++) {
      if (slots[i]! < 0) continue;
      let j = hash(keys[i]!) & this.mask;
      while (this.slots[j]! >= 0) j = (j + 1) & this.mask;
      this.keys[j] = keys[i]!;
      this.slots[j] = slots[i]!;
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

/** A growable column of 32-bit integers (-1 filled). */
export class IntColumn {
  data = new Int32Array(1024).fill(-1);

  /** Makes index `i` addressable. */
  reach(i: number): void {
    if (i < this.data.length) return;
    const bigger = new Int32Array(Math.max(this.data.length * 2, i + 1)).fill(-1);
    bigger.set(this.data);
    this.data = bigger;
  }
}
