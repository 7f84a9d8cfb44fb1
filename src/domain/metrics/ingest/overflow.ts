// SPEC 5.2: a track whose sum would leave the finite range of a double is refused whole (422,
// nothing of the point or its batch stored), also when the overflow only shows against the
// stored value. Checking every leaf against its stored value would cost a read per bucket, so:
// - a leaf of magnitude below LARGE added to one below LARGE cannot overflow (2^991 < 2^1024, and
//   reaching 2^1024 from values below 2^990 would take 2^34 tracks of one leaf); every leaf that
//   takes a value of LARGE or more is marked (in memory and in metric_large_leaves) for good;
// - a request touching a marked leaf or bringing a large value goes through one lane: it waits for
//   every point accepted before it to be in the store (the queue's drain), is checked against the
//   stored values bucket by bucket, and is enqueued only if every sum stays finite. A refusal fails
//   this request alone; the requests of its group commit never see it.
import { invalid } from '../../../errors';
import type { MetricStore } from '../../../drivers/types';
import type { LargeLeaf } from '../../../model/write-set';
import { parseTree } from '../../../model/leaves';
import type { ValidPoint } from './points';
import type { SourcePlan } from '../../../model/plan';
import { type WirePoints, decodePoints } from '../../../model/point-wire';

export const LARGE = 2 ** 990;

export interface LargeLeavesStore {
  all(): LargeLeaf[];
  add(leaf: LargeLeaf): void;
}

/** What a checked write needs. */
export interface CheckedWrite {
  plan: SourcePlan;
  store: MetricStore;
  /** a batch names the refused point `points[i]` */
  batch: boolean;
  /** resolves once every point taken before is in the store */
  drain(): Promise<void>;
  /** enqueues the points; resolves once they are durable */
  write(): Promise<void>;
}

const isLarge = (v: number) => v >= LARGE || v <= -LARGE;
const noop = () => undefined;

/** Whether any value is large: the lower and upper bounds of the values, four at a time. */
function anyLarge(values: Float64Array): boolean {
  const n = values.length;
  let low = 0;
  let high = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const a = values[i]!;
    const b = values[i + 1]!;
    const c = values[i + 2]!;
    const d = values[i + 3]!;
    const hi = a > b ? a : b;
    const hj = c > d ? c : d;
    const li = a < b ? a : b;
    const lj = c < d ? c : d;
    if (hi > high) high = hi;
    if (hj > high) high = hj;
    if (li < low) low = li;
    if (lj < low) low = lj;
  }
  for (; i < n; i++) if (isLarge(values[i]!)) return true;
  return high >= LARGE || low <= -LARGE;
}

export class OverflowGuard {
  private readonly marked = new Map<string, Set<string>>();
  private lane: Promise<unknown> = Promise.resolve();

  constructor(private readonly repo?: LargeLeavesStore) {
    for (const leaf of repo?.all() ?? []) this.remember(leaf);
  }

  /** True when a point brings a large value or touches a marked leaf. */
  needsCheck(sourceId: string, points: readonly ValidPoint[]): boolean {
    for (const p of points) {
      const marked = this.marked.size > 0 ? this.marked.get(`${sourceId}\u0000${p.key}`) : undefined;
      for (let i = 0; i < p.values.length; i++) {
        if (isLarge(p.values[i]!) || marked?.has(p.paths[i]!)) return true;
      }
    }
    return false;
  }

  /** needsCheck for a batch parser's wire: its values are scanned, its points decoded only if leaves are marked. */
  needsCheckWire(sourceId: string, wire: WirePoints): boolean {
    if (anyLarge(wire.values)) return true;
    if (this.marked.size === 0) return false;
    return (
      wire.keys.some((key) => this.marked.has(`${sourceId}\u0000${key}`)) &&
      this.needsCheck(sourceId, decodePoints(wire))
    );
  }

  /** Checks the points against the stored values, one request at a time; then writes them. */
  checked(points: readonly ValidPoint[], w: CheckedWrite): Promise<void> {
    const enqueued = this.lane.then(async () => {
      this.markLarge(w.plan.sourceId, points);
      await w.drain();
      await this.verify(points, w);
      return { acked: w.write() };
    });
    this.lane = enqueued.then(noop, noop);
    return enqueued.then((r) => r.acked);
  }

  private remember(leaf: LargeLeaf): boolean {
    const id = `${leaf.sourceId}\u0000${leaf.key}`;
    let paths = this.marked.get(id);
    if (!paths) this.marked.set(id, (paths = new Set()));
    if (paths.has(leaf.path)) return false;
    paths.add(leaf.path);
    return true;
  }

  private markLarge(sourceId: string, points: readonly ValidPoint[]): void {
    for (const p of points) {
      for (let i = 0; i < p.values.length; i++) {
        if (!isLarge(p.values[i]!)) continue;
        const leaf = { sourceId, key: p.key, path: p.paths[i]! };
        if (this.remember(leaf)) this.repo?.add(leaf);
      }
    }
  }

  /** Replays the marked leaves of the points over the stored values; 422 at the first overflow. */
  private async verify(points: readonly ValidPoint[], w: CheckedWrite): Promise<void> {
    const current = new Map<string, number>();
    for (let n = 0; n < points.length; n++) {
      const p = points[n]!;
      const marked = this.marked.get(`${w.plan.sourceId}\u0000${p.key}`);
      if (!marked) continue;
      for (let i = 0; i < p.paths.length; i++) {
        const path = p.paths[i]!;
        if (!marked.has(path)) continue;
        for (const g of w.plan.granularities) {
          const bucket = g.bucketer(p.atMs);
          if (!Number.isFinite(bucket)) continue;
          const id = `${g.text}\u0000${bucket}\u0000${p.key}\u0000${path}`;
          const before = current.get(id) ?? (await this.stored(w, p.key, g.text, bucket, path));
          const after = p.assert ? p.values[i]! : before + p.values[i]!;
          if (!Number.isFinite(after)) {
            const field = w.batch ? `points[${n}].values` : 'values';
            throw invalid({ [field]: [`track of ${path} would leave the finite range of a double`] });
          }
          current.set(id, after);
        }
      }
    }
  }

  private async stored(
    w: CheckedWrite,
    key: string,
    granularity: string,
    bucket: number,
    path: string,
  ): Promise<number> {
    const [text] = await w.store.read({ sourceId: w.plan.sourceId, key, granularity }, [bucket]);
    let node: unknown = parseTree(text);
    for (const segment of path.split('.')) {
      node =
        typeof node === 'object' && node !== null && Object.hasOwn(node, segment)
          ? (node as Record<string, unknown>)[segment]
          : undefined;
    }
    return typeof node === 'number' ? node : 0;
  }
}
