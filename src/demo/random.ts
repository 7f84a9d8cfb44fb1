// Deterministic noise for the demo data. Every draw is a hash of (seed, time slot, stream), not a
// step of a running generator, so the value of a given minute is the same whichever range is
// generated and in whatever order: the live ticker and the 30-day back-fill agree, and a test can
// regenerate one slot and compare.

/** 32-bit mix of a few integers (a murmur3-style finaliser over a running hash). */
function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part | 0), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A source of draws for one time slot: `uniform(stream)` is fixed for (seed, slot, stream). */
export class SlotRandom {
  private counter = 0;
  constructor(
    private readonly seed: number,
    private readonly slot: number,
  ) {}

  /** Uniform in [0, 1); each call takes the next stream of this slot. */
  next(): number {
    this.counter += 1;
    return mix(this.seed, this.slot, this.slot / 4294967296, this.counter) / 4294967296;
  }

  /** Standard normal (Box-Muller). */
  normal(): number {
    const u = Math.max(this.next(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /** Poisson count with mean `lambda` (Knuth for small means, a rounded normal for large ones). */
  poisson(lambda: number): number {
    if (lambda <= 0) return 0;
    if (lambda > 40) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * this.normal()));
    const limit = Math.exp(-lambda);
    let k = 0;
    let p = this.next();
    while (p > limit) {
      k += 1;
      p *= this.next();
    }
    return k;
  }

  /** Log-normal around `median` with shape `sigma`. */
  logNormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }

  /** An index drawn with the given weights (they need not sum to 1). */
  pick(weights: readonly number[]): number {
    const total = weights.reduce((a, b) => a + b, 0);
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i]!;
      if (r < 0) return i;
    }
    return weights.length - 1;
  }

  /** Splits `n` events over categories by weight (one multinomial draw; small n event by event). */
  split(n: number, weights: readonly number[]): number[] {
    const counts = weights.map(() => 0);
    if (n <= 60) {
      for (let i = 0; i < n; i++) counts[this.pick(weights)]! += 1;
      return counts;
    }
    // Large n: expected shares with a little noise, the rest to the largest category.
    const total = weights.reduce((a, b) => a + b, 0);
    let left = n;
    let largest = 0;
    weights.forEach((w, i) => {
      if (w > weights[largest]!) largest = i;
      const mean = (n * w) / total;
      const c = Math.max(0, Math.min(left, Math.round(mean + Math.sqrt(mean) * this.normal() * 0.8)));
      counts[i] = c;
      left -= c;
    });
    counts[largest]! += left; // each draw was capped by what was left, so left >= 0
    return counts;
  }
}
