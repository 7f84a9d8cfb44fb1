// Whole answers of recent series reads (GET /api/v1/metrics, the interface's series, share links),
// kept while their series is unchanged. A dashboard on auto-refresh, or a wall of screens showing
// one dashboard, reads the same ranges again and again while data streams into other keys: a kept
// answer is sent as it is (with its compressed forms, http/middleware/compress.ts) instead of
// reading 8,760 rows, writing 1 MB of JSON and compressing it again.
//
// When an answer is current. The store's change mark of the key (MetricStore.changeMark) moves on
// after an append of the key is visible to reads and before the append is acknowledged; the read
// takes the mark before it reads, and the answer is kept under that mark. An acknowledged append
// either moved the mark before the read took it (then the read saw it) or after (then the kept
// answer's mark is no longer the store's, and it is never served again). The same holds for the
// other things an answer depends on: the retention sweep's deletions move the cache's epoch
// (forget), and the enabled transponders are compared by identity (their repo makes a new list
// on any change). Zone, week start, granularity and bucket range are part of the answer's name.
// Only stores that know every writer of their rows have a mark: database sources are always read.
import type { Transponder } from '../../storage/transponders';

/** For GET /metrics: answers sent from the cache, answers read, and what it holds. */
export interface AnswerStats {
  hits: number;
  misses: number;
  entries: number;
  bytes: number;
}

interface Kept {
  mark: string;
  epoch: number;
  transponders: readonly Transponder[];
  render: unknown;
  body: Buffer;
}

/** Answers above this share of the cache are not kept (a few large answers would evict the rest). */
const LARGEST_SHARE = 4;
const MAX_ENTRIES = 4096;

export class AnswerCache {
  private readonly kept = new Map<string, Kept>();
  private bytes = 0;
  private epochNow = 0;
  private hits = 0;
  private misses = 0;

  constructor(private readonly maxBytes: number) {}

  /** The cache's epoch: taken before a read, with the mark. */
  get epoch(): number {
    return this.epochNow;
  }

  /** The answer kept under `name`, if it was read under this mark, epoch, transponders and render. */
  get(
    name: string,
    mark: string,
    epoch: number,
    transponders: readonly Transponder[],
    render: unknown,
  ): Buffer | undefined {
    const kept = this.kept.get(name);
    if (
      !kept ||
      kept.mark !== mark ||
      kept.epoch !== epoch ||
      kept.transponders !== transponders ||
      kept.render !== render
    ) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // most recently used last
    this.kept.delete(name);
    this.kept.set(name, kept);
    return kept.body;
  }

  set(name: string, kept: Kept): void {
    if (kept.epoch !== this.epochNow) return; // the sweep deleted rows while it was read
    if (kept.body.length * LARGEST_SHARE > this.maxBytes) return;
    const old = this.kept.get(name);
    if (old) {
      this.kept.delete(name);
      this.bytes -= old.body.length;
    }
    this.kept.set(name, kept);
    this.bytes += kept.body.length;
    for (const [oldest, entry] of this.kept) {
      if (this.bytes <= this.maxBytes && this.kept.size <= MAX_ENTRIES) break;
      this.kept.delete(oldest);
      this.bytes -= entry.body.length;
    }
  }

  /** Forgets every answer (stored rows were deleted). */
  forget(): void {
    this.epochNow++;
    this.kept.clear();
    this.bytes = 0;
  }

  stats(): AnswerStats {
    return { hits: this.hits, misses: this.misses, entries: this.kept.size, bytes: this.bytes };
  }
}
