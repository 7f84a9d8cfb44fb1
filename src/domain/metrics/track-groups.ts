// Summing tracks before they are spread over the granularities (merge.ts): points of one key that
// share every bucket form a TrackGroup; when the groups are spread, consecutive groups that share
// one granularity's bucket and their leaf paths are summed again in a SlotRun, so a bucket that
// every group shares (an hour, a day, ...) is written once instead of once per group.
import type { ValidPoint } from './ingest';

export function samePaths(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Tracks of one key that fell into the same bucket of every granularity, summed. */
export class TrackGroup {
  /** the leaf paths of the first point; points with the same paths (the usual case) sum by index */
  private readonly paths: readonly string[];
  private readonly sums: number[];
  private other: Map<string, number> | null = null;
  tracked = 0;
  untracked = 0;

  constructor(readonly buckets: readonly number[], first: ValidPoint) {
    this.paths = first.paths;
    this.sums = first.paths.map(() => 0);
  }

  add(point: ValidPoint): void {
    if (point.untracked) this.untracked++;
    else this.tracked++;
    const { paths, values } = point;
    if (paths === this.paths || samePaths(paths, this.paths)) {
      for (let i = 0; i < values.length; i++) this.sums[i]! += values[i]!;
      return;
    }
    const other = (this.other ??= new Map());
    for (let i = 0; i < paths.length; i++) other.set(paths[i]!, (other.get(paths[i]!) ?? 0) + values[i]!);
  }

  /** The summed leaves (the group's own arrays: read, never change them). */
  leaves(): [readonly string[], readonly number[]] {
    if (!this.other) return [this.paths, this.sums];
    const merged = new Map(this.other);
    this.paths.forEach((p, i) => merged.set(p, (merged.get(p) ?? 0) + this.sums[i]!));
    return [[...merged.keys()], [...merged.values()]];
  }
}

export function sameBuckets(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Consecutive track groups summed for one granularity: they share its bucket and their paths. */
export class SlotRun {
  bucket = Number.NaN;
  paths: readonly string[] = [];
  readonly sums: number[] = [];
  tracked = 0;
  untracked = 0;

  get open(): boolean {
    return !Number.isNaN(this.bucket);
  }

  matches(bucket: number, paths: readonly string[]): boolean {
    return this.bucket === bucket && (this.paths === paths || samePaths(this.paths, paths));
  }

  start(bucket: number, paths: readonly string[], values: readonly number[], tracked: number, untracked: number): void {
    this.bucket = bucket;
    this.paths = paths;
    this.sums.length = 0;
    for (let i = 0; i < values.length; i++) this.sums.push(values[i]!);
    this.tracked = tracked;
    this.untracked = untracked;
  }

  add(values: readonly number[], tracked: number, untracked: number): void {
    for (let i = 0; i < values.length; i++) this.sums[i]! += values[i]!;
    this.tracked += tracked;
    this.untracked += untracked;
  }

  close(): void {
    this.bucket = Number.NaN;
  }
}
